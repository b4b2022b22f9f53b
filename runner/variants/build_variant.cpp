#include "runner/variants/build_variant.hpp"

#include <algorithm>
#include <regex>
#include <tuple>

namespace attnsweep {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1) {
    parts.push_back(text.substr(start, at - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::optional<BuildVariant> fail(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return std::nullopt;
}

// backend-cpu-os, e.g. cu130-x86_64-linux (x86_64 holds an '_', never a '-').
bool parse_arch(const std::vector<std::string>& parts, BuildVariant& variant, std::string* why) {
  if (parts.size() != 3) {
    if (why) *why = "expected BACKEND-CPU-OS after the framework";
    return false;
  }
  static const std::regex versioned("(cu|rocm|xpu)([0-9]+)([0-9])");
  std::smatch match;
  if (std::regex_match(parts[0], match, versioned)) {
    variant.backend = match[1].str();
    variant.backend_major = std::stoi(match[2].str());
    variant.backend_minor = std::stoi(match[3].str());
  } else {
    variant.backend = parts[0];
  }
  variant.cpu = parts[1];
  variant.os = parts[2];
  return true;
}

}  // namespace

std::optional<BuildVariant> parse_build_variant(const std::string& name, std::string* why) {
  BuildVariant variant;
  variant.name = name;
  const std::vector<std::string> parts = split(name, '-');
  static const std::regex stable_abi("torch-stable-abi([0-9])([0-9]+)");
  static const std::regex torch("torch([0-9])([0-9]+)");
  std::smatch match;
  if (name.rfind("torch-stable-abi", 0) == 0) {
    const std::string framework = parts.size() >= 3 ? parts[0] + "-" + parts[1] + "-" + parts[2] : name;
    if (!std::regex_match(framework, match, stable_abi)) return fail(why, "not torch-stable-abiXY");
    variant.framework = BuildVariant::Framework::torch_stable_abi;
    variant.framework_major = std::stoi(match[1].str());
    variant.framework_minor = std::stoi(match[2].str());
    if (!parse_arch({parts.begin() + 3, parts.end()}, variant, why)) return std::nullopt;
    return variant;
  }
  if (parts[0] == "torch") {  // noarch: torch-universal, torch-cuda, ...
    if (parts.size() < 2) return fail(why, "a noarch build names its backend (torch-universal)");
    variant.framework = BuildVariant::Framework::noarch;
    variant.backend = name.substr(6);
    return variant;
  }
  if (!std::regex_match(parts[0], match, torch)) {
    return fail(why, "not a build variant (torchXY-..., torch-stable-abiXY-... or torch-BACKEND)");
  }
  variant.framework_major = std::stoi(match[1].str());
  variant.framework_minor = std::stoi(match[2].str());
  std::size_t arch_start = 1;
  if (parts.size() >= 2 && (parts[1] == "cxx11" || parts[1] == "cxx98")) {
    variant.cxx11_abi = parts[1] == "cxx11";
    arch_start = 2;
  }
  if (!parse_arch({parts.begin() + static_cast<std::ptrdiff_t>(std::min(arch_start, parts.size())), parts.end()},
                  variant, why)) {
    return std::nullopt;
  }
  return variant;
}

std::vector<BuildVariantDecision> rank_build_variants(const std::vector<std::string>& names, const BuildTarget& target) {
  struct Ranked {
    BuildVariantDecision decision;
    std::tuple<int, int, int, int, int> key;  // kernels' sort key: lower is preferred
  };
  const std::string torch_text = std::to_string(target.torch_major) + "." + std::to_string(target.torch_minor);
  const std::string cuda_text = target.cuda_major ? std::to_string(*target.cuda_major) + "." +
                                                        std::to_string(target.cuda_minor.value_or(0))
                                                  : "none";
  std::vector<Ranked> ranked;
  for (const auto& name : names) {
    std::string why;
    const std::optional<BuildVariant> parsed = parse_build_variant(name, &why);
    Ranked entry{{name, false, ""}, {1, 9, 0, 0, 0}};
    if (!parsed) {
      entry.decision.reason = why;
      ranked.push_back(entry);
      continue;
    }
    const BuildVariant& v = *parsed;
    std::string reason;
    if (v.framework == BuildVariant::Framework::noarch) {
      const std::string system_backend = target.cuda_major ? "cuda" : "cpu";
      if (v.backend != system_backend && v.backend != "universal") {
        reason = "backend " + v.backend + " is neither this system's (" + system_backend + ") nor universal";
      }
      entry.key = {0, 2, 0, 0, v.backend == "universal" ? 1 : 0};
    } else {
      const std::string version = std::to_string(v.framework_major) + "." + std::to_string(v.framework_minor);
      if (v.cpu != target.cpu) {
        reason = "CPU " + v.cpu + " is not this system's (" + target.cpu + ")";
      } else if (v.os != target.os) {
        reason = "OS " + v.os + " is not this system's (" + target.os + ")";
      } else if (v.framework == BuildVariant::Framework::torch &&
                 (v.framework_major != target.torch_major || v.framework_minor != target.torch_minor)) {
        reason = "built for torch " + version + ", this is torch " + torch_text;
      } else if (v.framework == BuildVariant::Framework::torch && v.cxx11_abi && *v.cxx11_abi != target.cxx11_abi) {
        reason = std::string("built with the ") + (*v.cxx11_abi ? "cxx11" : "cxx98") + " ABI, this torch uses the " +
                 (target.cxx11_abi ? "cxx11" : "cxx98") + " one";
      } else if (v.framework == BuildVariant::Framework::torch_stable_abi &&
                 std::make_pair(v.framework_major, v.framework_minor) >
                     std::make_pair(target.torch_major, target.torch_minor)) {
        reason = "stable ABI " + version + " is newer than this torch (" + torch_text + ")";
      } else if (v.backend == "cu") {
        if (!target.cuda_major) {
          reason = "a CUDA build, and this torch has no CUDA";
        } else if (*v.backend_major != *target.cuda_major || *v.backend_minor > target.cuda_minor.value_or(0)) {
          reason = "built for CUDA " + std::to_string(*v.backend_major) + "." + std::to_string(*v.backend_minor) +
                   ", this is CUDA " + cuda_text + " (same major, minor at most this one's)";
        }
      } else if (v.backend != (target.cuda_major ? "cu" : "cpu")) {
        reason = "backend " + v.backend + " is not this system's (" + (target.cuda_major ? "cu" : "cpu") + ")";
      }
      const int framework_order = v.framework == BuildVariant::Framework::torch_stable_abi ? 0 : 1;
      const int abi_a = framework_order == 0 ? -v.framework_major : 0;
      const int abi_b = framework_order == 0 ? -v.framework_minor : (v.cxx11_abi ? 1 : 0);
      entry.key = {0, framework_order, abi_a, abi_b, -v.backend_minor.value_or(0)};
    }
    entry.decision.accepted = reason.empty();
    entry.decision.reason = reason;
    if (!entry.decision.accepted) std::get<0>(entry.key) = 1;
    ranked.push_back(entry);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.key < b.key; });
  std::vector<BuildVariantDecision> decisions;
  for (auto& entry : ranked) decisions.push_back(std::move(entry.decision));
  return decisions;
}

}  // namespace attnsweep
