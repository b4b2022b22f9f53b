#include "runner/measure/output_check.hpp"

#include <ATen/ATen.h>

#include <sstream>

namespace attnsweep {

std::string output_mismatch(const at::Tensor& output, const AttentionInputs& inputs) {
  if (!output.defined()) return "the variant returned an undefined tensor";
  const at::Tensor& query = inputs.query;
  std::ostringstream why;
  if (output.device() != query.device()) {
    why << "the output is on " << output.device() << ", the inputs on " << query.device();
  } else if (output.sizes() != query.sizes() && !(inputs.packed && output.sizes() == inputs.packed->query.sizes())) {
    why << "the output has shape " << output.sizes() << " but the query's " << query.sizes()
        << " (batch, heads, seq_len_q, head_dim) was expected"
        << (inputs.packed ? " (or the packed query's, (total_q, heads, head_dim))" : "");
  } else if (output.scalar_type() != query.scalar_type()) {
    why << "the output is " << output.scalar_type() << " but the inputs are " << query.scalar_type();
  }
  return why.str();
}

}  // namespace attnsweep
