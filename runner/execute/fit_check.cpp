#include "runner/execute/fit_check.hpp"

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/measure/flops.hpp"

namespace attnsweep::execute {

namespace {

// The bytes a case's inputs take as made (measure/inputs.cpp): q, k, v and the
// output at the padded lengths; a variable-length batch's packed rows and its
// two boolean (batch, 1, max_q, max_kv) masks; a paged cache's pool; ALiBi's
// bias (1 or batch, heads, Sq, Skv) in the dtype, its float32 distances, and
// the float32 bias it is made from (measure/inputs.cpp), alive while it is cast;
// an fp8 case's bf16 draw, kept beside its quantised q, k and v.
double inputs_bytes(const Case& c) {
  const Shape& shape = c.shape;
  const Dtype dtype = c.dtype;
  Shape padded = shape;
  padded.seq_lens_q.clear();
  padded.seq_lens_kv.clear();
  double bytes = forward_min_bytes(padded, dtype);
  if (is_fp8(dtype)) bytes += forward_min_bytes(padded, Dtype::bf16);
  if (shape.variable_length()) {
    bytes += forward_min_bytes(shape, dtype);  // the packed rows (and room for a packed output)
    bytes += 2.0 * static_cast<double>(shape.batch) * static_cast<double>(shape.seq_len_q) *
             static_cast<double>(shape.seq_len_kv);
  }
  if (shape.page_size > 0) {
    double pages = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(shape.batch); ++b) {
      pages += static_cast<double>((shape.kv_len(b) + shape.page_size - 1) / shape.page_size);
    }
    bytes += pages * static_cast<double>(shape.page_size) * static_cast<double>(shape.kv_heads) *
             static_cast<double>(shape.head_dim + shape.value_dim()) * dtype_bytes(dtype);
  }
  if (c.scores.alibi) {
    const double copies = shape.variable_length() ? static_cast<double>(shape.batch) : 1.0;
    const double grid = copies * static_cast<double>(shape.seq_len_q) * static_cast<double>(shape.seq_len_kv);
    bytes += grid * (static_cast<double>(shape.heads) * (dtype_bytes(output_dtype(dtype)) + 4.0) + 4.0);
  }
  return bytes;
}

}  // namespace

void check_cases_fit(const Plan& plan, const Device& device, double available_bytes, const std::string& config_path) {
  constexpr double kGiB = 1 << 30;
  for (const Case& c : plan.cases) {
    const double needed = inputs_bytes(c);
    if (needed > available_bytes) {
      const bool laid_out = c.shape.variable_length() || c.shape.page_size > 0;
      throw ConfigError(config_path, c.where, "shapes",
                        "case " + c.label() + " needs " + text::fixed(needed / kGiB, 1) + " GiB for " +
                            (laid_out ? "its inputs as laid out (q, k, v and the output padded to the longest "
                                        "sequence, the packed rows and masks, the pages)"
                                      : "q, k, v and the output alone") +
                            (c.scores.alibi ? ", with ALiBi's (heads, seq_len_q, seq_len_kv) bias" : "") +
                            "; " + device.to_string() + " has " + text::fixed(available_bytes / kGiB, 1) +
                            " GiB. Use smaller shapes or exclude it");
    }
  }
}

}  // namespace attnsweep::execute
