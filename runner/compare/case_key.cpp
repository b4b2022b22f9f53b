#include "runner/compare/case_key.hpp"

#include <functional>
#include <tuple>

namespace attnsweep::compare {
namespace {

auto tied(const CaseKey& key) {
  const Shape& s = key.shape;
  return std::make_tuple(std::cref(key.variant), s.batch, s.heads, s.kv_heads, s.seq_len_q, s.seq_len_kv, s.head_dim,
                         std::cref(s.seq_lens_q), std::cref(s.seq_lens_kv), s.page_size, s.value_dim(), key.dtype, key.mask, key.pass,
                         key.device_kind, key.scores, key.deterministic);
}

}  // namespace

CaseKey CaseKey::of(const storage::CaseRow& row) {
  return {row.identity.variant, row.identity.shape,       row.identity.dtype,
          row.identity.mask,    row.device.kind(),        row.identity.pass,
          row.identity.scores, row.identity.deterministic};
}

std::string CaseKey::label() const {
  // The key is a case without its plan index and source location, which no label shows.
  const Case c{/*plan_index=*/0, variant, shape, dtype, mask, /*where=*/{}, pass, scores, deterministic};
  return c.label() + (device_kind == DeviceKind::cuda ? " cuda" : " cpu");
}

bool CaseKey::operator<(const CaseKey& other) const { return tied(*this) < tied(other); }
bool CaseKey::operator==(const CaseKey& other) const { return tied(*this) == tied(other); }

}  // namespace attnsweep::compare
