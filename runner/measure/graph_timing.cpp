#include "runner/measure/graph_timing.hpp"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

namespace attnsweep {

void time_graph(Timer& timer, const std::function<void()>& forward, const SamplingSettings& settings,
                CaseResult& result) {
  try {
    at::cuda::CUDAGraph graph;
    {
      c10::cuda::CUDAStreamGuard capture_stream(c10::cuda::getStreamFromPool());
      forward();  // warm up on the capture stream (workspaces, handles)
      c10::cuda::getCurrentCUDAStream().synchronize();
      graph.capture_begin();
      forward();
      graph.capture_end();
    }
    const std::vector<double> kept =
        sample_until_stop(timer, [&] { graph.replay(); }, SampleMode::graph, settings, result);
    if (!kept.empty()) result.graph_time_us = summarize(kept);
  } catch (const c10::Error& error) {
    result.graph_error = error.what_without_backtrace();
    (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
  }
}

}  // namespace attnsweep
