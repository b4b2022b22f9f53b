// An op library with FlashAttention-3's calling convention for what attnsweep
// generates (cu_seqlens_*, max_seqlen_*, page_table, seqused_k, window sizes,
// softcap, alibi_slopes, and sinks as vLLM's FlashAttention fork names them,
// s_aux; a causal flag aligned to the bottom right), written plainly with ATen ops, one
// sequence at a time. The CPU tests sweep it through an op-library mapping's
// `arguments:` to show that each generated tensor reaches the op as FA3 reads it:
// a wrong offset, page or length gives a wrong output, which the numerics catch.
//   attnsweep_flash_like::fwd(q, k, v, ...) -> (out, lse)
//   attnsweep_flash_like::fwd_trainable(the same): the same function registered
//   CompositeImplicitAutograd, so autograd differentiates it through its ATen ops
//   (a variable-length batch's backward with respect to the packed rows, issue 36).
// q (batch, seq, heads, dim) or packed (total_q, heads, dim) with cu_seqlens_q;
// k, v the same with cu_seqlens_k, or pages (pages, page_size, kv_heads, dim)
// with page_table (batch, pages per sequence) and seqused_k (batch). fp8 q, k, v
// (FA3's fp8 forward) are read times q_descale, k_descale, v_descale (float32,
// (batch, kv_heads), a query head taking its key/value head's), and the output
// is bf16.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <tuple>

namespace {

using at::Tensor;

// Sequence b's rows of a (batch, seq, heads, dim) or packed tensor.
Tensor rows_of(const Tensor& t, const std::optional<Tensor>& cu_seqlens, int64_t b) {
  if (!cu_seqlens) return t.select(0, b);
  const int64_t start = (*cu_seqlens)[b].item<int64_t>(), end = (*cu_seqlens)[b + 1].item<int64_t>();
  return t.narrow(0, start, end - start);
}

// Sequence b's keys from pages: its pages in table order, cut at its length.
Tensor paged_rows(const Tensor& pages, const Tensor& page_table, int64_t b, int64_t length) {
  const Tensor own = pages.index_select(0, page_table[b].to(at::kLong));
  return own.reshape({-1, pages.size(2), pages.size(3)}).narrow(0, 0, length);
}

std::tuple<Tensor, Tensor> fwd(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& cu_seqlens_q,
                               const std::optional<Tensor>& cu_seqlens_k, std::optional<int64_t> max_seqlen_q,
                               std::optional<int64_t> max_seqlen_k, const std::optional<Tensor>& page_table,
                               const std::optional<Tensor>& seqused_k, std::optional<double> softmax_scale, bool is_causal,
                               int64_t window_size_left, int64_t window_size_right, double softcap,
                               const std::optional<Tensor>& alibi_slopes, const std::optional<Tensor>& s_aux,
                               const std::optional<Tensor>& q_descale, const std::optional<Tensor>& k_descale,
                               const std::optional<Tensor>& v_descale) {
  const bool fp8 = at::isFloat8Type(q.scalar_type());
  TORCH_CHECK(!fp8 || (q_descale && k_descale && v_descale), "fp8 inputs need q_descale, k_descale and v_descale");
  TORCH_CHECK(!alibi_slopes || (alibi_slopes->scalar_type() == at::kFloat && alibi_slopes->size(0) == q.size(-2)),
              "alibi_slopes must be float32, one per query head");
  TORCH_CHECK(!s_aux || (s_aux->scalar_type() == at::kFloat && s_aux->size(0) == q.size(-2)),
              "s_aux must be float32, one per query head");
  TORCH_CHECK(!cu_seqlens_q || max_seqlen_q, "cu_seqlens_q needs max_seqlen_q");
  TORCH_CHECK(!cu_seqlens_k || max_seqlen_k, "cu_seqlens_k needs max_seqlen_k");
  TORCH_CHECK(!page_table || (seqused_k && !cu_seqlens_k), "page_table needs seqused_k and no cu_seqlens_k");
  const int64_t batch = cu_seqlens_q ? cu_seqlens_q->size(0) - 1 : q.size(0);
  const double scale = softmax_scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor out = at::empty_like(q, fp8 ? q.options().dtype(at::kBFloat16) : q.options());
  // fp8: each (sequence, key/value head)'s descale, for the heads of a (L, heads, D) tensor.
  const auto descaled = [&](Tensor rows, const std::optional<Tensor>& descale, int64_t b) {
    if (!fp8) return rows.to(at::kFloat);
    const Tensor per_head = (*descale)[b].repeat_interleave(rows.size(1) / descale->size(1));
    return rows.to(at::kFloat) * per_head.view({1, -1, 1});
  };
  for (int64_t b = 0; b < batch; ++b) {
    const Tensor query = descaled(rows_of(q, cu_seqlens_q, b), q_descale, b);  // (Lq, H, D)
    Tensor key, value;
    if (page_table) {
      const int64_t length = (*seqused_k)[b].item<int64_t>();
      key = paged_rows(k, *page_table, b, length);
      value = paged_rows(v, *page_table, b, length);
    } else {
      key = rows_of(k, cu_seqlens_k, b);
      value = rows_of(v, cu_seqlens_k, b);
      if (seqused_k) {
        key = key.narrow(0, 0, (*seqused_k)[b].item<int64_t>());
        value = value.narrow(0, 0, (*seqused_k)[b].item<int64_t>());
      }
    }
    key = descaled(key, k_descale, b).repeat_interleave(query.size(1) / key.size(1), 1);
    value = descaled(value, v_descale, b).repeat_interleave(query.size(1) / value.size(1), 1);
    const int64_t lq = query.size(0), lk = key.size(0);
    Tensor scores = at::einsum("qhd,khd->hqk", {query, key}) * scale;
    if (softcap > 0) scores = softcap * at::tanh(scores / softcap);  // FA3's: 0 is none
    // FlashAttention's masks: query i's diagonal is key i + lk - lq (the bottom right).
    const Tensor row = at::arange(lq).unsqueeze(1), column = at::arange(lk).unsqueeze(0);
    const Tensor diagonal = row + (lk - lq);
    // FlashAttention's ALiBi: -slope * |i + lk - lq - j|, after the cap.
    if (alibi_slopes) scores = scores - alibi_slopes->view({-1, 1, 1}) * (diagonal - column).abs().to(at::kFloat);
    Tensor masked = at::zeros({lq, lk}, at::kBool);
    if (is_causal) masked = masked.logical_or(column > diagonal);
    if (window_size_left >= 0) masked = masked.logical_or(column < diagonal - window_size_left);
    if (window_size_right >= 0 && !is_causal) masked = masked.logical_or(column > diagonal + window_size_right);
    scores = scores.masked_fill(masked, -std::numeric_limits<double>::infinity());
    Tensor probabilities;
    if (s_aux) {  // a sink logit per head: one more softmax column, no value
      const Tensor sink = s_aux->view({-1, 1, 1}).expand({scores.size(0), lq, 1});
      probabilities = at::softmax(at::cat({scores, sink}, -1), -1).narrow(-1, 0, lk);
    } else {
      probabilities = at::softmax(scores, -1);
    }
    const Tensor result = at::einsum("hqk,khd->qhd", {probabilities, value}).to(out.scalar_type());
    rows_of(out, cu_seqlens_q, b).copy_(result);
  }
  return {out, at::zeros({1}, q.options().dtype(at::kFloat))};
}

}  // namespace

#define ATTNSWEEP_FLASH_LIKE_ARGUMENTS                                                                         \
  "(Tensor q, Tensor k, Tensor v, Tensor? cu_seqlens_q=None, Tensor? cu_seqlens_k=None, "                      \
  "int? max_seqlen_q=None, int? max_seqlen_k=None, Tensor? page_table=None, Tensor? seqused_k=None, "         \
  "float? softmax_scale=None, bool is_causal=False, int window_size_left=-1, int window_size_right=-1, "       \
  "float softcap=0.0, Tensor? alibi_slopes=None, Tensor? s_aux=None, Tensor? q_descale=None, "                \
  "Tensor? k_descale=None, Tensor? v_descale=None) -> (Tensor, Tensor)"

TORCH_LIBRARY(attnsweep_flash_like, m) {
  m.def("fwd" ATTNSWEEP_FLASH_LIKE_ARGUMENTS);
  m.def("fwd_trainable" ATTNSWEEP_FLASH_LIKE_ARGUMENTS);
}
TORCH_LIBRARY_IMPL(attnsweep_flash_like, CPU, m) { m.impl("fwd", &fwd); }
TORCH_LIBRARY_IMPL(attnsweep_flash_like, CompositeImplicitAutograd, m) { m.impl("fwd_trainable", &fwd); }
