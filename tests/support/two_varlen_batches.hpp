#pragma once
// Issue 33, item 6: two variable-length batches of one range whose 4-digit
// digests collided (both were 4x2xvarlen[q 1, kv 8-32 #74b2]x8). The plan test
// holds their labels apart; the CLI test follows them into the report and history.
namespace attnsweep::testing {

// Two batches of 4 sequences decoding one token each over 8 to 32 keys: the
// same shortest and longest lengths, other lengths between.
inline const char* const kTwoVarlenBatchesOfOneRange = R"(variants: [naive]
dtypes: [fp32]
causal: false
shapes:
  - {heads: 2, head_dim: 8, varlen: {seq_len_kv: [8, 8, 12, 32], seq_len_q: 1}}
  - {heads: 2, head_dim: 8, varlen: {seq_len_kv: [8, 15, 19, 32], seq_len_q: 1}}
)";

}  // namespace attnsweep::testing
