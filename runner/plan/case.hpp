#pragma once
// One measurement to make: a variant on a shape, dtype and mask, and the pass
// it times. Plain data, so a case can be handed to a worker process or stored as is.
#include <cstdint>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/mask.hpp"
#include "runner/common/score_mod.hpp"

namespace attnsweep {

struct Shape {
  std::int64_t batch = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // grouped-query attention when < heads
  std::int64_t seq_len_q = 0;
  std::int64_t seq_len_kv = 0;
  std::int64_t head_dim = 0;
  // A variable-length batch (issue 25): one query and one key/value length per
  // sequence, `batch` of each; empty for a uniform batch. seq_len_q and
  // seq_len_kv are then the longest, the padded batch's lengths.
  std::vector<std::int64_t> seq_lens_q, seq_lens_kv;
  // Keys per page of a paged KV cache; 0: the cache is contiguous.
  std::int64_t page_size = 0;
  // The value head dim where it differs from head_dim (MLA's 192/128, issue 36);
  // 0: the same as head_dim. Queries and keys have head_dim, values and the output this.
  std::int64_t head_dim_v = 0;

  std::int64_t value_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }

  bool variable_length() const { return !seq_lens_q.empty(); }
  // A paged KV cache is a serving layout measured in the forward alone: a
  // backward of one is unsupported. A variable-length batch has its backward
  // (issue 36): training packs sequences too.
  bool forward_only() const { return page_size > 0; }
  // Sequence b's lengths (every sequence's are seq_len_q and seq_len_kv in a uniform batch).
  std::int64_t q_len(std::size_t b) const { return variable_length() ? seq_lens_q[b] : seq_len_q; }
  std::int64_t kv_len(std::size_t b) const { return variable_length() ? seq_lens_kv[b] : seq_len_kv; }
  // Queries that are not padding: the sum of the query lengths.
  std::int64_t query_tokens() const;
  // Sequence b alone: batch 1, its own lengths, uniform.
  Shape sequence(std::size_t b) const;

  // Equal in every shape axis (case_axes.cpp), lists included.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // "8x16x1024x64" (B x H x S x D); "8x16/4x1x4096x64" with GQA and Sq != Skv;
  // "8x32/8xvarlen[q 1, kv 512-32768 #3f2a9c01d4e7]x128" for a variable-length batch
  // (the shortest and longest lengths, a digest of the lists); " paged256"
  // after it for a paged cache; "1x128x4096x192/128" where the value head dim differs.
  std::string label() const;
  // "varlen[q 1, kv 512-32768 #3f2a9c01d4e7]": a variable-length batch's part of the label ("" for a
  // uniform batch); the first 12 hex digits of sha256("1,1,...;512,...,32768"), the lists as stored
  // (4 digits collided within a few hundred batches: issue 33, item 6).
  std::string varlen_label() const;
};

// "512,3000,8192" as stored (cases.seq_lens_q, seq_lens_kv); "" for none.
std::string lengths_text(const std::vector<std::int64_t>& lengths);
// Its inverse; throws BadInputError on anything but positive integers and commas.
std::vector<std::int64_t> parse_lengths(const std::string& text);

struct Case {
  int plan_index = 0;  // position in the plan, stable for a given config
  std::string variant;
  Shape shape;
  Dtype dtype = Dtype::bf16;
  Mask mask;  // causal top-left unless the config says otherwise
  SourceLocation where;  // the `shapes` entry it came from, for messages about the case (not stored)
  Pass pass = Pass::forward;
  ScoreMod scores;  // soft-capping, ALiBi, sinks (issue 36); none unless the config says otherwise
  // PyTorch's deterministic algorithms on for the case (issue 36,
  // torch.use_deterministic_algorithms(True)): a backward then takes its
  // deterministic path, or the variant is unsupported with PyTorch's reason.
  bool deterministic = false;

  // "sdpa_flash 8x16x1024x64 bf16 causal"; a score modification follows the
  // mask ("... causal softcap30"), then "deterministic" where the case is; a
  // pass other than forward is named at the end ("... causal backward"), so
  // forward labels read as they always did.
  std::string label() const;
  // The mask, the score modifications and determinism as tables' mask column
  // shows them: "causal softcap30", "causal alibi deterministic".
  std::string mask_label() const {
    std::string text = scores.any() ? mask.label() + " " + scores.label() : mask.label();
    return deterministic ? text + " deterministic" : text;
  }
  // The same measurement: equal in every axis of case_axes.hpp (not plan_index
  // or where). What merge, resume, claims and compare match cases by.
  bool same_measurement(const Case& other) const;
};

}  // namespace attnsweep
