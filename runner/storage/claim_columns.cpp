#include "runner/storage/claim_columns.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace attnsweep::storage {
namespace {

using fields::Field;
using fields::OutOfDomain;
using fields::Table;
using fields::Value;
using fields::Where;

// A text member, written as it is or NULL when empty (`or_null`), read leniently.
template <typename Row>
Field<Row> lenient_text(std::string column, std::string Row::*member, bool or_null) {
  return Field<Row>{std::move(column),
                    [member, or_null](const Row& row) {
                      return or_null ? fields::null_if_empty(row.*member) : fields::to_value(row.*member);
                    },
                    [member](const SQLite::Column& value, const Where&, Row& row) { row.*member = fields::view_text(value); }};
}

// A claimed figure: NULL, or a number above 0.
void read_figure(const SQLite::Column& value, const Where& where, std::optional<double>& out) {
  out.reset();
  if (value.isNull()) return;
  if (!value.isInteger() && !value.isFloat()) throw OutOfDomain(where, value, "a number > 0", /*wrong_type=*/true);
  const double number = value.getDouble();
  if (!std::isfinite(number) || number <= 0) throw OutOfDomain(where, value, "a number > 0");
  out = number;
}

}  // namespace

const Table<ClaimRow>& claim_columns() {
  using C = ClaimRow;
  static const Table<C> table{
      "claims",
      {"run_id"},
      {lenient_text<C>("claims_file", &C::claims_file, false),
       lenient_text<C>("name", &C::name, false),
       lenient_text<C>("source_title", &C::source_title, false),
       lenient_text<C>("source_repository", &C::source_repository, true),
       lenient_text<C>("source_path", &C::source_path, true),
       lenient_text<C>("source_commit", &C::source_commit, true),
       lenient_text<C>("source_url", &C::source_url, true),
       lenient_text<C>("source_where", &C::source_where, true),
       lenient_text<C>("claimed_gpu", &C::claimed_gpu, true),
       lenient_text<C>("claimed_software", &C::claimed_software, true),
       lenient_text<C>("note", &C::note, true),
       lenient_text<C>("variant", &C::variant, false),
       lenient_text<C>("case_label", &C::case_label, false),
       Field<C>{"claimed_tflops", [](const C& c) { return fields::to_value(c.claimed_tflops); },
                [](const SQLite::Column& value, const Where& where, C& c) { read_figure(value, where, c.claimed_tflops); }},
       // Read after claimed_tflops: with both NULL, the claim has no figure, said of claimed_tflops.
       Field<C>{"claimed_time_us", [](const C& c) { return fields::to_value(c.claimed_time_us); },
                [](const SQLite::Column& value, const Where& where, C& c) {
                  static const std::string tflops = "claimed_tflops";
                  if (value.isNull() && !c.claimed_tflops) {
                    throw OutOfDomain(Where{where.table, tflops}, value,
                                      "a number > 0 (claimed_time_us is NULL too, and a claim has a figure)");
                  }
                  read_figure(value, where, c.claimed_time_us);
                }},
       Field<C>{"plan_index", [](const C& c) { return fields::to_value(c.plan_index); },
                [](const SQLite::Column& value, const Where& where, C& c) {
                  c.plan_index.reset();
                  if (value.isNull()) return;
                  if (!value.isInteger()) throw OutOfDomain(where, value, "a whole number >= 0", /*wrong_type=*/true);
                  const std::int64_t index = value.getInt64();
                  if (index < 0 || index > std::numeric_limits<int>::max()) {
                    throw OutOfDomain(where, value, "a whole number >= 0");
                  }
                  c.plan_index = static_cast<int>(index);
                }},
       // NULL for a matched claim, whatever the row holds (the schema's CHECK).
       Field<C>{"unmatched_reason",
                [](const C& c) { return c.plan_index ? Value() : fields::to_value(c.unmatched_reason); },
                [](const SQLite::Column& value, const Where&, C& c) { c.unmatched_reason = fields::view_text(value); }}}};
  return table;
}

const Table<ClaimResult>& claim_result_columns() {
  using R = ClaimResult;
  using fields::view_number_field;
  using fields::view_text_field;
  static const Table<R> table{"claim_results",
                              {},
                              {view_text_field<R>("status", &R::status),
                               view_text_field<R>("error_message", &R::error_message),
                               view_number_field<R>("measured_tflops", &R::measured_tflops),
                               view_number_field<R>("measured_time_us", &R::measured_time_us),
                               view_number_field<R>("claim_ratio", &R::ratio),
                               view_text_field<R>("validity", &R::validity),
                               view_text_field<R>("validity_reasons", &R::validity_reasons),
                               view_text_field<R>("device_name", &R::device_name),
                               view_number_field<R>("sm_clock_mhz_mean", &R::sm_clock_mhz_mean),
                               view_number_field<R>("sm_clock_max_mhz", &R::sm_clock_max_mhz),
                               view_number_field<R>("power_cap_share", &R::power_cap_share),
                               view_number_field<R>("thermal_cap_share", &R::thermal_cap_share),
                               view_number_field<R>("power_limit_w", &R::power_limit_w),
                               view_text_field<R>("torch_version", &R::torch_version),
                               view_text_field<R>("cuda_version", &R::cuda_version),
                               view_text_field<R>("cudnn_version", &R::cudnn_version)}};
  return table;
}

}  // namespace attnsweep::storage
