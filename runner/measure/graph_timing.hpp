#pragma once
// CUDA-graph timing: one forward captured as a graph on a side stream, its
// replays timed with the same protocol as eager forwards. The launch gaps
// between the forward's kernels vanish, so graph and eager medians side by
// side show how much of a forward is host overhead.
#include <functional>

#include "runner/measure/case_result.hpp"
#include "runner/measure/sampling.hpp"
#include "runner/measure/timer.hpp"

namespace attnsweep {

// Sets result.graph_time_us, or result.graph_error when the work cannot be
// captured (a synchronizing op, for example). Replay samples go to result.samples.
// `before_capture`, when set, runs once on the capture stream ahead of the
// capture, uncaptured (a backward's forward, whose graph the captured backward keeps).
void time_graph(Timer& timer, const std::function<void()>& captured, const SamplingSettings& settings,
                CaseResult& result, const std::function<void()>& before_capture = {});

}  // namespace attnsweep
