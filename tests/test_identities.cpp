// Typed identities: every spelling parsed and printed in one place.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/text.hpp"
#include "tests/support/file_text.hpp"

namespace attnsweep {
namespace {

TEST(Device, ParsesEverySpellingAndPrintsItBack) {
  for (const std::string text : {"auto", "cpu", "cuda", "cuda:0", "cuda:3", "cuda:1234"}) {
    const auto device = Device::try_parse(text);
    ASSERT_TRUE(device) << text;
    EXPECT_EQ(device->to_string(), text);
  }
  EXPECT_TRUE(Device::parse("auto").is_auto());
  EXPECT_TRUE(Device::parse("cpu").is_cpu());
  EXPECT_TRUE(Device::parse("cuda:2").is_cuda());
  EXPECT_EQ(Device::parse("cuda:2"), Device::cuda(2));
  EXPECT_NE(Device::parse("cuda"), Device::cuda(0));  // plain cuda is not resolved yet
}

TEST(Device, CudaIndexAndResolvedness) {
  EXPECT_EQ(Device::parse("cuda:0").cuda_index(), 0);
  EXPECT_EQ(Device::parse("cuda:3").cuda_index(), 3);
  EXPECT_EQ(Device::parse("cuda").cuda_index(), 0);
  EXPECT_EQ(Device::parse("cpu").cuda_index(), -1);
  EXPECT_TRUE(Device::cpu().is_resolved());
  EXPECT_TRUE(Device::cuda(1).is_resolved());
  EXPECT_FALSE(Device::cuda().is_resolved());
  EXPECT_FALSE(Device::automatic().is_resolved());
}

TEST(Device, RefusesAnythingElseNamingWhatIsAllowed) {
  for (const std::string text : {"", "tpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:12345", "cuda:1 ", " cpu",
                                 "cudafoo", "cpu:0"}) {
    EXPECT_FALSE(Device::try_parse(text)) << "'" << text << "'";
  }
  try {
    Device::parse("tpu");
    FAIL() << "no exception";
  } catch (const BadInputError& error) {
    EXPECT_STREQ(error.what(), "unknown device 'tpu'; allowed: auto, cpu, cuda, cuda:N");
  }
}

TEST(Identities, EachEnumRoundTripsThroughItsOneSpelling) {
  for (const auto& name : case_status_names()) EXPECT_EQ(to_string(*parse_case_status(name)), name);
  for (const auto& name : run_status_names()) EXPECT_EQ(to_string(*parse_run_status(name)), name);
  for (const auto& name : dtype_names()) EXPECT_EQ(to_string(*parse_dtype(name)), name);
  for (const auto& name : case_order_names()) EXPECT_EQ(to_string(*parse_case_order(name)), name);
  for (const auto& name : measure_regime_names()) EXPECT_EQ(to_string(*parse_measure_regime(name)), name);
  EXPECT_EQ(measure_regime_names(), (std::vector<std::string>{"sustained", "burst"}));
  EXPECT_FALSE(parse_measure_regime("Burst").has_value());
  for (const auto& name : pass_names()) EXPECT_EQ(to_string(*parse_pass(name)), name);
  EXPECT_EQ(pass_names(), (std::vector<std::string>{"forward", "backward", "forward_backward"}));
  EXPECT_FALSE(parse_pass("fwd").has_value());
  EXPECT_EQ(to_string(*parse_sample_mode("graph")), std::string("graph"));
  EXPECT_EQ(case_status_names(),
            (std::vector<std::string>{"ok", "unsupported", "oom", "error", "crashed", "timeout"}));
  EXPECT_EQ(dtype_names(), (std::vector<std::string>{"bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2"}));
  EXPECT_EQ(dtype_bytes(Dtype::fp8_e5m2), 1);
  EXPECT_EQ(output_dtype(Dtype::fp8_e4m3), Dtype::bf16);
  EXPECT_EQ(output_dtype(Dtype::fp16), Dtype::fp16);
  EXPECT_FALSE(parse_case_status("exploded"));
  EXPECT_FALSE(parse_dtype("BF16"));
  EXPECT_FALSE(parse_case_order("random"));
  EXPECT_FALSE(parse_sample_mode(""));
}

// Messages made one line for tables and stored refusals (an op's exception, PyTorch's errors).
TEST(Text, FirstLineAndOneLine) {
  EXPECT_EQ(text::first_line("No available kernel.\nException raised from ..."), "No available kernel.");
  EXPECT_EQ(text::first_line("one line"), "one line");
  EXPECT_EQ(text::one_line("mha_fwd, flash_api.cpp:784, \n  FlashAttention only supports fp16\r\n"),
            "mha_fwd, flash_api.cpp:784, FlashAttention only supports fp16");
  EXPECT_EQ(text::one_line("a\n\n\tb"), "a b");
  EXPECT_EQ(text::one_line(""), "");
}

TEST(ShellQuote, LeavesSafeWordsAndQuotesTheRest) {
  EXPECT_EQ(text::shell_quote("results.db"), "results.db");
  EXPECT_EQ(text::shell_quote("/tmp/a-b_c/r.db"), "/tmp/a-b_c/r.db");
  EXPECT_EQ(text::shell_quote("my results.db"), "'my results.db'");
  EXPECT_EQ(text::shell_quote("q'x;.db"), "'q'\\''x;.db'");
  EXPECT_EQ(text::shell_quote("$(rm -rf x)"), "'$(rm -rf x)'");
  EXPECT_EQ(text::shell_quote(""), "''");
}

TEST(Identities, DtypeBytes) {
  EXPECT_EQ(dtype_bytes(Dtype::bf16), 2);
  EXPECT_EQ(dtype_bytes(Dtype::fp16), 2);
  EXPECT_EQ(dtype_bytes(Dtype::fp32), 4);
}

// The values a CHECK (column IN (...)) of runner/storage/schema.sql allows, in the
// order the constraints appear; sorted, for comparing as sets.
std::vector<std::vector<std::string>> schema_check_lists(const std::string& column) {
  const std::string schema = attnsweep::testing::read_file(ATTNSWEEP_SOURCE_DIR "/runner/storage/schema.sql");
  std::vector<std::vector<std::string>> lists;
  const std::regex check("CHECK \\(" + column + " IN \\(([^)]*)\\)\\)");
  for (auto it = std::sregex_iterator(schema.begin(), schema.end(), check); it != std::sregex_iterator(); ++it) {
    std::vector<std::string> values;
    const std::string inside = (*it)[1];
    const std::regex quoted("'([^']*)'");
    for (auto v = std::sregex_iterator(inside.begin(), inside.end(), quoted); v != std::sregex_iterator(); ++v) {
      values.push_back((*v)[1]);
    }
    std::sort(values.begin(), values.end());
    lists.push_back(values);
  }
  return lists;
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Identities, TheSchemasCheckConstraintsAllowExactlyTheNamesOfEachEnum) {
  const auto statuses = schema_check_lists("status");  // runs first, then cases
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0], sorted(run_status_names()));
  EXPECT_EQ(statuses[1], sorted(case_status_names()));
  EXPECT_EQ(schema_check_lists("dtype"), std::vector<std::vector<std::string>>{sorted(dtype_names())});
  EXPECT_EQ(schema_check_lists("case_order"), std::vector<std::vector<std::string>>{sorted(case_order_names())});
  EXPECT_EQ(schema_check_lists("mode"), std::vector<std::vector<std::string>>{sorted(sample_mode_names())});
  EXPECT_EQ(schema_check_lists("measure_regime"), std::vector<std::vector<std::string>>{sorted(measure_regime_names())});
  EXPECT_EQ(schema_check_lists("pass"), std::vector<std::vector<std::string>>{sorted(pass_names())});
}

}  // namespace
}  // namespace attnsweep
