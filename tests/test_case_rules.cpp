// Issue 38: a nightly config's per-case rules, read from YAML and matched to
// cases by their fields' globs; the first matching rule gives a case its settings.
#include <gtest/gtest.h>

#include "runner/compare/case_rule_match.hpp"
#include "runner/compare/compare_settings.hpp"
#include "runner/config/config.hpp"

namespace attnsweep {
namespace {

compare::CaseKey key(const std::string& variant, Dtype dtype, Pass pass, std::int64_t seq_len) {
  compare::CaseKey k;
  k.variant = variant;
  k.shape = Shape{1, 32, 8, seq_len, seq_len, 128};
  k.dtype = dtype;
  k.mask.causal = CausalAlignment::top_left;
  k.pass = pass;
  k.device_kind = DeviceKind::cuda;
  return k;
}

TEST(CaseRules, TheFirstRuleWhoseGlobsAllMatchGivesTheCaseItsThresholdOrItsIgnore) {
  const Config config = parse_config(R"(name: rules
variants: [sdpa_flash, sdpa_cudnn, sdpa_math]
dtypes: [bf16, fp16]
passes: [forward, backward]
shapes: {batch: 1, heads: 32, kv_heads: 8, seq_len: [1024, 8192], head_dim: 128}
nightly:
  rules:
    - {variant: sdpa_math, ignore: "the math backend is a reference, not a product"}
    - {variant: "sdpa_*", shape: "*x8192x*", pass: backward, threshold: 8}
    - {case: "sdpa_cudnn * fp16 *", threshold: 3}
)",
                                     "rules.yaml");
  ASSERT_EQ(config.nightly_rules.size(), 3u);
  EXPECT_EQ(config.nightly_rules[0].ignore, "the math backend is a reference, not a product");
  EXPECT_EQ(config.nightly_rules[1].cases.text(), "variant sdpa_* shape *x8192x* pass backward");
  EXPECT_DOUBLE_EQ(*config.nightly_rules[1].threshold, 0.08);
  EXPECT_EQ(config.nightly_rules[2].where, "rules.yaml:10:7");

  compare::CompareSettings settings;
  settings.rules = config.nightly_rules;
  const auto math = key("sdpa_math", Dtype::bf16, Pass::backward, 8192);
  ASSERT_NE(settings.rule_for(math), nullptr);
  EXPECT_FALSE(settings.rule_for(math)->ignore.empty());
  EXPECT_DOUBLE_EQ(settings.for_case(key("sdpa_flash", Dtype::bf16, Pass::backward, 8192)).threshold, 0.08);
  EXPECT_DOUBLE_EQ(settings.for_case(key("sdpa_flash", Dtype::bf16, Pass::forward, 8192)).threshold, 0.05);
  EXPECT_DOUBLE_EQ(settings.for_case(key("sdpa_flash", Dtype::bf16, Pass::backward, 1024)).threshold, 0.05);
  // First match wins: cuDNN's fp16 backward at 8192 takes rule 2's 8%, its forward rule 3's 3%.
  EXPECT_DOUBLE_EQ(settings.for_case(key("sdpa_cudnn", Dtype::fp16, Pass::backward, 8192)).threshold, 0.08);
  EXPECT_DOUBLE_EQ(settings.for_case(key("sdpa_cudnn", Dtype::fp16, Pass::forward, 8192)).threshold, 0.03);
  EXPECT_EQ(settings.rule_for(key("sdpa_cudnn", Dtype::bf16, Pass::forward, 1024)), nullptr);
  EXPECT_TRUE(compare::matches(CasePattern{"sdpa_cudnn 1x32/8x1024x128 fp16 causal cuda", "", "", "", "", ""},
                               key("sdpa_cudnn", Dtype::fp16, Pass::forward, 1024)))
      << key("sdpa_cudnn", Dtype::fp16, Pass::forward, 1024).label();
}

TEST(CaseRules, ABadRuleIsRefusedWithItsKey) {
  const std::string head = "name: r\nvariants: [naive]\ndtypes: [fp32]\nshapes: {batch: 1, heads: 1, seq_len: 8, head_dim: 8}\n";
  for (const auto& [nightly, message] : std::vector<std::pair<std::string, std::string>>{
           {"nightly: [1]\n", "rules.yaml:5:10: nightly: expected a mapping with the key rules"},
           {"nightly: {rules: {variant: x}}\n", "nightly.rules: expected a list of rules"},
           {"nightly: {rules: [{variant: '', threshold: 5}]}\n", "nightly.rules[0].variant: an empty pattern"},
           {"nightly: {rules: [{variant: naive, threshold: -1}]}\n", "nightly.rules[0].threshold: must be greater than 0"},
           {"nightly: {rules: [{variant: naive, ignore: ''}]}\n", "nightly.rules[0].ignore: give the reason"},
           {"nightly: {rule: []}\n", "nightly.rule: unknown key"}}) {
    try {
      parse_config(head + nightly, "rules.yaml");
      ADD_FAILURE() << "accepted: " << nightly;
    } catch (const ConfigError& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace attnsweep
