#include "runner/storage/view_columns.hpp"

namespace attnsweep::storage {

const fields::Table<ChoiceRow>& choice_columns() {
  using C = ChoiceRow;
  using fields::Field;
  using fields::Where;
  using fields::view_number_field;
  using fields::view_text_field;
  static const fields::Table<C> table{
      "choice",
      {},
      {view_text_field<C>("group_key", &C::group_key),
       Field<C>{"fastest_case_id", {},
                [](const SQLite::Column& value, const Where&, C& row) {
                  const auto id = fields::view_number(value);
                  if (id) row.fastest_case_id = static_cast<std::int64_t>(*id);
                }},
       view_text_field<C>("fastest_variant", &C::fastest_variant),
       view_text_field<C>("fastest_backend", &C::fastest_backend),
       Field<C>{"fastest_us", {},
                [](const SQLite::Column& value, const Where&, C& row) {
                  row.fastest_us = fields::view_number(value).value_or(0);
                }},
       view_number_field<C>("fastest_ci_rel", &C::fastest_ci_rel),
       view_text_field<C>("fastest_validity", &C::fastest_validity),
       Field<C>{"variants_timed", {},
                [](const SQLite::Column& value, const Where&, C& row) {
                  row.variants_timed = static_cast<int>(fields::view_number(value).value_or(0));
                }},
       view_text_field<C>("runner_up_variant", &C::runner_up_variant),
       view_number_field<C>("runner_up_us", &C::runner_up_us),
       view_number_field<C>("lead", &C::lead),
       view_text_field<C>("lead_verdict", &C::lead_verdict),
       view_text_field<C>("auto_backend", &C::auto_backend),
       view_number_field<C>("auto_us", &C::auto_us),
       view_number_field<C>("auto_slower_by", &C::auto_slower_by),
       view_text_field<C>("auto_verdict", &C::auto_verdict)}};
  return table;
}

const fields::Table<CaseShares>& case_share_columns() {
  using S = CaseShares;
  using fields::view_number_field;
  static const fields::Table<S> table{
      "results",
      {},
      {fields::Field<S>{"case_id", {},
                        [](const SQLite::Column& value, const fields::Where&, S& row) {
                          row.case_id = static_cast<std::int64_t>(fields::view_number(value).value_or(0));
                        }},
       view_number_field<S>("tflops_share", &S::tflops_share),
       view_number_field<S>("bandwidth_share", &S::bandwidth_share),
       view_number_field<S>("dram_bandwidth_share", &S::dram_bandwidth_share)}};
  return table;
}

}  // namespace attnsweep::storage
