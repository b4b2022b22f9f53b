#include "runner/storage/case_columns.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runner/plan/case_axes.hpp"

namespace attnsweep::storage {
namespace {

using fields::Field;
using fields::Fields;
using fields::OneOf;
using fields::OutOfDomain;
using fields::Table;
using fields::Value;
using fields::Where;
using fields::kNotNegative;
using fields::kAtLeastOne;
using fields::kShare;
using fields::member;
using fields::null_if_empty;
using fields::null_unless_positive;
using fields::text_or_null;
using fields::to_value;
using Style = Display::Style;
using C = CaseRow;

// A stored soft-cap: the schema's CHECK (softcap > 0); NULL is none. A cap of 0
// read as one would label the case "softcap0" (issue 55, item 16).
std::string outside_caps(double cap) { return cap > 0 ? "" : "a number > 0 (a cap), or NULL (none)"; }

const Display kMicroseconds{"us", Style::fixed, 1};
const Display kError{"", Style::scientific, 1};

// A member of the case's identity, held to `check` when read.
template <typename Access, typename Check>
Field<C> identity(std::string column, Access access, Check check) {
  return member<C>(std::move(column), [access](auto& c) -> auto& { return std::invoke(access, c.identity); }, check);
}
template <typename Access>
Field<C> identity(std::string column, Access access) {
  return member<C>(std::move(column), [access](auto& c) -> auto& { return std::invoke(access, c.identity); });
}

// `causal` is 1 for either alignment, `causal_bottom_right` 1 for the
// bottom-right one (schema 12); read in that order, the second one wins.
Field<C> causal_column() {
  return {"causal", [](const C& c) { return to_value(c.identity.mask.is_causal()); },
          [](const SQLite::Column& value, const Where& where, C& c) {
            bool set = false;
            fields::from_column(value, where, set);  // 0 or 1, the schema's CHECK
            c.identity.mask.causal = set ? CausalAlignment::top_left : CausalAlignment::none;
          }};
}
Field<C> bottom_right_column() {
  return {"causal_bottom_right",
          [](const C& c) { return to_value(c.identity.mask.causal == CausalAlignment::bottom_right); },
          [](const SQLite::Column& value, const Where& where, C& c) {
            bool set = false;
            fields::from_column(value, where, set);
            if (set) c.identity.mask.causal = CausalAlignment::bottom_right;
          }};
}

// A variable-length batch's lengths (schema 13): "512,3000" into the list; NULL leaves it empty.
// Held to the shape read before them: one length per sequence (batch of them),
// the longest seq_len_q (seq_len_kv), and key/value lengths exactly beside
// query lengths (a list without its partner crashed every reader, issue 33 item 8).
Field<C> sequence_lengths(const char* column, std::vector<std::int64_t> Shape::*lengths, std::int64_t Shape::*longest) {
  return Field<C>{
      column, [lengths](const C& c) { return null_if_empty(lengths_text(c.identity.shape.*lengths)); },
      [lengths, longest](const SQLite::Column& value, const Where& where, C& c) {
        const Shape& shape = c.identity.shape;
        const bool key_values = lengths == &Shape::seq_lens_kv;
        if (value.isNull()) {
          if (key_values && !shape.seq_lens_q.empty()) {
            throw OutOfDomain(where, value, "one key/value length per sequence (a list beside seq_lens_q)");
          }
          return;
        }
        if (key_values && shape.seq_lens_q.empty()) {
          throw OutOfDomain(where, value, "NULL (seq_lens_q is NULL: a uniform batch)");
        }
        std::vector<std::int64_t> parsed;
        try {
          parsed = parse_lengths(value.isText() ? value.getString() : std::string());
        } catch (const BadInputError&) {
          throw OutOfDomain(where, value, "positive integers separated by commas");
        }
        if (parsed.size() != static_cast<std::size_t>(shape.batch)) {
          throw OutOfDomain(where, value, "one length per sequence (batch " + std::to_string(shape.batch) + ")");
        }
        const std::int64_t most = *std::max_element(parsed.begin(), parsed.end());
        if (most != shape.*longest) {
          throw OutOfDomain(where, value, std::string("lengths whose longest is ") +
                                              (key_values ? "seq_len_kv (" : "seq_len_q (") +
                                              std::to_string(shape.*longest) + ")");
        }
        c.identity.shape.*lengths = std::move(parsed);
      }};
}

// The statistics stored of each kind of sample: <prefix>_median, <prefix>_p10, ...
// A new statistic is a member of SampleStatistics and a line here.
struct Statistic {
  const char* suffix;
  double SampleStatistics::*value;
};
const std::vector<Statistic> kEagerStatistics = {{"median", &SampleStatistics::median}, {"p10", &SampleStatistics::p10},
                                                 {"p90", &SampleStatistics::p90},       {"min", &SampleStatistics::min},
                                                 {"mean", &SampleStatistics::mean},     {"stdev", &SampleStatistics::stdev}};
const std::vector<Statistic> kGraphStatistics = {{"median", &SampleStatistics::median}, {"p10", &SampleStatistics::p10},
                                                 {"p90", &SampleStatistics::p90},       {"min", &SampleStatistics::min}};

// One column per statistic, all NULL without statistics; read back, the
// first column that is not NULL makes them.
Fields<C> statistics_columns(const std::string& prefix, std::optional<SampleStatistics> C::*statistics,
                             const std::vector<Statistic>& which) {
  Fields<C> columns;
  for (const Statistic& statistic : which) {
    auto value = statistic.value;
    columns.push_back(Field<C>{prefix + "_" + statistic.suffix,
                               [statistics, value](const C& c) {
                                 const auto& stats = c.*statistics;
                                 return stats ? to_value((*stats).*value) : Value{};
                               },
                               [statistics, value](const SQLite::Column& column, const Where& where, C& c) {
                                 std::optional<double> read;
                                 fields::from_column(column, where, read);
                                 const std::string allowed = fields::outside(kNotNegative, read);
                                 if (!allowed.empty()) throw OutOfDomain(where, column, allowed);
                                 if (!read) return;
                                 if (!(c.*statistics)) (c.*statistics).emplace();
                                 (*(c.*statistics)).*value = *read;
                               }}
                          .shown(kMicroseconds));
  }
  return columns;
}

// graph_samples: the replays' count, beside their statistics.
Field<C> graph_samples_column() {
  return {"graph_samples", [](const C& c) { return c.graph_time_us ? to_value(c.graph_time_us->count) : Value{}; },
          [](const SQLite::Column& column, const Where& where, C& c) {
            std::optional<int> count;
            fields::from_column(column, where, count);
            const std::string allowed = fields::outside(kNotNegative, count);
            if (!allowed.empty()) throw OutOfDomain(where, column, allowed);
            if (!count) return;
            if (!c.graph_time_us) c.graph_time_us.emplace();
            c.graph_time_us->count = *count;
          }};
}

// A stop reason as its stored spelling; a spelling no build wrote is a damaged database.
Field<C> stop_reason_column(const char* name, std::optional<StopReason> C::*reason) {
  return {name, [reason](const C& c) { return c.*reason ? to_value(to_string(*(c.*reason))) : Value{}; },
          [reason](const SQLite::Column& value, const Where& where, C& c) {
            if (value.isNull()) return;
            c.*reason = parse_stop_reason(value.isText() ? value.getString() : std::string());
            if (!(c.*reason)) throw OutOfDomain(where, value, fields::listed(stop_reason_names()) + " or NULL");
          }};
}

// graph_median_ci_rel: how precisely the replays' median is known (what their stopping rule looks at).
Field<C> graph_median_ci_column() {
  return {"graph_median_ci_rel",
          [](const C& c) { return c.graph_time_us ? to_value(c.graph_time_us->median_ci_rel) : Value{}; },
          [](const SQLite::Column& column, const Where& where, C& c) {
            std::optional<double> half_width;
            fields::from_column(column, where, half_width);
            const std::string allowed = fields::outside(kNotNegative, half_width);
            if (!allowed.empty()) throw OutOfDomain(where, column, allowed);
            if (!half_width) return;
            if (!c.graph_time_us) c.graph_time_us.emplace();
            c.graph_time_us->median_ci_rel = half_width;
          }};
}

// "code: detail; code: detail" (format_reasons) into the typed reasons, each code one validity knows.
Field<C> validity_reasons_column() {
  return {"validity_reasons", [](const C& c) { return null_if_empty(format_reasons(c.validity_reasons)); },
          [](const SQLite::Column& value, const Where& where, C& c) {
            if (value.isNull()) return;
            auto parsed = parse_reasons(value.isText() ? value.getString() : std::string());
            if (!parsed) {
              throw OutOfDomain(where, value, "\"code: detail\" joined by \"; \", each code one of " +
                                                  fields::listed(validity_code_names()));
            }
            c.validity_reasons = std::move(*parsed);
          }};
}

// A phase's wall seconds (PhaseSeconds); NULL in rows stored before schema 8 reads as 0.
Field<C> phase_column(std::string column, double PhaseSeconds::*phase) {
  return member<C>(std::move(column), [phase](auto& c) -> auto& { return c.phases.*phase; }, kNotNegative);
}

// The stored column of a case's axis (runner/plan/case_axes.hpp lists them), held to its domain when read.
Field<C> identity_column(const std::string& column) {
  static const std::map<std::string, std::function<Field<C>()>> fields = {
      {"variant", [] { return identity("variant", &Case::variant); }},
      {"batch", [] { return identity("batch", [](auto& c) -> auto& { return c.shape.batch; }, kAtLeastOne); }},
      {"heads", [] { return identity("heads", [](auto& c) -> auto& { return c.shape.heads; }, kAtLeastOne); }},
      {"kv_heads", [] { return identity("kv_heads", [](auto& c) -> auto& { return c.shape.kv_heads; }, kAtLeastOne); }},
      {"seq_len_q", [] { return identity("seq_len_q", [](auto& c) -> auto& { return c.shape.seq_len_q; }, kAtLeastOne); }},
      {"seq_len_kv", [] { return identity("seq_len_kv", [](auto& c) -> auto& { return c.shape.seq_len_kv; }, kAtLeastOne); }},
      {"head_dim", [] { return identity("head_dim", [](auto& c) -> auto& { return c.shape.head_dim; }, kAtLeastOne); }},
      {"dtype", [] { return identity("dtype", &Case::dtype); }},
      {"causal", causal_column},
      {"causal_bottom_right", bottom_right_column},
      {"window_left", [] { return identity("window_left", [](auto& c) -> auto& { return c.mask.window_left; }, kNotNegative); }},
      {"window_right", [] { return identity("window_right", [](auto& c) -> auto& { return c.mask.window_right; }, kNotNegative); }},
      {"seq_lens_q", [] { return sequence_lengths("seq_lens_q", &Shape::seq_lens_q, &Shape::seq_len_q); }},
      {"seq_lens_kv", [] { return sequence_lengths("seq_lens_kv", &Shape::seq_lens_kv, &Shape::seq_len_kv); }},
      {"page_size", [] { return identity("page_size", [](auto& c) -> auto& { return c.shape.page_size; }, kNotNegative); }},
      {"head_dim_v", [] { return identity("head_dim_v", [](auto& c) -> auto& { return c.shape.head_dim_v; }, kNotNegative); }},
      {"softcap", [] { return identity("softcap", [](auto& c) -> auto& { return c.scores.softcap; }, outside_caps); }},
      {"alibi", [] { return identity("alibi", [](auto& c) -> auto& { return c.scores.alibi; }); }},
      {"sinks", [] { return identity("sinks", [](auto& c) -> auto& { return c.scores.sinks; }); }},
      {"deterministic", [] { return identity("deterministic", &Case::deterministic); }},
      {"pass", [] { return identity("pass", &Case::pass); }},
  };
  const auto found = fields.find(column);
  if (found == fields.end()) {
    throw std::logic_error("case_axes.cpp names the stored column '" + column + "', which case_columns.cpp does not know");
  }
  return found->second();
}

// A value derived by SQLite when read, with the results view's expression (schema.sql).
Field<C> derived(std::string column, std::string expression, std::optional<double> C::Derived::*value, Display display) {
  Field<C> field = member<C>(std::move(column), [value](auto& c) -> auto& { return c.derived.*value; });
  field.expression = std::move(expression);
  field.display = std::move(display);
  return field;
}

}  // namespace

const Table<CaseRow>& case_columns() {
  static const Table<C> table = [] {
    // The identity first, up to `pass`: the reader names a damaged case by it.
    Fields<C> columns = {
        Field<C>{"case_id", {}, [](const SQLite::Column& v, const Where& w, C& c) { fields::from_column(v, w, c.case_id); }},
        member<C>("run_id", &C::run_id),
        identity("plan_index", &Case::plan_index, kNotNegative),
    };
    // Every axis's columns (runner/plan/case_axes.hpp), in the axes' order.
    for (const CaseAxis& axis : case_axes()) {
      for (const std::string& column : axis.columns) columns.push_back(identity_column(column));
    }
    fields::append(columns, {
        // Written for SQL (the results view's tokens_per_s); the reader has it from the shape.
        Field<C>{"query_tokens", [](const C& c) { return to_value(c.identity.shape.query_tokens()); }},
        // What ran and how it ended.
        member<C>("device", &C::device),
        member<C>("status", &C::status),
        text_or_null<C>("error_message", &C::error_message),
        text_or_null<C>("warnings", &C::warnings),
        text_or_null<C>("sdpa_backend", &C::sdpa_backend),
        text_or_null<C>("timer", &C::timer),
        stop_reason_column("stop_reason", &C::stop_reason),
        // The profile.
        member<C>("kernels_per_forward", &C::kernels_per_forward, kNotNegative),
        member<C>("memcpy_per_forward", &C::memcpy_per_forward, kNotNegative),
        member<C>("memset_per_forward", &C::memset_per_forward, kNotNegative),
        member<C>("cpu_ops_per_forward", &C::cpu_ops_per_forward, kNotNegative),
        member<C>("counts_consistent", &C::counts_consistent),
        member<C>("profile_attempts", &C::profile_attempts, kNotNegative),
        member<C>("profiled_forwards", &C::profiled_forwards, kNotNegative),
        member<C>("kernel_time_us_per_forward", &C::kernel_time_us_per_forward, kNotNegative).shown(kMicroseconds),
    });
    fields::append(columns, statistics_columns("gpu_time_us", &C::gpu_time_us, kEagerStatistics));
    fields::append(columns, statistics_columns("cpu_time_us", &C::cpu_time_us, kEagerStatistics));
    fields::append(columns, {
        member<C>("samples", &C::samples, kNotNegative),
        member<C>("cpu_dispatch_us_median", &C::cpu_dispatch_us_median, kNotNegative).shown(kMicroseconds),
        member<C>("rel_error", &C::rel_error, kNotNegative).shown(kError),
        member<C>("rel_error_dequantized", &C::rel_error_dequantized, kNotNegative).shown(kError),
        member<C>("peak_mem_bytes", &C::peak_mem_bytes, kNotNegative).shown({"bytes"}),
        member<C>("flops", &C::flops, kNotNegative),
        member<C>("min_bytes", &C::min_bytes, kNotNegative).shown({"bytes"}),
        member<C>("tflops", &C::tflops, kNotNegative).shown({"TFLOP/s", Style::fixed, 2}),
        member<C>("bandwidth_gbps", &C::bandwidth_gbps, kNotNegative).shown({"GB/s", Style::fixed, 1}),
        text_or_null<C>("trace_path", &C::trace_path),
        member<C>("wall_seconds", &C::wall_seconds, kNotNegative).shown({"s"}),
        member<C>("finished_at", &C::finished_at),
    });
    fields::append(columns, statistics_columns("graph_time_us", &C::graph_time_us, kGraphStatistics));
    fields::append(columns, {
        graph_samples_column(),
        graph_median_ci_column(),
        stop_reason_column("graph_stop_reason", &C::graph_stop_reason),
        text_or_null<C>("graph_error", &C::graph_error),
        member<C>("graph_launches_per_replay", &C::graph_launches_per_replay, kNotNegative),
        member<C>("graph_output_rel_diff", &C::graph_output_rel_diff, kNotNegative).shown(kError),
        member<C>("sm_clock_mhz_mean", &C::sm_clock_mhz_mean, kNotNegative).shown({"MHz", Style::fixed, 0}),
        member<C>("throttled_samples", &C::throttled_samples, kNotNegative),
        member<C>("launch_latency_hidden", &C::launch_latency_hidden),
        member<C>("median_ci_rel", &C::median_ci_rel, kNotNegative),
        phase_column("setup_seconds", &PhaseSeconds::setup),
        phase_column("accuracy_seconds", &PhaseSeconds::accuracy),
        phase_column("warmup_seconds", &PhaseSeconds::warmup),
        phase_column("timing_seconds", &PhaseSeconds::timing),
        phase_column("graph_seconds", &PhaseSeconds::graph),
        phase_column("profile_seconds", &PhaseSeconds::profile),
        text_or_null<C>("gpu_uuid", &C::gpu_uuid),
        member<C>("shard_index", &C::shard_index, kNotNegative),
        member<C>("power_cap_share", &C::power_cap_share, kShare),
        member<C>("thermal_cap_share", &C::thermal_cap_share, kShare),
        Field<C>{"cooldown_seconds", [](const C& c) { return null_unless_positive(c.cooldown_seconds); },
                 [](const SQLite::Column& v, const Where& w, C& c) {
                   fields::from_column(v, w, c.cooldown_seconds);
                   const std::string allowed = fields::outside(kNotNegative, c.cooldown_seconds);
                   if (!allowed.empty()) throw OutOfDomain(w, v, allowed);
                 }},
        Field<C>{"cooldown_budget_exhausted",
                 [](const C& c) { return c.cooldown_budget_exhausted ? to_value(true) : Value{}; },
                 [](const SQLite::Column& v, const Where& w, C& c) { fields::from_column(v, w, c.cooldown_budget_exhausted); }},
        text_or_null<C>("numerics", &C::numerics, OneOf{{"ok", "beyond_bound", "nonfinite"}, /*or_null=*/true}),
        member<C>("numerics_bound", &C::numerics_bound, kNotNegative),
        member<C>("other_processes", &C::other_processes, kNotNegative),
        text_or_null<C>("validity", &C::validity, OneOf{{"ok", "suspect"}, /*or_null=*/true}),
        validity_reasons_column(),
        member<C>("grad_rel_error_q", &C::grad_rel_error_q, kNotNegative).shown(kError),
        member<C>("grad_rel_error_k", &C::grad_rel_error_k, kNotNegative).shown(kError),
        member<C>("grad_rel_error_v", &C::grad_rel_error_v, kNotNegative).shown(kError),
        text_or_null<C>("sdpa_backend_backward", &C::sdpa_backend_backward),
        member<C>("energy_j", &C::energy_j, kNotNegative).shown({"J", Style::significant, 3}),
        member<C>("energy_power_w", &C::energy_power_w, kNotNegative).shown({"W", Style::fixed, 1}),
        member<C>("energy_window_s", &C::energy_window_s, kNotNegative).shown({"s"}),
        member<C>("energy_passes", &C::energy_passes, kNotNegative),
        member<C>("dram_read_bytes", &C::dram_read_bytes, kNotNegative).shown({"B", Style::significant, 4}),
        member<C>("dram_write_bytes", &C::dram_write_bytes, kNotNegative).shown({"B", Style::significant, 4}),
        member<C>("l2_hit_rate", &C::l2_hit_rate, kShare).shown({"", Style::fixed, 3}),
        member<C>("sm_throughput", &C::sm_throughput, kShare).shown({"", Style::fixed, 3}),
        member<C>("tensor_pipe", &C::tensor_pipe, kShare).shown({"", Style::fixed, 3}),
        member<C>("counter_launches", &C::counter_launches, kNotNegative),
        member<C>("counter_kernel_us", &C::counter_kernel_us, kNotNegative).shown(kMicroseconds),
        member<C>("counter_replay_passes", &C::counter_replay_passes, kNotNegative),
        member<C>("counter_seconds", &C::counter_seconds, kNotNegative).shown({"s"}),
        text_or_null<C>("counters_why_not", &C::counters_why_not),
        // Derived by SQLite with the results view's expressions.
        derived("time_us_median", "COALESCE(gpu_time_us_median, cpu_time_us_median)", &C::Derived::time_us_median,
                kMicroseconds),
        derived("tflop_per_joule", "flops / 1e12 / energy_j", &C::Derived::tflop_per_joule,
                {"TFLOP/J", Style::significant, 3}),
        derived("grad_rel_error_max", "max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v)",
                &C::Derived::grad_rel_error_max, kError),
    });
    return Table<C>{"cases", {}, std::move(columns)};
  }();
  return table;
}

Shown case_value(const CaseRow& row, const std::string& column) {
  const Field<C>& field = fields::field_named(case_columns(), column);
  return Shown{field.write ? field.write(row) : Value{}, field.display};
}

std::vector<std::string> CaseRow::validity_codes() const {
  std::vector<std::string> codes;
  for (const ValidityReason& reason : validity_reasons) codes.emplace_back(to_string(reason.code));
  return codes;
}

}  // namespace attnsweep::storage
