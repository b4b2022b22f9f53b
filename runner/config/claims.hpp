#pragma once
// Published figures a run is measured against (issue 37, docs/config.md
// "Claims"): a claims file lists figures from papers and vendors, each with its
// source, the GPU and software it was measured on, the case it describes and
// the figure (TFLOP/s or a time). A config names claims files (`claims: [...]`);
// load_config reads them, the plan matches each claim to a case, the store
// keeps every claim with its match. No LibTorch.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/mask.hpp"
#include "runner/common/score_mod.hpp"
#include "runner/config/shape_block.hpp"

namespace attnsweep {

// Where a figure was published: every field optional but the title.
struct ClaimSource {
  std::string title;       // "FlashAttention-3 (Shah et al., 2024)"
  std::string repository;  // "NVIDIA/cudnn-frontend"
  std::string path;        // a file of that repository
  std::string commit;      // its commit
  std::string url;
  std::string where;       // "Figure 5", "table.csv row 3"
};

// The case a figure describes, as a config writes one (docs/config.md): one value
// of each axis. The plan turns it into a Case (match_claims, runner/plan/claims_match.hpp).
struct ClaimCase {
  std::string variant;
  Dtype dtype = Dtype::bf16;
  Mask mask;
  ScoreMod scores;
  bool deterministic = false;
  Pass pass = Pass::forward;
  ShapeBlock shape;  // one value per axis
};

struct ClaimedFigure {
  std::string file;  // the claims file as the config names it
  std::string path;  // the file as opened (relative to the working directory), for messages
  std::string key;   // "claims[3]": the claim in its file, for messages
  std::string name;  // unique within its file
  ClaimSource source;
  std::string gpu;                             // the GPU it was measured on, as the source names it
  std::map<std::string, std::string> software;  // {cudnn: 9.19.0, torch: ...}: what the source states
  std::string note;
  ClaimCase claimed_case;
  std::optional<double> tflops, time_us;  // at least one
  SourceLocation where;                   // the claim in its file, for messages
};

// The most claims a config's claims files may hold in all: far above any paper's or
// vendor's table, and a bound on what plan, run and the report list.
inline constexpr std::size_t kMaxClaims = 10000;

// `claims` of a config (paths as written, relative to the config's folder;
// `config_text` for the place each is named): each file read and validated
// (file:line:column: key: what is allowed). Throws ConfigError or BadInputError.
std::vector<ClaimedFigure> read_claims_files(const std::string& config_path, const std::string& config_text,
                                             const std::vector<std::string>& files, std::uint64_t seed);
// An error about a claim's case (a config reader's or the plan's, which name
// their keys as a config's: "shapes.seq_len", "causal") restated at the claim:
// its file, its place when the error has none, its key under claims[i].case.
ConfigError at_claim_case(const ClaimedFigure& claim, const BadInputError& error);
// One claims file's text; `name` is what messages call it.
std::vector<ClaimedFigure> parse_claims(const std::string& yaml_text, const std::string& name,
                                        const std::string& file_as_named, std::uint64_t seed);

}  // namespace attnsweep
