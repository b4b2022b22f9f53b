#pragma once
// A Comparison (compare_runs.hpp) as text for a terminal, as markdown for a
// job log and a pull-request comment, or as one JSON object for programs
// (comparison_json.hpp; docs/compare.md lists its keys). Every format leads with
// the headline and the differences of environment, then the findings.
#include <string>
#include <vector>

#include "runner/compare/compare_runs.hpp"
#include "runner/compare/comparison_headline.hpp"  // headline(), the first line of each

namespace attnsweep::compare {

enum class Format { text, markdown, json };

// Throws BadInputError naming the allowed formats.
Format parse_format(const std::string& name);
const std::vector<std::string>& format_names();  // text, markdown, json

// At most this many findings are rows of the markdown table (a pull-request
// comment holds 65536 characters); the rest are counted below it.
inline constexpr std::size_t kMarkdownFindingRows = 150;

// Kernel differences: at most this many kernels per case in text and
// markdown, and this many cases in markdown (--format json has them all).
inline constexpr std::size_t kTextKernelRows = 12;
inline constexpr std::size_t kMarkdownKernelRows = 8;
inline constexpr std::size_t kMarkdownKernelCases = 15;

std::string render(const Comparison& comparison, Format format);

}  // namespace attnsweep::compare
