#pragma once
// CUDA-graph timing: one forward captured as a graph on a side stream, its
// replays timed with the same protocol as eager forwards. The launch gaps
// between the forward's kernels vanish, so graph and eager medians side by
// side show how much of a forward is host overhead. The graph is kept for the
// profiler (a replay's kernels are counted against the forward's) and for the
// check of its output against the eager output (docs/measurement.md, "Validity").
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "runner/measure/case_result.hpp"
#include "runner/measure/sampling.hpp"
#include "runner/measure/timer.hpp"

namespace at::cuda {
struct CUDAGraph;
}

namespace attnsweep {

// A captured pass and the tensors its replays write (the output of a forward,
// dq, dk and dv of a backward): static, so every replay writes the same memory.
// The caller copies them out after the timed replays and clears `outputs`.
struct CapturedGraph {
  std::shared_ptr<at::cuda::CUDAGraph> graph;
  std::vector<at::Tensor> outputs;
  void replay() const;
};

// Sets result.graph_time_us, or result.graph_error when the work cannot be
// captured (a synchronizing op, for example). Replay samples go to result.samples.
// `before_capture`, when set, runs once on the capture stream ahead of the
// capture, uncaptured (a backward's forward, whose graph the captured backward keeps).
// `outputs` names the captured pass's results right after the capture; they are
// filled with NaN before the first replay, so a replay that skipped the kernels
// writing them cannot pass the output check with what the capture left there.
// Returns the graph when its replays were timed.
std::optional<CapturedGraph> time_graph(Timer& timer, const std::function<void()>& captured,
                                        const std::function<std::vector<at::Tensor>()>& outputs,
                                        const SamplingSettings& settings, CaseResult& result,
                                        const std::function<void()>& before_capture = {});

// ||graph - eager||_F / ||eager||_F over the tensors of both lists (float64),
// the largest; empty when the lists do not pair up. NaN when not finite.
std::optional<double> graph_output_difference(const std::vector<at::Tensor>& graph_outputs,
                                              const std::vector<at::Tensor>& eager_outputs);

}  // namespace attnsweep
