#include "runner/measure/graph_timing.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <c10/util/env.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "runner/common/interrupt.hpp"

namespace attnsweep {
namespace {

// Why no forward can be captured in this process, or nothing. With
// PYTORCH_NO_CUDA_MEMORY_CACHING every allocation and free is a cudaMalloc or
// cudaFree, which a capturing stream does not permit; the free happens in a
// tensor's destructor, where the error cannot be caught and ends the process
// (terminate, exit 134: issue 21, item 3). So capture is not even tried.
std::optional<std::string> capture_impossible() {
  // As the allocator itself reads it (CUDACachingAllocator: check_env == true, i.e. "1").
  if (c10::utils::check_env("PYTORCH_NO_CUDA_MEMORY_CACHING") == true) {
    return std::string("not captured: PYTORCH_NO_CUDA_MEMORY_CACHING=1") +
           " makes every allocation a cudaMalloc/cudaFree, which CUDA does not permit while a stream "
           "captures a graph; unset it to time graph replays";
  }
  return std::nullopt;
}

// Ends a capture left open by a forward that threw mid-capture, so that the
// stream (and the next case) is usable again.
void end_open_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t left = nullptr;
    if (cudaStreamEndCapture(stream, &left) == cudaSuccess && left) cudaGraphDestroy(left);
  }
  (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
}

}  // namespace

void CapturedGraph::replay() const { graph->replay(); }

std::optional<double> graph_output_difference(const std::vector<at::Tensor>& graph_outputs,
                                              const std::vector<at::Tensor>& eager_outputs) {
  if (graph_outputs.empty() || graph_outputs.size() != eager_outputs.size()) return std::nullopt;
  double worst = 0;
  for (std::size_t i = 0; i < graph_outputs.size(); ++i) {
    const at::Tensor& graph = graph_outputs[i];
    const at::Tensor& eager = eager_outputs[i];
    if (!graph.defined() || !eager.defined() || graph.sizes() != eager.sizes()) return std::nullopt;
    const at::Tensor reference = eager.to(at::kDouble);
    const double difference = (graph.to(at::kDouble) - reference).norm().item<double>();
    const double scale = reference.norm().item<double>();
    const double relative = scale > 0 ? difference / scale : difference;
    if (!std::isfinite(relative)) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, relative);
  }
  return worst;
}

std::optional<CapturedGraph> time_graph(Timer& timer, const std::function<void()>& captured,
                                        const std::function<std::vector<at::Tensor>()>& outputs,
                                        const SamplingSettings& settings, CaseResult& result,
                                        const std::function<void()>& before_capture) {
  if (const auto why = capture_impossible()) {
    result.graph_error = *why;
    return std::nullopt;
  }
  std::optional<c10::cuda::CUDAStream> capture_on;
  // No exception may leave a case: whatever the capture or the replays throw
  // becomes the case's graph_error, and the eager numbers stand.
  const auto end_capture = [&] {
    if (capture_on) end_open_capture(capture_on->stream());
  };
  const auto failed = [&](const std::string& why) {
    end_capture();
    result.graph_error = why;
  };
  try {
    capture_on = c10::cuda::getStreamFromPool();
    CapturedGraph kept;
    kept.graph = std::make_shared<at::cuda::CUDAGraph>();
    at::cuda::CUDAGraph& graph = *kept.graph;
    {
      c10::cuda::CUDAStreamGuard capture_stream(*capture_on);
      // On the capture stream, so that the autograd graph it builds runs its
      // backward there too (autograd runs a node on its forward's stream).
      if (before_capture) before_capture();
      captured();  // warm up on the capture stream (workspaces, handles)
      c10::cuda::getCurrentCUDAStream().synchronize();
      graph.capture_begin();
      captured();
      graph.capture_end();
      kept.outputs = outputs();
      for (at::Tensor& output : kept.outputs) {
        if (output.defined() && output.is_floating_point()) output.fill_(std::numeric_limits<double>::quiet_NaN());
      }
      c10::cuda::getCurrentCUDAStream().synchronize();  // the fill is on the capture stream, the replays are not
    }
    const std::vector<double> replays =
        sample_until_stop(timer, [&] { graph.replay(); }, SampleMode::graph, settings, result);
    if (replays.empty()) return std::nullopt;
    result.graph_time_us = summarize(replays);
    return kept;
  } catch (const c10::Error& error) {
    failed(error.what_without_backtrace());
  } catch (const Interrupted&) {
    end_capture();
    throw;
  } catch (const std::exception& error) {
    failed(error.what());
  } catch (...) {
    failed("the captured work threw a C++ exception that is not a std::exception");
  }
  return std::nullopt;
}

}  // namespace attnsweep
