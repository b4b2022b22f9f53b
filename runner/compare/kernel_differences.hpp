#pragma once
// Why a case changed, kernel by kernel (docs/compare.md, "Kernel differences"):
// the GPU activity of one case in two runs (rows of the `kernels` table)
// matched by kind and name. Kernels added or removed, and for a kernel in both
// runs what changed of its launches per pass, launch configuration (grid,
// block, registers, shared memory), estimated occupancy and share of the
// case's kernel time. Pure data in, pure data out: compare_runs attaches it to
// a case whose counts, backend or time changed, comparison_report prints it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/profile/profile_summary.hpp"

namespace attnsweep::compare {

// One kernel on one side, per timed pass (a forward, a backward or a training
// step: the `kernels` table's "per forward" is per pass of the case).
struct KernelSide {
  double launches_per_pass = 0;
  double time_us = 0;     // summed duration per pass
  double time_share = 0;  // of the case's kernel, memcpy and memset time per pass, 0 to 1
  std::string grid, block;  // as stored, without blanks: [8,8,16]; empty for copies and fills
  std::optional<int> registers_per_thread;
  std::optional<std::int64_t> shared_memory_bytes;
  std::optional<double> est_occupancy_pct;
};

enum class KernelChange { added, removed, changed, unchanged };
const char* to_string(KernelChange change);  // added, removed, changed, unchanged

// What of a kernel in both runs can differ, in the order the report shows it.
enum class KernelAspect { launches, grid, block, registers, shared_memory, occupancy, time_share };
const char* to_string(KernelAspect aspect);  // launches, grid, block, registers, shared_memory, occupancy, time_share

struct KernelDifference {
  std::string name;        // in full, as stored
  std::string short_name;  // for text and markdown: short_kernel_names(), unique within its case
  std::string kind;        // kernel, memcpy, memset
  KernelChange change = KernelChange::unchanged;
  std::optional<KernelSide> baseline, candidate;  // empty on the side it is missing from
  std::vector<KernelAspect> aspects;              // what differs (changed kernels only)

  bool differs(KernelAspect aspect) const;
};

struct KernelDifferenceSettings {
  // A kernel's share of the case's kernel time moving by more than this
  // (0.05: five percentage points) is a change; smaller moves are noise.
  double share_change = 0.05;
  // When no kernel differs (a time change alone), the kernels listed: the
  // largest by the candidate's time share.
  std::size_t top_by_time = 3;
  // Short names for text and markdown aim at this many characters.
  std::size_t short_name_width = 80;
};

struct KernelDifferences {
  // Added, removed and changed kernels, the largest share (on either side)
  // first; or, when none differs, the top kernels by time share (top_by_time).
  std::vector<KernelDifference> kernels;
  bool top_by_time = false;
  int added = 0, removed = 0, changed = 0, unchanged = 0;  // over every kernel of the case
  std::size_t baseline_rows = 0, candidate_rows = 0;       // rows of the `kernels` table per side
  double baseline_time_us = 0, candidate_time_us = 0;      // the case's activity time per pass
  // Why nothing is listed although rows were compared, or empty: a side
  // without any kernel rows (no profile stored) is not "every kernel added".
  std::string missing;
};

// The differences of one case's rows between the baseline and the candidate.
KernelDifferences kernel_differences(const std::vector<KernelStat>& baseline, const std::vector<KernelStat>& candidate,
                                     const KernelDifferenceSettings& settings = {});

// A kernel's name as a reader can take it in: without its return type,
// parameter list, namespaces, lambdas and the parameters of functors named in
// its template arguments, then cut after the last template argument that
// still fits in `width` characters, its brackets closed and "..." where
// arguments are left out (the first arguments tell kernels apart most often:
// tile sizes, vector widths, dtypes):
//   void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4,
//     false, false, cutlass::bfloat16_t, ...>, false, true, ...>(pytorch_flash::Flash_fwd_params)
//   -> flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, ...>, ...>
// A name without template arguments or parameters (cuDNN's, cuBLAS's, nvjet's,
// "Memset (Device)") is left whole, however long.
std::string short_kernel_name(const std::string& name, std::size_t width = 80);

// short_kernel_name of each name, lengthened where two different names would
// come out the same, so that each short name still tells its kernel apart.
std::vector<std::string> short_kernel_names(const std::vector<std::string>& names, std::size_t width = 80);

}  // namespace attnsweep::compare
