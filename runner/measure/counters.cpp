#include "runner/measure/counters.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

namespace attnsweep {
namespace {

// CUPTI's metric names (the same as Nsight Compute's).
constexpr const char* kDuration = "gpu__time_duration.sum";  // ns
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kL2Sectors = "lts__t_sectors.sum";
constexpr const char* kL2HitRate = "lts__t_sector_hit_rate.pct";
constexpr const char* kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
// Hopper's tensor cores have two pipes: the warpgroup MMA (wgmma: FlashAttention-3,
// cuDNN) and the warp MMA (mma.sync: FlashAttention-2, most of cuBLAS's older
// kernels); a kernel uses one, so the counter is the busier of those the chip knows.
constexpr const char* kTensorPipes[] = {
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
};

bool is_tensor_pipe(const std::string& metric) {
  return std::any_of(std::begin(kTensorPipes), std::end(kTensorPipes), [&](const char* m) { return metric == m; });
}

void add(std::optional<double>& sum, double value) { sum = sum.value_or(0) + value; }

// Sums and weights of one set of launches (a pass, or one kernel name).
struct Accumulator {
  PassCounters out;
  double l2_hits = 0, l2_sectors = 0;   // hit rate as hits over sectors
  double sm_weighted = 0, tensor_weighted = 0, duration = 0;
  bool has_l2 = false, has_sm = false, has_tensor = false;

  void take(const std::vector<std::string>& metrics, const std::vector<double>& values) {
    ++out.launches;
    std::optional<double> duration_ns, hit_pct, sectors, sm_pct, tensor_pct;
    for (std::size_t i = 0; i < metrics.size() && i < values.size(); ++i) {
      const std::string& m = metrics[i];
      const double v = values[i];
      if (m == kDuration) duration_ns = v;
      else if (m == kDramRead) add(out.dram_read_bytes, v);
      else if (m == kDramWrite) add(out.dram_write_bytes, v);
      else if (m == kL2Sectors) sectors = v;
      else if (m == kL2HitRate) hit_pct = v;
      else if (m == kSmThroughput) sm_pct = v;
      else if (is_tensor_pipe(m)) tensor_pct = std::max(tensor_pct.value_or(0), v);
    }
    const double weight = duration_ns.value_or(0);
    if (duration_ns) add(out.kernel_us, *duration_ns / 1000.0);
    duration += weight;
    if (hit_pct && sectors) {
      has_l2 = true;
      l2_hits += *hit_pct / 100.0 * *sectors;
      l2_sectors += *sectors;
    }
    if (sm_pct) {
      has_sm = true;
      sm_weighted += *sm_pct / 100.0 * weight;
    }
    if (tensor_pct) {
      has_tensor = true;
      tensor_weighted += *tensor_pct / 100.0 * weight;
    }
  }

  PassCounters finish() const {
    PassCounters done = out;
    // Shares are kept within 0..1: CUPTI's percentages can round a hair past 100.
    const auto share = [](double value) { return std::clamp(value, 0.0, 1.0); };
    if (has_l2 && l2_sectors > 0) done.l2_hit_rate = share(l2_hits / l2_sectors);
    if (has_sm && duration > 0) done.sm_throughput = share(sm_weighted / duration);
    if (has_tensor && duration > 0) done.tensor_pipe = share(tensor_weighted / duration);
    return done;
  }
};

}  // namespace

std::vector<std::string> counter_metric_candidates(const std::vector<Counter>& counters) {
  std::vector<std::string> metrics{kDuration};
  for (Counter counter : counters) {
    switch (counter) {
      case Counter::dram_bytes: metrics.insert(metrics.end(), {kDramRead, kDramWrite}); break;
      case Counter::l2_hit_rate: metrics.insert(metrics.end(), {kL2Sectors, kL2HitRate}); break;
      case Counter::sm_throughput: metrics.emplace_back(kSmThroughput); break;
      case Counter::tensor_pipe: metrics.insert(metrics.end(), std::begin(kTensorPipes), std::end(kTensorPipes)); break;
    }
  }
  std::vector<std::string> unique;
  for (const std::string& m : metrics) {
    if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(m);
  }
  return unique;
}

CounterFigures sum_counter_launches(const std::vector<std::string>& metrics, const std::vector<CounterLaunch>& launches) {
  Accumulator pass;
  std::vector<std::string> order;
  std::map<std::string, Accumulator> per_name;
  for (const CounterLaunch& launch : launches) {
    pass.take(metrics, launch.values);
    if (!per_name.count(launch.name)) order.push_back(launch.name);
    per_name[launch.name].take(metrics, launch.values);
  }
  CounterFigures figures;
  figures.pass = pass.finish();
  for (const std::string& name : order) {
    const Accumulator& one = per_name.at(name);
    figures.kernels.push_back({name, one.out.launches, one.finish()});
  }
  return figures;
}

bool name_launches_in_order(std::vector<CounterLaunch>& launches, const std::vector<std::string>& order) {
  if (launches.empty() || launches.size() != order.size()) return false;
  for (std::size_t i = 0; i < launches.size(); ++i) launches[i].name = order[i];
  return true;
}

bool kernels_on_one_stream(const std::vector<KernelStat>& kernels) {
  std::optional<std::int64_t> stream;
  for (const KernelStat& k : kernels) {
    if (k.kind != "kernel") continue;
    if (stream && *stream != k.stream) return false;
    stream = k.stream;
  }
  return true;
}

std::string attach_kernel_counters(const CounterFigures& figures, std::vector<KernelStat>& kernels) {
  std::vector<std::string> unmatched;
  for (const KernelCounterFigures& one : figures.kernels) {
    const auto it = std::find_if(kernels.begin(), kernels.end(),
                                 [&](const KernelStat& k) { return k.kind == "kernel" && k.name == one.name; });
    if (it == kernels.end()) {
      unmatched.push_back(one.name);
      continue;
    }
    it->dram_read_bytes = one.figures.dram_read_bytes;
    it->dram_write_bytes = one.figures.dram_write_bytes;
    it->l2_hit_rate = one.figures.l2_hit_rate;
    it->sm_throughput = one.figures.sm_throughput;
    it->tensor_pipe = one.figures.tensor_pipe;
  }
  std::string text;
  for (const std::string& name : unmatched) text += (text.empty() ? "" : "; ") + name;
  return text;
}

}  // namespace attnsweep
