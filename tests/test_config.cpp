// Config parsing and every rejection: each error names file, line, column, key
// and what is allowed.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "runner/config/config.hpp"
#include "runner/config/sequence_lengths.hpp"
#include "runner/plan/plan.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep {
namespace {

const char* const kMinimal = R"(
variants: [naive, sdpa_flash]
dtypes: [bf16]
shapes:
  batch: 2
  heads: 4
  seq_len: 128
  head_dim: 64
)";

// Parses `yaml` and expects a ConfigError whose message contains every fragment.
void expect_rejected(const std::string& yaml, const std::vector<std::string>& fragments) {
  try {
    const Config config = parse_config(yaml, "sweep.yaml");
    make_plan(config);
    FAIL() << "accepted:\n" << yaml;
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    for (const auto& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << message;
    }
  }
}

std::string with(const std::string& base, const std::string& from, const std::string& to) {
  std::string out = base;
  const auto at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return out.replace(at, from.size(), to);
}

// A line added to a valid config, and the fragments its refusal must hold.
struct BadAddition {
  std::string yaml;
  std::vector<std::string> fragments;
};

// Each addition to `base`, a valid config, is refused with its fragments.
void expect_each_rejected(const std::string& base, const std::vector<BadAddition>& additions) {
  for (const BadAddition& addition : additions) expect_rejected(base + addition.yaml, addition.fragments);
}

// `describe` of each planned case, in plan order.
std::vector<std::string> described(const Plan& plan, const std::function<std::string(const Case&)>& describe) {
  std::vector<std::string> lines;
  for (const Case& c : plan.cases) lines.push_back(describe(c));
  return lines;
}

// The plan of `yaml`, a valid config.
Plan plan_of(const std::string& yaml) { return make_plan(parse_config(yaml, "s.yaml")); }

// The labels of the masks planned for `variant`, in plan order.
std::vector<std::string> masks_of(const Plan& plan, const std::string& variant) {
  std::vector<std::string> labels;
  for (const Case& c : plan.cases) {
    if (c.variant == variant) labels.push_back(c.mask.label());
  }
  return labels;
}

TEST(Config, ParsesTheStudyConfig) {
  const Config config = load_config(ATTNSWEEP_SOURCE_DIR "/configs/blog.yaml");
  EXPECT_EQ(config.name, "blog");
  EXPECT_EQ(config.variants.size(), 7u);
  EXPECT_EQ(config.dtypes, std::vector<Dtype>{Dtype::bf16});
  EXPECT_EQ(config.masks, std::vector<Mask>{Mask(true)});
  ASSERT_EQ(config.shapes.size(), 1u);
  EXPECT_EQ(config.shapes[0].axes.at("batch"), std::vector<std::int64_t>{8});
  EXPECT_EQ(config.shapes[0].axes.at("seq_len"), std::vector<std::int64_t>{1024});
  EXPECT_EQ(config.measure.warmup, 10);
  EXPECT_EQ(config.measure.min_samples, 50);
  EXPECT_DOUBLE_EQ(config.measure.target_rel_stdev, 0.02);
  EXPECT_NE(config.yaml_text.find("name: blog"), std::string::npos);
}

TEST(Config, DefaultsWhenOptionalKeysAreAbsent) {
  const Config config = parse_config(kMinimal, "sweep.yaml");
  EXPECT_EQ(config.device, Device::automatic());
  EXPECT_EQ(config.seed, 0u);
  EXPECT_EQ(config.masks, std::vector<Mask>{Mask(true)});
  const MeasureSettings defaults;
  EXPECT_EQ(config.measure.warmup, defaults.warmup);
  EXPECT_EQ(config.measure.max_samples, defaults.max_samples);
  EXPECT_TRUE(config.measure.accuracy_check);
  EXPECT_FALSE(config.measure.traces);
  EXPECT_DOUBLE_EQ(config.measure.energy_window_ms, 0);  // off: the sweep takes no longer than before
  EXPECT_TRUE(config.measure.counters.empty());          // off likewise (issue 39)
}

// Issue 39: measure.counters names the counters, each once, in the order written; an
// empty list is off; a scalar is one counter.
TEST(Config, MeasureCountersNameTheHardwareCounters) {
  const Config both = parse_config(std::string(kMinimal) + "measure: {counters: [tensor_pipe, dram_bytes, tensor_pipe]}\n",
                                   "s.yaml");
  EXPECT_EQ(both.measure.counters, (std::vector<std::string>{"tensor_pipe", "dram_bytes"}));
  EXPECT_TRUE(parse_config(std::string(kMinimal) + "measure: {counters: []}\n", "s.yaml").measure.counters.empty());
  EXPECT_EQ(parse_config(std::string(kMinimal) + "measure: {counters: l2_hit_rate}\n", "s.yaml").measure.counters,
            std::vector<std::string>{"l2_hit_rate"});
}

TEST(Config, AllVariantsAndScalarsAsOneElementLists) {
  const Config config = parse_config(with(with(kMinimal, "[naive, sdpa_flash]", "all"), "[bf16]", "fp16"), "s.yaml");
  EXPECT_EQ(config.variants.size(), 7u);
  EXPECT_EQ(config.dtypes, std::vector<Dtype>{Dtype::fp16});
}

TEST(Config, MeasureSettingsAreRead) {
  const Config config = parse_config(std::string(kMinimal) + R"(measure:
  warmup: 7
  profiled_forwards: 4
  max_profile_attempts: 2
  min_samples: 3
  max_samples: 9
  target_rel_stdev: 0.005
  max_case_seconds: 1.5
  accuracy_check: false
  traces: true
  case_timeout_s: 30
  min_gpu_seconds: 0
  l2_flush: false
  cuda_graph: false
  hide_launch_latency: false
  throttle_fraction: 0.5
  case_order: shuffled
  regime: burst
  burst_cooldown_max_ms: 250
  burst_cooldown_case_max_s: 7.5
  burst_cooldown_run_max_s: 90
  energy_window_ms: 300
device: cuda:1
seed: 42
)", "s.yaml");
  EXPECT_EQ(config.measure.warmup, 7);
  EXPECT_EQ(config.measure.profiled_forwards, 4);
  EXPECT_EQ(config.measure.max_profile_attempts, 2);
  EXPECT_EQ(config.measure.min_samples, 3);
  EXPECT_EQ(config.measure.max_samples, 9);
  EXPECT_DOUBLE_EQ(config.measure.target_rel_stdev, 0.005);
  EXPECT_DOUBLE_EQ(config.measure.max_case_seconds, 1.5);
  EXPECT_FALSE(config.measure.accuracy_check);
  EXPECT_TRUE(config.measure.traces);
  EXPECT_DOUBLE_EQ(config.measure.case_timeout_s, 30);
  EXPECT_DOUBLE_EQ(config.measure.min_gpu_seconds, 0);
  EXPECT_FALSE(config.measure.l2_flush);
  EXPECT_FALSE(config.measure.cuda_graph);
  EXPECT_FALSE(config.measure.hide_launch_latency);
  EXPECT_DOUBLE_EQ(config.measure.throttle_fraction, 0.5);
  EXPECT_EQ(config.measure.case_order, CaseOrder::shuffled);
  EXPECT_EQ(config.measure.regime, MeasureRegime::burst);
  EXPECT_DOUBLE_EQ(config.measure.burst_cooldown_max_ms, 250);
  EXPECT_DOUBLE_EQ(config.measure.burst_cooldown_case_max_s, 7.5);
  EXPECT_DOUBLE_EQ(config.measure.burst_cooldown_run_max_s, 90);
  EXPECT_DOUBLE_EQ(config.measure.energy_window_ms, 300);
  EXPECT_EQ(config.device, Device::cuda(1));
  EXPECT_EQ(config.seed, 42u);
}

TEST(Config, PassesDefaultToForwardAndKeepTheOrderWritten) {
  EXPECT_EQ(parse_config(kMinimal, "sweep.yaml").passes, std::vector<Pass>{Pass::forward});
  const Config config = parse_config(std::string(kMinimal) + "passes: [backward, forward, forward_backward]\n", "s.yaml");
  EXPECT_EQ(config.passes, (std::vector<Pass>{Pass::backward, Pass::forward, Pass::forward_backward}));
  EXPECT_EQ(config.passes_where.line, 9);
  EXPECT_EQ(parse_config(std::string(kMinimal) + "passes: backward\n", "s.yaml").passes, std::vector<Pass>{Pass::backward});
}

TEST(ConfigRejects, UnknownOrRepeatedPasses) {
  expect_rejected(std::string(kMinimal) + "passes: [forward, bwd]\n",
                  {"sweep.yaml:9:19", "passes", "unknown value 'bwd'", "Allowed: forward, backward, forward_backward"});
  // A pass written twice counts once, as a value in every list (issue 55, item 16).
  EXPECT_EQ(parse_config(std::string(kMinimal) + "passes: [forward, backward, forward]\n", "s.yaml").passes,
            (std::vector<Pass>{Pass::forward, Pass::backward}));
  expect_rejected(std::string(kMinimal) + "passes: []\n", {"passes", "the list is empty"});
  expect_rejected(std::string(kMinimal) + "passes: {forward: 1}\n", {"passes", "got a mapping"});
  expect_rejected(std::string(kMinimal) + "exclude:\n  - {pass: backwards}\n",
                  {"exclude[0].pass", "unknown value 'backwards'", "did you mean 'backward'"});
  expect_rejected(std::string(kMinimal) + "measure:\n  passes: [forward]\n", {"measure.passes", "belongs at the top level"});
}

TEST(ConfigRejects, UnknownTopLevelKeyWithSuggestion) {
  expect_rejected(std::string(kMinimal) + "variantz: [naive]\n",
                  {"sweep.yaml:9:1", "variantz", "unknown key", "did you mean 'variants'", "Allowed:"});
}

TEST(ConfigRejects, UnknownMeasureKeyWithSuggestion) {
  expect_rejected(std::string(kMinimal) + "measure:\n  warmpu: 3\n",
                  {"sweep.yaml:10:3", "measure.warmpu", "did you mean 'warmup'"});
}

TEST(ConfigRejects, UnknownShapeKey) {
  expect_rejected(with(kMinimal, "  head_dim: 64", "  head_dim: 64\n  seqlen: 3"),
                  {"sweep.yaml:9:3", "shapes.seqlen", "did you mean 'seq_len'"});
}

TEST(ConfigRejects, WrongTypeForASize) {
  expect_rejected(with(kMinimal, "batch: 2", "batch: eight"), {"sweep.yaml:5:10", "shapes.batch", "expected an integer, got 'eight'"});
  expect_rejected(with(kMinimal, "batch: 2", "batch: 2.5"), {"shapes.batch", "expected an integer, got '2.5'"});
  expect_rejected(with(kMinimal, "batch: 2", "batch: {a: 1}"), {"shapes.batch", "got a mapping"});
}

TEST(ConfigRejects, ZeroNegativeAndAbsurdSizes) {
  expect_rejected(with(kMinimal, "heads: 4", "heads: 0"), {"sweep.yaml:6:10", "shapes.heads", "must be between 1 and 16777216, got 0"});
  expect_rejected(with(kMinimal, "head_dim: 64", "head_dim: -64"), {"shapes.head_dim", "got -64"});
  expect_rejected(with(kMinimal, "seq_len: 128", "seq_len: [128, 99999999999]"), {"shapes.seq_len", "got 99999999999"});
}

TEST(ConfigRejects, UnknownVariantWithSuggestion) {
  expect_rejected(with(kMinimal, "sdpa_flash]", "sdpa_flsh]"),
                  {"sweep.yaml:2:19", "variants", "unknown value 'sdpa_flsh'", "did you mean 'sdpa_flash'", "sdpa_cudnn"});
}

TEST(ConfigRejects, UnknownDtype) {
  expect_rejected(with(kMinimal, "[bf16]", "[bf16, fp8]"), {"sweep.yaml:3:16", "dtypes", "unknown value 'fp8'", "Allowed: bf16, fp16, fp32"});
}

TEST(ConfigRejects, EmptyLists) {
  expect_rejected(with(kMinimal, "[naive, sdpa_flash]", "[]"), {"variants", "the list is empty"});
  expect_rejected(with(kMinimal, "seq_len: 128", "seq_len: []"), {"shapes.seq_len", "the list is empty"});
}

TEST(ConfigRejects, YamlSyntaxErrorAndTabs) {
  expect_rejected("variants: [naive\ndtypes: bf16\n", {"sweep.yaml:", "YAML syntax error"});
  expect_rejected("variants: [naive]\n\tdtypes: bf16\n", {"sweep.yaml:", "YAML syntax error"});
}

TEST(ConfigRejects, EmptyFileAndNonMapping) {
  expect_rejected("", {"sweep.yaml", "the file is empty"});
  expect_rejected("# only a comment\n", {"the file is empty"});
  expect_rejected("- naive\n- sdpa_flash\n", {"sweep.yaml:1:1", "expected a mapping at the top level"});
}

TEST(ConfigRejects, MissingRequiredKeys) {
  expect_rejected("variants: [naive]\ndtypes: [bf16]\n", {"shapes", "missing"});
  expect_rejected("dtypes: [bf16]\nshapes: {batch: 1, heads: 1, seq_len: 1, head_dim: 8}\n", {"variants", "missing"});
  expect_rejected(with(kMinimal, "  seq_len: 128\n", ""), {"sweep.yaml:5:3", "shapes.seq_len", "missing"});
  expect_rejected(with(kMinimal, "  batch: 2\n", ""), {"shapes.batch", "missing"});
}

TEST(ConfigRejects, SeqLenTogetherWithSeqLenQ) {
  expect_rejected(with(kMinimal, "seq_len: 128", "seq_len: 128\n  seq_len_q: 1"), {"shapes.seq_len", "not both"});
  expect_rejected(with(kMinimal, "seq_len: 128", "seq_len_q: 1"), {"shapes.seq_len", "both seq_len_q and seq_len_kv"});
}

TEST(ConfigRejects, KvHeadsMustDivideHeads) {
  expect_rejected(with(kMinimal, "heads: 4", "heads: 4\n  kv_heads: 3"), {"sweep.yaml:7:3", "kv_heads", "kv_heads (3) must divide heads (4)"});
  expect_rejected(with(kMinimal, "heads: 4", "heads: 4\n  kv_heads: 8"), {"kv_heads (8) must divide heads (4)"});
}

TEST(ConfigRejects, BadBooleansNumbersAndDevice) {
  expect_each_rejected(kMinimal, {
      {"causal: maybe\n",
       {"sweep.yaml:9:9", "causal", "unknown value 'maybe'; allowed: true (top_left), false, top_left or bottom_right"}},
      {"measure: {min_samples: 10, max_samples: 5}\n", {"measure.max_samples", "at least measure.min_samples (10)"}},
      // The energy window (issue 24) named by file, line and column.
      {"measure:\n  energy_window_ms: 90000\n",
       {"sweep.yaml:10:21", "measure.energy_window_ms",
        "must be 0 (off) or at most 60000 (a minute per case), got 90000"}},
      {"measure: {energy_window: 300}\n", {"measure.energy_window", "unknown key; did you mean 'energy_window_ms'?"}},
      // Issue 39: a counter name that is CUPTI's metric, not one of ours, is refused with the list.
      {"measure:\n  counters: [dram_bytes, dram__bytes_read.sum]\n",
       {"sweep.yaml:10:26", "measure.counters", "unknown value 'dram__bytes_read.sum'.",
        "Allowed: dram_bytes, l2_hit_rate, sm_throughput, tensor_pipe"}},
      {"measure: {counters: {dram: true}}\n", {"measure.counters"}},
      {"measure: [1]\n", {"measure", "expected a mapping"}},
      {"device: tpu\n", {"sweep.yaml:9:9", "device", "allowed: auto, cpu, cuda, cuda:N"}},
      {"seed: -1\n", {"seed", "got -1"}},
  });
}

// One measure setting given a bad value (`measure: {key: value}`): the refusal names
// measure.<key> and says what is wrong.
struct BadMeasureSetting {
  const char* key;
  const char* value;
  const char* message;  // "": naming the key is enough
};

TEST(ConfigRejects, BadMeasureSettings) {
  const BadMeasureSetting settings[] = {
      {"target_rel_stdev", "0", "must be greater than 0"},
      {"max_case_seconds", "soon", "expected a number"},
      {"traces", "1", "expected true or false"},
      {"l2_flush", "yes please", "expected true or false"},
      {"throttle_fraction", "1.5", "at least 0 and under 1"},
      {"min_gpu_seconds", "-1", "must be at least 0, got -1"},
      {"hide_launch_latency", "2", "expected true or false, got '2'"},
      {"max_profile_attempts", "0", "must be between 1 and 100, got 0"},
      {"profiled_forwards", "0", "must be between 1 and 1000, got 0"},
      {"warmup", "-1", "must be between 0 and 100000, got -1"},
      {"min_samples", "0", "must be between 1 and 10000000, got 0"},
      {"case_order", "random", "unknown order 'random'; allowed: plan, shuffled"},
      {"regime", "bursty", "unknown regime 'bursty'; allowed: sustained, burst"},
      {"burst_cooldown_max_ms", "0", "must be greater than 0, got 0"},
      // The cool-down allowances (issue 21): positive numbers of seconds only.
      {"burst_cooldown_case_max_s", "0", "must be greater than 0, got 0"},
      {"burst_cooldown_case_max_s", "-5", "must be greater than 0, got -5"},
      {"burst_cooldown_run_max_s", "\"'; rm -rf /\"", ""},
      {"burst_cooldown_run_max_s", "[300]", ""},
      // The energy window (issue 24): 0 (off) up to a minute, in milliseconds.
      {"energy_window_ms", "-1", "must be at least 0, got -1"},
      {"energy_window_ms", "1s", "expected a number, got '1s'"},
      {"energy_window_ms", "[300]", "expected a number, got a list"},
  };
  for (const BadMeasureSetting& setting : settings) {
    std::vector<std::string> fragments = {std::string("measure.") + setting.key};
    if (*setting.message) fragments.push_back(setting.message);
    expect_rejected(std::string(kMinimal) + "measure: {" + setting.key + ": " + setting.value + "}\n", fragments);
  }
}

TEST(ConfigRejects, DuplicateKeys) {
  expect_rejected(std::string(kMinimal) + "dtypes: [fp32]\n", {"sweep.yaml:9:1", "dtypes", "duplicate key"});
}

TEST(ConfigRejects, MalformedZipAndExclude) {
  expect_rejected(with(kMinimal, "seq_len: 128", "zip: [{seq_len_q: 1, seq_len_kv: 8}, {seq_len_q: 2}]"),
                  {"shapes.zip[1]", "every zip row must set the same keys"});
  expect_rejected(with(kMinimal, "seq_len: 128", "seq_len: 128\n  zip: [{seq_len: 4}]"),
                  {"shapes.zip[0].seq_len", "also given as an axis"});
  expect_rejected(with(kMinimal, "seq_len: 128", "zip: {seq_len: 4}"), {"shapes.zip", "non-empty list"});
  expect_rejected(std::string(kMinimal) + "exclude: [{variant: naiv}]\n", {"exclude[0].variant", "did you mean 'naive'"});
  expect_rejected(std::string(kMinimal) + "exclude: [{colour: red}]\n", {"exclude[0].colour", "unknown key"});
  expect_rejected(std::string(kMinimal) + "exclude: {variant: naive}\n", {"exclude", "expected a list"});
}

TEST(ConfigRejects, SweepThatExcludesEverything) {
  expect_rejected(std::string(kMinimal) + "exclude: [{dtype: bf16}]\n", {"the sweep is empty", "2 cases are excluded"});
}

TEST(ConfigRejects, ANulByteWithItsLineAndColumn) {
  // Accepted before, it cut the stored config_yaml short and went into runs.name.
  expect_rejected(std::string(kMinimal) + "name: ab" + std::string(1, '\0') + "cd\n", {"sweep.yaml:9:9", "a NUL byte (0x00)"});
  expect_rejected(std::string(kMinimal) + "name: \"ab\\0cd\"\n", {"sweep.yaml:9:7", "name: contains a NUL character"});
  expect_rejected(std::string(kMinimal) + "description: \"\\0\"\n", {"description: contains a NUL character"});
  expect_rejected(std::string(kMinimal) + "name: a\x07" "b\n", {"sweep.yaml:9:8", "a control character (byte 0x07)"});
}

TEST(ConfigRejects, DeepNestingIsNamedAndDoesNotCrash) {
  // 100,000 brackets said "YAML syntax error: bad file" (yaml-cpp's recursion guard).
  expect_rejected(std::string(100000, '['), {"sweep.yaml:1:33", "nested deeper than 32 levels"});
  expect_rejected(std::string(100000, '[') + std::string(100000, ']'), {"sweep.yaml:1:33", "nested deeper than 32 levels"});
  expect_rejected("variants: " + std::string(100000, '{'), {"sweep.yaml:1:42", "nested deeper than 32 levels"});
  std::string block = "shapes:\n";
  for (int depth = 1; depth < 2000; ++depth) block += std::string(static_cast<std::size_t>(depth) * 2, ' ') + "a:\n";
  expect_rejected(block, {"sweep.yaml:33:", "nested deeper than 32 levels"});
  // The deepest valid config (a zip row in a list of blocks) is far from the limit.
  EXPECT_NO_THROW(parse_config("variants: [naive]\ndtypes: [fp32]\nshapes:\n  - {batch: [1], heads: 2, head_dim: 8, "
                               "zip: [{seq_len: 4}]}\n", "s.yaml"));
}

// Issue 33, item 10: an alias (*name) repeats its anchor's whole list, so a few
// kilobytes held millions of values (the file's 16 MiB limit counted bytes).
// Values are counted as if written out, where the limit is passed, before the
// document is built; the nested kind (each level ten aliases of the one
// before) is refused as soon, long before its 10^12 values.
TEST(ConfigRejects, ValuesAreCountedWithAliasesExpanded) {
  std::string lengths;
  for (int n = 1; n <= 5000; ++n) lengths += (n > 1 ? "," : "") + std::to_string(n);
  std::string repeated = std::string(kMinimal) + "exclude:\n  - {seq_len: &lengths [" + lengths + "]}\n";
  for (int r = 1; r < 599; ++r) repeated += "  - {page_size: " + std::to_string(r) + ", seq_len: *lengths}\n";
  // Refused at the alias that passes 2^20 values (rule 210), not after all 599.
  expect_rejected(repeated, {"sweep.yaml:219:", "more than 1048576 values once its YAML aliases (*name) are expanded",
                             "each alias counting the values of its anchor (&name)"});
  std::string nested = "a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  for (int level = 1; level <= 12; ++level) {
    const std::string previous = "*a" + std::to_string(level - 1);
    nested += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + previous;
    for (int i = 1; i < 10; ++i) nested += ", " + previous;
    nested += "]\n";
  }
  expect_rejected(nested, {"sweep.yaml:6:", "more than 1048576 values once its YAML aliases"});
  // An anchor used a few times is what aliases are for.
  std::string shared = std::string(kMinimal) + "exclude:\n  - {variant: naive, seq_len: &few [64, 128]}\n"
                                               "  - {variant: sdpa_flash, seq_len: *few}\n";
  EXPECT_EQ(parse_config(shared, "s.yaml").exclude.size(), 2u);
}

TEST(ConfigRejects, IntegersOutOfRangeSaySoAndGiveTheRange) {
  // stoll's overflow read as "expected an integer" before.
  expect_rejected(with(kMinimal, "batch: 2", "batch: 99999999999999999999"),
                  {"sweep.yaml:5:10", "shapes.batch: out of range: must be between 1 and 16777216, got 99999999999999999999"});
  expect_rejected(with(kMinimal, "batch: 2", "batch: -99999999999999999999"), {"shapes.batch: out of range"});
  expect_rejected(std::string(kMinimal) + "seed: 18446744073709551616\n",
                  {"sweep.yaml:9:7", "seed: out of range: must be between 0 and 9223372036854775807"});
  expect_rejected(std::string(kMinimal) + "measure: {max_case_seconds: 1e999}\n",
                  {"measure.max_case_seconds: out of range", "got 1e999", "must be greater than 0"});
  expect_rejected(std::string(kMinimal) + "measure: {warmup: 4294967296}\n",
                  {"measure.warmup: must be between 0 and 100000, got 4294967296"});
}

TEST(ConfigRejects, AnUnclosedBracketIsPointedAtNotTheEndOfTheFile) {
  expect_rejected(with(kMinimal, "[naive, sdpa_flash]", "[naive, sdpa_flash"),
                  {"sweep.yaml:2:11: variants: YAML syntax error: this '[' is never closed", "add the ']'"});
  expect_rejected(std::string(kMinimal) + "measure: {warmup: 3\n",
                  {"sweep.yaml:9:10: measure: YAML syntax error: this '{' is never closed", "add the '}'"});
  // Nested, and after quoted brackets and comments that must not count.
  expect_rejected(std::string(kMinimal) + "name: \"[x\"  # [ not this one\nexclude: [{variant: naive, dtype: [bf16]}\n",
                  {"sweep.yaml:10:10: exclude: YAML syntax error: this '[' is never closed"});
  // A closing bracket of the wrong kind is a different mistake, found where it is.
  expect_rejected(std::string(kMinimal) + "exclude: [{variant: naive, dtype: [bf16}]\n", {"sweep.yaml:9:40", "illegal flow end"});
  expect_rejected(with(kMinimal, "batch: 2", "batch: [2, 4"), {"sweep.yaml:5:10: YAML syntax error: this '[' is never closed"});
}

TEST(ConfigRejects, ASecondYamlDocumentIsRefusedWhereItStarts) {
  // yaml-cpp's Load reads the first document only: the second was silently dropped.
  expect_rejected(std::string(kMinimal) + "---\nvariants: [naive]\n", {"sweep.yaml:9:1", "a second YAML document starts here"});
  expect_rejected(std::string(kMinimal) + "---\n", {"sweep.yaml:9:1", "a second YAML document"});
  // One document with its markers is fine.
  EXPECT_NO_THROW(parse_config("---\n" + std::string(kMinimal) + "...\n", "s.yaml"));
}

TEST(ConfigRejects, AShapeAxisOrMeasureSettingAtTheTopLevelSaysWhereItBelongs) {
  expect_rejected(std::string(kMinimal) + "batch: [1]\n",
                  {"sweep.yaml:9:1", "batch: unknown key", "'batch' is a shape axis and belongs under 'shapes:'",
                   "Allowed: name, description"});
  expect_rejected(std::string(kMinimal) + "seq_len: 64\n", {"seq_len: unknown key", "belongs under 'shapes:'"});
  expect_rejected(std::string(kMinimal) + "warmup: 3\n", {"warmup: unknown key", "belongs under 'measure:'"});
  expect_rejected(with(kMinimal, "  head_dim: 64", "  head_dim: 64\n  dtypes: [fp32]"),
                  {"shapes.dtypes: unknown key", "belongs at the top level, not under 'shapes'"});
}

// load_config in a child process, so that a read that never ends (a FIFO with
// no writer, /dev/zero) fails the test instead of hanging it or filling memory.
std::string refusal_of(const std::string& path) {
  int channel[2];
  if (pipe(channel) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(channel[0]);
    const rlimit memory{std::size_t(2) << 30, std::size_t(2) << 30};
    setrlimit(RLIMIT_AS, &memory);
    alarm(10);
    std::string outcome = "accepted";
    try {
      load_config(path);
    } catch (const BadInputError& error) {
      outcome = error.what();
    } catch (const std::exception& error) {
      outcome = std::string("not a BadInputError: ") + error.what();
    }
    if (write(channel[1], outcome.data(), outcome.size()) < 0) _exit(1);
    _exit(0);
  }
  close(channel[1]);
  std::string outcome;
  char buffer[4096];
  for (ssize_t got; (got = read(channel[0], buffer, sizeof buffer)) > 0;) outcome.append(buffer, static_cast<std::size_t>(got));
  close(channel[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status)) + " (hung or out of memory)";
  return outcome;
}

TEST(ConfigFiles, OnlyARegularFileIsReadAndRefusalsComeAtOnce) {
  testing::ScratchDirectory scratch("attnsweep-config");
  EXPECT_NE(refusal_of("/dev/zero").find("/dev/zero: is a character device, not a regular file"), std::string::npos)
      << refusal_of("/dev/zero");
  ASSERT_EQ(mkfifo(scratch.path("fifo.yaml").c_str(), 0644), 0);
  const std::string fifo = refusal_of(scratch.path("fifo.yaml"));
  EXPECT_NE(fifo.find("fifo.yaml: is a pipe (FIFO), not a regular file"), std::string::npos) << fifo;
  const std::string directory = refusal_of(scratch.path(""));
  EXPECT_NE(directory.find("is a directory; expected a YAML config file"), std::string::npos) << directory;
  // A symlink is followed to the file it names.
  std::filesystem::create_symlink(ATTNSWEEP_SOURCE_DIR "/configs/blog.yaml", scratch.path("link.yaml"));
  EXPECT_EQ(load_config(scratch.path("link.yaml")).name, "blog");
}

TEST(ConfigFiles, AFileOverSixteenMebibytesIsRefusedBeforeItIsRead) {
  testing::ScratchDirectory scratch("attnsweep-config");
  const std::string big = scratch.write("big.yaml", "# a comment\n");
  std::filesystem::resize_file(big, (std::size_t(16) << 20) + 1);  // sparse: the rest reads as NUL bytes
  const std::string outcome = refusal_of(big);
  EXPECT_NE(outcome.find("big.yaml: is 16777217 bytes; a config file may be at most 16 MiB (16777216 bytes)"), std::string::npos) << outcome;
  std::filesystem::resize_file(big, std::size_t(16) << 20);  // at the limit: read, then refused for its NULs
  EXPECT_NE(refusal_of(big).find("big.yaml:2:1: a NUL byte"), std::string::npos) << refusal_of(big);
}

TEST(ConfigFiles, WhyAPathCannotBeOpenedIsSaid) {
  // Each said "config file not found" before.
  testing::ScratchDirectory scratch("attnsweep-config");
  std::filesystem::create_symlink("loop-b.yaml", scratch.path("loop-a.yaml"));
  std::filesystem::create_symlink("loop-a.yaml", scratch.path("loop-b.yaml"));
  EXPECT_NE(refusal_of(scratch.path("loop-a.yaml")).find("loop-a.yaml: too many levels of symbolic links"), std::string::npos)
      << refusal_of(scratch.path("loop-a.yaml"));
  const std::string long_name = scratch.path(std::string(300, 'x') + ".yaml");
  EXPECT_NE(refusal_of(long_name).find("xxx.yaml: file name too long (at most 255 bytes a name"), std::string::npos)
      << refusal_of(long_name);
  const std::string file = scratch.write("file.yaml", kMinimal);
  EXPECT_NE(refusal_of(file + "/sweep.yaml").find("a part of the path is not a directory"), std::string::npos)
      << refusal_of(file + "/sweep.yaml");
  EXPECT_NE(refusal_of(scratch.path("absent.yaml")).find("absent.yaml: config file not found"), std::string::npos);
  if (geteuid() != 0) {  // root reads any file
    chmod(file.c_str(), 0);
    EXPECT_NE(refusal_of(file).find("file.yaml: permission denied"), std::string::npos) << refusal_of(file);
  }
}

TEST(ConfigFiles, MissingFileAndDirectoryAreBadInput) {
  EXPECT_THROW(load_config("/nonexistent/sweep.yaml"), BadInputError);
  try {
    load_config(ATTNSWEEP_SOURCE_DIR "/configs");
    FAIL();
  } catch (const BadInputError& error) {
    EXPECT_NE(std::string(error.what()).find("is a directory"), std::string::npos);
  }
}

TEST(ConfigFiles, ShippedConfigsAreValid) {
  for (const auto& entry : std::filesystem::directory_iterator(ATTNSWEEP_SOURCE_DIR "/configs")) {
    const Config config = load_config(entry.path().string());
    EXPECT_FALSE(make_plan(config).cases.empty()) << entry.path();
  }
}

const char* const kServing = R"(
variants: [naive, sdpa_flash]
dtypes: [bf16]
shapes:
  - {batch: 2, heads: 8, kv_heads: 2, seq_len_q: 4, seq_len_kv: 4096, head_dim: 128}
)";

// Issue 25: `causal` takes an alignment, `window` a sliding window; they cross.
TEST(ConfigServing, CausalAlignmentsCrossWindowsIntoMasks) {
  const Config config = parse_config(std::string(kServing) +
                                         "causal: [true, bottom_right, false]\n"
                                         "window: [none, {left: 1024}, {left: 64, right: 0}]\n",
                                     "s.yaml");
  ASSERT_EQ(config.masks.size(), 9u);
  EXPECT_EQ(config.masks[0], Mask(true));
  EXPECT_EQ(config.masks[1], Mask(CausalAlignment::top_left, 1024, 0));  // right is 0 under a causal mask
  EXPECT_EQ(config.masks[2], Mask(CausalAlignment::top_left, 64, 0));
  EXPECT_EQ(config.masks[3], Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt));
  EXPECT_EQ(config.masks[6], Mask(false));
  EXPECT_EQ(config.masks[7], Mask(CausalAlignment::none, 1024, std::nullopt));
  EXPECT_EQ(config.masks[8], Mask(CausalAlignment::none, 64, 0));
  EXPECT_EQ(config.masks[7].label(), "window[1024,inf]");
  EXPECT_EQ(config.masks[4].label(), "causal_bottom_right window[1024,0]");
  // Planned per shape in canonical form (Mask::canonical): with 4 queries, a top-left window of
  // 64 or 1024 keys back reaches key 0 from every row (plain top-left causal), and a window
  // without causal but right 0 is the bottom-right causal one: 6 masks of the 9 remain.
  const Plan plan = make_plan(config);
  ASSERT_EQ(plan.cases.size(), 12u);  // 6 masks x 2 variants
  EXPECT_EQ(plan.duplicates, 6);
  EXPECT_EQ(masks_of(plan, "naive"),
            (std::vector<std::string>{"causal", "causal_bottom_right", "causal_bottom_right window[1024,0]",
                                      "causal_bottom_right window[64,0]", "full", "window[1024,inf]"}));
  EXPECT_EQ(plan.cases[2].label(), "naive 2x8/2x4x4096x128 bf16 causal_bottom_right");
  // A two-sided window under a causal mask is refused, not silently cut to one side.
  expect_rejected(std::string(kServing) + "causal: [true, false]\nwindow: {left: 64, right: 64}\n",
                  {"window.right", "is 64 under causal: top_left"});
}

// One set of keys is one case whatever the config wrote: bottom right on a square shape is
// the top left (compare then matches it with a run that wrote causal: true).
TEST(ConfigServing, OneMaskWrittenTwoWaysIsOneCase) {
  const Plan plan = plan_of(
      "variants: [naive]\ndtypes: [bf16]\ncausal: [true, bottom_right]\n"
      "shapes:\n  - {batch: 1, heads: 2, seq_len: 64, head_dim: 16}\n"
      "  - {batch: 1, heads: 2, seq_len_q: 4, seq_len_kv: 64, head_dim: 16}\n");
  EXPECT_EQ(described(plan, [](const Case& c) { return c.label(); }),
            (std::vector<std::string>{"naive 1x2x64x16 bf16 causal", "naive 1x2x4x64x16 bf16 causal",
                                      "naive 1x2x4x64x16 bf16 causal_bottom_right"}));
  EXPECT_EQ(plan.duplicates, 1);
}

TEST(ConfigServing, ExcludeMatchesAWindowAndTheEmptyRowCheckSkipsExcludedCases) {
  // Excluded: on 32 queries over 16 keys the bottom-right masks (their first rows would see no
  // key) and the top-left window (its rows from 20 on would see none).
  const Plan plan = plan_of(
      "variants: [naive]\ndtypes: [bf16]\ncausal: [true, bottom_right]\n"
      "window: [none, {left: 4}]\n"
      "shapes:\n  - {batch: 1, heads: 2, seq_len_q: [8, 32], seq_len_kv: 16, head_dim: 16}\n"
      "exclude:\n  - {causal: bottom_right, seq_len_q: 32}\n  - {window: {left: 4}, seq_len_q: 32}\n");
  EXPECT_EQ(described(plan, [](const Case& c) { return std::to_string(c.shape.seq_len_q) + " " + c.mask.label(); }),
            (std::vector<std::string>{"8 causal", "8 causal window[4,0]", "8 causal_bottom_right",
                                      "8 causal_bottom_right window[4,0]", "32 causal"}));
  expect_rejected("variants: [naive]\ndtypes: [bf16]\nshapes: {batch: 1, heads: 2, seq_len: 8, head_dim: 16}\n"
                  "exclude:\n  - {window: 4}\n",
                  {"exclude[0].window", "expected none or a mapping {left: N, right: M}"});
}

TEST(ConfigServing, ExcludeMatchesAnAlignmentOrAnyCausalMask) {
  const Plan plan = plan_of(std::string(kServing) +
                            "causal: [top_left, bottom_right, false]\n"
                            "exclude:\n  - {variant: naive, causal: bottom_right}\n"
                            "  - {variant: sdpa_flash, causal: true}\n");
  EXPECT_EQ(described(plan, [](const Case& c) { return c.variant + " " + c.mask.label(); }),
            (std::vector<std::string>{"naive causal", "naive full", "sdpa_flash full"}));
}

TEST(ConfigServing, BadWindowsAndMasksThatLeaveAQueryWithoutKeysAreRefused) {
  expect_each_rejected(kServing, {
      {"window: {left: -1}\n", {"sweep.yaml:6:16", "window.left", "between 0 and"}},
      {"window: {lft: 4}\n", {"window", "lft"}},
      {"window: 4096\n", {"sweep.yaml:6:9", "window", "expected a mapping {left: N, right: M}"}},
      {"window: []\n", {"window", "the list is empty"}},
      {"window: {}\n", {"window", "got an empty mapping"}},
      {"window: {left: 4, right: }\n",
       {"window.right", "is empty; give a number of keys, or leave right out for no bound"}},
      {"causal: bottom_right\nwindow: [none, {left: 8, right: 4}]\n",
       {"window[1].right", "is 4 under causal: bottom_right"}},
      {"causal: bottom_right\nwindow: {left: 8, right: 4}\n",
       {"sweep.yaml:7:26", "window.right", "is 4 under causal: bottom_right", "right: 0 or leave it out"}},
      {"causal: bottom_right\nwindow: {right: 0}\n",
       {"window.left", "missing: under a causal mask a window needs left"}},
      {"causal: [top_left, sideways]\n", {"causal", "unknown value 'sideways'"}},
  });
  // More queries than keys, aligned to the bottom right: the first rows see no key.
  expect_rejected("variants: [naive]\ndtypes: [bf16]\ncausal: bottom_right\n"
                  "shapes:\n  - {batch: 1, heads: 2, seq_len_q: 8, seq_len_kv: 4, head_dim: 64}\n",
                  {"sweep.yaml:5:5", "shapes", "with the mask 'causal_bottom_right', query row 0 of shape 1x2x8x4x64 sees no key",
                   "seq_len_q <= seq_len_kv"});
  // A window that leaves the top-left diagonal behind: row 6 of 8 queries over 4 keys with 1 key back.
  expect_rejected("variants: [naive]\ndtypes: [bf16]\ncausal: false\nwindow: {left: 1, right: 0}\n"
                  "shapes:\n  - {batch: 1, heads: 2, seq_len_q: 2, seq_len_kv: 9, head_dim: 64}\n"
                  "  - {batch: 1, heads: 2, seq_len_q: 8, seq_len_kv: 4, head_dim: 64}\n",
                  {"shapes[1]", "query row 0 of shape 1x2x8x4x64 sees no key"});
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

const char* const kVarlen = R"(
variants: [naive, sdpa_flash]
dtypes: [bf16]
causal: bottom_right
shapes:
  - heads: 8
    kv_heads: 2
    head_dim: 64
)";

// Issue 25: a shape block's `varlen` lists or draws each sequence's lengths.
TEST(ConfigVarlen, ListedLengthsMakeOneBatchOfThoseSequences) {
  const Plan plan = plan_of(std::string(kVarlen) +
                            "    varlen: {seq_len_kv: [512, 40, 3000], seq_len_q: 4}\n"
                            "    page_size: [0, 16]\n");
  ASSERT_EQ(plan.cases.size(), 4u);  // 2 page sizes x 2 variants
  const Shape& shape = plan.cases[0].shape;
  EXPECT_EQ(shape.batch, 3);
  EXPECT_EQ(shape.seq_lens_q, (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(shape.seq_lens_kv, (std::vector<std::int64_t>{512, 40, 3000}));
  EXPECT_EQ(shape.seq_len_q, 4);
  EXPECT_EQ(shape.seq_len_kv, 3000);
  EXPECT_EQ(shape.query_tokens(), 12);
  EXPECT_EQ(shape.page_size, 0);
  EXPECT_EQ(plan.cases[2].shape.page_size, 16);
  EXPECT_EQ(plan.cases[0].label(), "naive 3x8/2xvarlen[q 4, kv 40-3000 #bb719007da00]x64 bf16 causal_bottom_right");
  EXPECT_EQ(plan.cases[2].label(), "naive 3x8/2xvarlen[q 4, kv 40-3000 #bb719007da00]x64 paged16 bf16 causal_bottom_right");
  const Shape second = shape.sequence(1);
  EXPECT_EQ(second.batch, 1);
  EXPECT_EQ(second.seq_len_q, 4);
  EXPECT_EQ(second.seq_len_kv, 40);
  EXPECT_FALSE(second.variable_length());
}

TEST(ConfigVarlen, PrefillTakesEachSequencesOwnLengthAndAListGivesOneEach) {
  const Config prefill = parse_config(std::string(kVarlen) + "    varlen: {seq_len_kv: [5, 9], seq_len_q: seq_len_kv}\n", "v.yaml");
  EXPECT_EQ(make_plan(prefill).cases[0].shape.seq_lens_q, (std::vector<std::int64_t>{5, 9}));
  const Config listed = parse_config(std::string(kVarlen) + "    batch: 2\n    varlen: {seq_len_kv: [5, 9], seq_len_q: [1, 3]}\n", "v.yaml");
  EXPECT_EQ(make_plan(listed).cases[0].shape.seq_lens_q, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(make_plan(listed).cases[0].shape.query_tokens(), 4);
}

// The draw is the config's: same seed, same lengths (and `plan` shows them); another seed, others.
TEST(ConfigVarlen, DrawnLengthsComeFromTheSeedAndStayInTheirBounds) {
  const std::string block = "    batch: 64\n    varlen: {seq_len_kv: {distribution: uniform, min: 100, max: 200}, seq_len_q: 1}\n";
  const auto lengths = [&](const std::string& seed) {
    return make_plan(parse_config(std::string(kVarlen) + block + "seed: " + seed + "\n", "v.yaml")).cases[0].shape.seq_lens_kv;
  };
  const auto first = lengths("7");
  // Where the block is written does not move its draw: another block before it leaves it as it was.
  const std::string before = "  - {batch: 1, heads: 8, kv_heads: 2, head_dim: 64, seq_len: 16}\n";
  std::string moved(kVarlen);
  moved.replace(moved.find("  - heads: 8"), 0, before);
  EXPECT_EQ(make_plan(parse_config(moved + block + "seed: 7\n", "v.yaml")).cases[2].shape.seq_lens_kv, first);
  // A draw's own seed gives another batch of the same kind.
  std::string reseeded = block;
  reseeded.replace(reseeded.find("max: 200"), 8, "max: 200, seed: 1");
  EXPECT_NE(make_plan(parse_config(std::string(kVarlen) + reseeded + "seed: 7\n", "v.yaml")).cases[0].shape.seq_lens_kv, first);
  ASSERT_EQ(first.size(), 64u);
  EXPECT_EQ(first, lengths("7"));
  EXPECT_NE(first, lengths("8"));
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](std::int64_t n) { return n >= 100 && n <= 200; }));
  EXPECT_GT(*std::max_element(first.begin(), first.end()) - *std::min_element(first.begin(), first.end()), 50);
  // A normal draw clipped to its bounds: mean 1000, stdev 300 over 2000 sequences.
  const auto normal = draw_lengths({LengthDistribution::normal, 500, 1400, 1000, 300}, 2000, 3);
  double sum = 0;
  for (const std::int64_t n : normal) sum += static_cast<double>(n);
  EXPECT_NEAR(sum / 2000, 1000, 25);
  EXPECT_EQ(*std::min_element(normal.begin(), normal.end()), 500);   // some clipped at min
  EXPECT_EQ(*std::max_element(normal.begin(), normal.end()), 1400);  // and at max
  // mt19937_64 is fixed by the standard and the transform is ours: these lengths never change
  // with the compiler or the library (1 + the engine's output mod 1000, seed 5).
  EXPECT_EQ(draw_lengths({LengthDistribution::uniform, 1, 1000, 0, 0}, 3, 5), (std::vector<std::int64_t>{343, 729, 201}));
}

// A variable-length batch's mask in the canonical form its sequences share: a
// prefill's bottom right is causal, a window wider than every sequence is none;
// where the sequences disagree the mask stays as written.
TEST(ConfigVarlen, AMaskEverySequenceSimplifiesAlikeIsPlannedOnceInThatForm) {
  const Plan plan = plan_of(std::string(kVarlen) +
                            "    varlen: {seq_len_kv: [100, 300], seq_len_q: seq_len_kv}\n"
                            "  - {heads: 8, kv_heads: 2, head_dim: 64, varlen: {seq_len_kv: [100, 300], seq_len_q: 4}}\n"
                            "window: [none, {left: 1000}, {left: 200}]\n");
  // The prefill's 200-key window: the 100-token sequence's form drops it, the 300-token one's keeps
  // it; they disagree, so it stays as written.
  EXPECT_EQ(masks_of(plan, "naive"), (std::vector<std::string>{"causal", "causal_bottom_right window[200,0]",
                                                               "causal_bottom_right",
                                                               "causal_bottom_right window[200,0]"}));
  EXPECT_EQ(plan.duplicates, 4);  // the 1000-key window of each batch, for 2 variants
}

TEST(ConfigVarlen, BadVarlenBlocksAreRefusedWithWhereAndWhatIsAllowed) {
  // A batch of 2 single-query sequences whose key/value lengths are drawn as `seq_len_kv` says.
  const auto drawn = [](const std::string& seq_len_kv) {
    return "    batch: 2\n    varlen: {seq_len_kv: " + seq_len_kv + ", seq_len_q: 1}\n";
  };
  expect_each_rejected(kVarlen, {
      {"    varlen: [512, 1024]\n", {"shapes[0].varlen", "expected a mapping"}},
      {"    varlen: {seq_len_q: 1}\n", {"shapes[0].varlen.seq_len_kv", "missing"}},
      {"    varlen: {seq_len_kv: [5, 9]}\n", {"shapes[0].varlen.seq_len_q", "missing", "seq_len_kv (prefill"}},
      {"    batch: 3\n    varlen: {seq_len_kv: [5, 9], seq_len_q: 1}\n",
       {"varlen.seq_len_kv", "lists 2 lengths, but batch is 3"}},
      {"    varlen: {seq_len_kv: [5, 9], seq_len_q: [1, 2, 3]}\n", {"varlen.seq_len_q", "lists 3 lengths for 2"}},
      {"    varlen: {seq_len_kv: [5, 9], seq_len_q: kv}\n",
       {"varlen.seq_len_q", "unknown value 'kv'", "seq_len_kv (each sequence's own length)"}},
      {"    batch: 2\n    varlen: {seq_len_kv: [5, 9], seq_len_q: 1}\n    page_size: [0, 16]\n"
       "exclude: [{page_size: -1}]\n",
       {"exclude[0].page_size", "between 0 and"}},
      {"    varlen: {seq_len_kv: [5, 0], seq_len_q: 1}\n", {"varlen.seq_len_kv", "between 1 and"}},
      // A number out of range says the range, as in a list (issue 33: -1 was an "unknown value").
      {"    varlen: {seq_len_kv: [5, 9], seq_len_q: -1}\n",
       {"sweep.yaml:9:45: shapes[0].varlen.seq_len_q: must be between 1 and 16777216, got -1"}},
      {"    varlen: {seq_len_kv: [5, 9], seq_len_q: [1, -1]}\n",
       {"sweep.yaml:9:49: shapes[0].varlen.seq_len_q: must be between 1 and 16777216, got -1"}},
      {"    varlen: {seq_len_kv: [5, 9], seq_len_q: 0}\n", {"varlen.seq_len_q: must be between 1 and"}},
      {"    batch: 600000\n    varlen: {seq_len_kv: {distribution: uniform, min: 1, max: 9}, seq_len_q: 1}\n",
       {"sweep.yaml:9:12: shapes[0].batch: a variable-length batch holds at most 524288 sequences", "got 600000"}},
      {"    seq_len: 64\n    varlen: {seq_len_kv: [5, 9], seq_len_q: 1}\n",
       {"shapes[0].seq_len", "takes its lengths from varlen"}},
      {"    varlen: {seq_len_kv: {distribution: uniform, min: 1, max: 9}, seq_len_q: 1}\n",
       {"shapes[0].batch", "a drawn varlen needs the number of sequences"}},
      {drawn("{distribution: zipf, min: 1, max: 9}"),
       {"distribution", "unknown distribution 'zipf'; allowed: uniform, normal"}},
      {drawn("{distribution: uniform, min: 9, max: 3}"), {"seq_len_kv.max", "between 9 and"}},
      {drawn("{distribution: normal, min: 1, max: 9}"), {"seq_len_kv.mean", "the normal draw needs mean and stdev"}},
      {"    batch: [2, 4]\n    varlen: {seq_len_kv: [5, 9], seq_len_q: 1}\n",
       {"shapes[0].batch", "one batch: its number of sequences"}},
      {"    page_size: -1\n    seq_len: 64\n", {"page_size", "between 0 and"}},
      {drawn("{distribution: uniform, min: 1, max: 9, seed: -3}"),
       {"sweep.yaml:10:72", "varlen.seq_len_kv.seed", "between 0 and"}},
      {drawn("{distribution: normal, min: 1, max: 9, mean: 5, stdev: -1}"),
       {"varlen.seq_len_kv.stdev", "must be at least 0"}},
      {drawn("{distribution: uniform, min: 1, max: 9, mean: 5}"),
       {"varlen.seq_len_kv.mean", "only the normal draw takes mean"}},
      {drawn("{distribution: uniform, min: 1, max: 9, mode: 3}"), {"varlen.seq_len_kv", "mode"}},
      // Sequence 1 decodes 8 tokens over 5 keys, bottom right: its first query sees no key.
      {"    varlen: {seq_len_kv: [512, 5], seq_len_q: 8}\n",
       {"query row 0 of sequence 1 of shape 2x8/2xvarlen[q 8, kv 5-512 #66c083eaf7a9]x64 sees no key",
        "seq_len_q 8, seq_len_kv 5"}},
  });
}

TEST(ConfigVarlen, ExcludeMatchesThePageSizeAndAShapeListedTwiceIsPlannedOnce) {
  const Plan plan = plan_of(std::string(kVarlen) +
                            "    varlen: {seq_len_kv: [64, 32], seq_len_q: 1}\n"
                            "    page_size: [0, 16]\n"
                            "  - {heads: 8, kv_heads: 2, head_dim: 64, varlen: {seq_len_kv: [64, 32], seq_len_q: 1}}\n"
                            "  - {heads: 8, kv_heads: 2, head_dim: 64, varlen: {seq_len_kv: [32, 64], seq_len_q: 1}}\n"
                            "exclude: [{variant: sdpa_flash, page_size: 16}, {variant: naive, page_size: 0}]\n");
  // [64,32] x {0,16}, [32,64] x {0}: the second block's [64,32] is a duplicate; naive contiguous
  // and flash paged are excluded.
  ASSERT_EQ(plan.cases.size(), 3u);
  EXPECT_EQ(plan.duplicates, 2);
  EXPECT_EQ(plan.excluded, 3);
  EXPECT_EQ(plan.cases[0].label(), "sdpa_flash " + plan.cases[0].shape.label() + " bf16 causal_bottom_right");
  EXPECT_EQ(plan.cases[0].shape.page_size, 0);
  EXPECT_EQ(plan.cases[1].variant, "naive");
  EXPECT_EQ(plan.cases[1].shape.page_size, 16);
  EXPECT_EQ(plan.cases[2].shape.seq_lens_kv, (std::vector<std::int64_t>{32, 64}));
}

// Issue 36: head_dim_v is a size like head_dim: at least 1, an integer, in a
// shape block, a zip row or an exclude rule; where it is wrong the message says
// where and what is allowed.
TEST(Config, AValueHeadDimIsASizeOfItsOwnRefusedWhereItIsWrong) {
  const std::string base = "variants: [naive]\ndtypes: [fp32]\nshapes:\n  batch: 1\n  heads: 2\n  seq_len: 8\n"
                           "  head_dim: 16\n";
  EXPECT_EQ(plan_of(base + "  head_dim_v: 8\n").cases.at(0).shape.value_dim(), 8);
  expect_each_rejected(base, {{"  head_dim_v: 0\n", {"sweep.yaml:8", "shapes.head_dim_v", "between 1 and"}},
                              {"  head_dim_v: wide\n", {"sweep.yaml:8", "shapes.head_dim_v"}},
                              {"  head_dim_v: 8.5\n", {"sweep.yaml:8", "shapes.head_dim_v"}},
                              {"exclude: [{head_dim_v: 0}]\n", {"sweep.yaml:8", "exclude[0].head_dim_v"}}});
}

// Issue 36: softcap is none, a cap above 0, or a list of them, at the top level
// and in an exclude rule; anything else names the line, the key and what is allowed.
TEST(Config, ASoftcapIsNoneOrACapAboveZeroWhereverItIsWritten) {
  const std::string base = "variants: [naive]\ndtypes: [fp32]\nshapes: {batch: 1, heads: 2, seq_len: 8, head_dim: 16}\n";
  EXPECT_DOUBLE_EQ(*plan_of(base + "softcap: 50\n").cases.at(0).scores.softcap, 50.0);
  EXPECT_FALSE(plan_of(base + "softcap: none\n").cases.at(0).scores.any());
  EXPECT_EQ(plan_of(base + "softcap: [none, 1e1]\n").cases.at(1).label(), "naive 1x2x8x16 fp32 causal softcap10");
  // A value written twice counts once, by value (issue 55, item 16).
  EXPECT_EQ(plan_of(base + "softcap: [none, ~, 30, 30.0]\n").cases.size(), 2u);
  expect_each_rejected(base, {{"softcap: 0\n", {"sweep.yaml:4", "softcap: '0' is not a cap", "none (no soft-capping)"}},
                              {"softcap: inf\n", {"sweep.yaml:4", "softcap: 'inf' is not a cap"}},
                              {"softcap: {cap: 3}\n", {"sweep.yaml:4", "softcap: expected none"}},
                              {"softcap: 1e39\n", {"sweep.yaml:4", "softcap: '1e39' is more than float32 holds"}},
                              {"exclude: [{softcap: -3}]\n", {"sweep.yaml:4", "exclude[0].softcap: '-3' is not a cap"}},
                              {"softcaps: 3\n", {"sweep.yaml:4", "softcaps"}}});
}

// Issue 36: alibi and sinks are true, false or a list of both, at the top level
// and in an exclude rule; crossed with softcap; anything else names the line,
// the key and what is allowed.
TEST(Config, AlibiAndSinksAreTrueFalseOrBothWhereverTheyAreWritten) {
  const std::string base = "variants: [naive]\ndtypes: [fp32]\nshapes: {batch: 1, heads: 2, seq_len: 8, head_dim: 16}\n";
  EXPECT_TRUE(plan_of(base + "alibi: true\n").cases.at(0).scores.alibi);
  EXPECT_FALSE(plan_of(base + "alibi: false\n").cases.at(0).scores.any());
  EXPECT_FALSE(plan_of(base + "sinks: false\n").cases.at(0).scores.any());
  EXPECT_EQ(plan_of(base + "sinks: [true, True]\nalibi: [false, false]\n").cases.size(), 1u);  // each once (issue 55, item 16)
  const Plan crossed = plan_of(base + "softcap: [none, 30]\nalibi: [false, true]\nsinks: true\n");
  std::vector<std::string> labels;
  for (const Case& c : crossed.cases) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"naive 1x2x8x16 fp32 causal sinks", "naive 1x2x8x16 fp32 causal alibi sinks",
                                              "naive 1x2x8x16 fp32 causal softcap30 sinks",
                                              "naive 1x2x8x16 fp32 causal softcap30 alibi sinks"}));
  expect_each_rejected(base, {{"alibi: yes\n", {"sweep.yaml:4", "alibi: expected true or false, got 'yes'"}},
                              {"sinks: 1\n", {"sweep.yaml:4", "sinks: expected true or false, got '1'"}},
                              {"alibi: []\n", {"sweep.yaml:4", "alibi: the list is empty"}},
                              {"alibi: {slopes: 8}\n", {"sweep.yaml:4", "alibi: expected true, false or a list of them"}},
                              {"exclude: [{sinks: maybe}]\n", {"sweep.yaml:4", "exclude[0].sinks: expected true or false"}},
                              {"alibis: true\n", {"sweep.yaml:4", "alibis"}}});
  // deterministic (issue 36) reads the same way, after the score modifications in the label.
  const Plan both = plan_of(base + "alibi: true\ndeterministic: [false, true]\n");
  ASSERT_EQ(both.cases.size(), 2u);
  EXPECT_FALSE(both.cases[0].deterministic);
  EXPECT_EQ(both.cases[1].label(), "naive 1x2x8x16 fp32 causal alibi deterministic");
  expect_each_rejected(base, {{"deterministic: on\n", {"sweep.yaml:4", "deterministic: expected true or false, got 'on'"}},
                              {"exclude: [{deterministic: 2}]\n", {"sweep.yaml:4", "exclude[0].deterministic"}}});
}

}  // namespace
}  // namespace attnsweep
