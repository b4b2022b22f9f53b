#include "runner/variants/paged_cache.hpp"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnsweep {

PagedCache PagedCache::of(const at::Tensor& key, const at::Tensor& value, const std::vector<std::int64_t>& kv_lens,
                          std::int64_t page_size, at::Generator& generator) {
  const std::int64_t batch = key.size(0), kv_heads = key.size(1), seq_len_kv = key.size(2);
  std::vector<std::int64_t> first_page = {0};  // where each sequence's pages start in the permutation
  std::int64_t most_pages = 0;
  for (const std::int64_t length : kv_lens) {
    const std::int64_t pages = (length + page_size - 1) / page_size;
    first_page.push_back(first_page.back() + pages);
    most_pages = std::max(most_pages, pages);
  }
  const std::int64_t pages = first_page.back();
  const at::Device where = key.device();
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const at::Tensor order = at::randperm(pages, generator, longs.device(where));

  // Table entry (b, p) is order[first_page[b] + p] for p < the sequence's pages, else 0.
  std::vector<std::int64_t> slot(static_cast<std::size_t>(batch * most_pages), -1);
  // Each real key (b, t): its row of the padded (batch * seq_len_kv) rows and
  // its permutation index and place in the page.
  std::vector<std::int64_t> rows, page_slots, offsets;
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t length = kv_lens[static_cast<std::size_t>(b)];
    for (std::int64_t p = 0; p * page_size < length; ++p) slot[b * most_pages + p] = first_page[b] + p;
    for (std::int64_t t = 0; t < length; ++t) {
      rows.push_back(b * seq_len_kv + t);
      page_slots.push_back(first_page[b] + t / page_size);
      offsets.push_back(t % page_size);
    }
  }
  const at::Tensor slots = at::tensor(slot, longs).to(where).view({batch, most_pages});
  PagedCache cache;
  cache.page_size = page_size;
  cache.page_table = at::where(slots >= 0, order.index({slots.clamp_min(0)}), at::zeros_like(slots)).to(at::kInt);
  cache.seqused_k = at::tensor(kv_lens, longs).to(where).to(at::kInt);
  const at::Tensor row_index = at::tensor(rows, longs).to(where);
  const at::Tensor destination =
      order.index_select(0, at::tensor(page_slots, longs).to(where)) * page_size + at::tensor(offsets, longs).to(where);
  auto paged = [&](const at::Tensor& padded) {
    const std::int64_t dim = padded.size(3);  // keys' head_dim, values' head_dim_v
    // fp8 moved as its bytes: PyTorch's index_copy_ has no Float8 kernel (CPU or CUDA).
    const bool fp8 = at::isFloat8Type(padded.scalar_type());
    const at::Tensor source = fp8 ? padded.view(at::kByte) : padded;
    const at::Tensor real = source.transpose(1, 2).reshape({batch * seq_len_kv, kv_heads, dim}).index_select(0, row_index);
    at::Tensor pool = at::zeros({pages * page_size, kv_heads, dim}, source.options());
    pool.index_copy_(0, destination, real);
    if (fp8) pool = pool.view(padded.scalar_type());
    return pool.view({pages, page_size, kv_heads, dim});
  };
  cache.key = paged(key);
  cache.value = paged(value);
  return cache;
}

at::Tensor PagedCache::gather(const at::Tensor& pages, std::int64_t seq_len_kv) const {
  const std::int64_t batch = page_table.size(0), most_pages = page_table.size(1);
  // (batch, most_pages, page_size, kv_heads, dim) -> (batch, keys, kv_heads, dim), then cut and zero past each end.
  const at::Tensor gathered = pages.index({page_table.to(at::kLong)})
                                  .reshape({batch, most_pages * page_size, pages.size(2), pages.size(3)})
                                  .narrow(1, 0, seq_len_kv);
  const at::Tensor position = at::arange(seq_len_kv, page_table.options().dtype(at::kLong)).view({1, -1, 1, 1});
  const at::Tensor real = position < seqused_k.to(at::kLong).view({-1, 1, 1, 1});
  return at::where(real, gathered, at::zeros_like(gathered)).transpose(1, 2);
}

}  // namespace attnsweep
