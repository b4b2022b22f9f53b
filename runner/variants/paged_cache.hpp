#pragma once
// A paged KV cache (issue 25), as servers keep it and as FlashAttention-3's
// page_table argument reads it: the keys and values of every sequence in
// pages of page_size keys, the pages of all sequences in one pool, in a
// seeded shuffled order, and a page table naming each sequence's pages.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace attnsweep {

struct PagedCache {
  std::int64_t page_size = 0;
  at::Tensor key, value;    // (pages, page_size, kv_heads, head_dim); slots past a sequence's end are zeros
  at::Tensor page_table;    // int32 (batch, most pages of a sequence): sequence b's pages in order; 0 past its end
  at::Tensor seqused_k;     // int32 (batch): each sequence's key/value length

  // The padded key and value (batch, kv_heads, seq_len_kv, head_dim) paged:
  // sequence b has ceil(kv_lens[b] / page_size) pages; pages are numbered by a
  // permutation of all of them drawn from `generator` (torch.randperm), sequence
  // b taking the next ceil(...) of it. Made once per case, outside every timed pass.
  static PagedCache of(const at::Tensor& key, const at::Tensor& value, const std::vector<std::int64_t>& kv_lens,
                       std::int64_t page_size, at::Generator& generator);
  // The padded (batch, kv_heads, seq_len_kv, head_dim) tensor back from the pages (zeros past each end): for tests.
  at::Tensor gather(const at::Tensor& pages, std::int64_t seq_len_kv) const;
};

}  // namespace attnsweep
