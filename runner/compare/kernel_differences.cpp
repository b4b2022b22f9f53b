#include "runner/compare/kernel_differences.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace attnsweep::compare {
namespace {

// ---- short names ----------------------------------------------------------------

bool is_open(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
bool is_close(char c) { return c == '>' || c == ')' || c == '}' || c == ']'; }
bool is_identifier(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

char closer_of(char open) {
  switch (open) {
    case '<': return '>';
    case '(': return ')';
    case '{': return '}';
    default: return ']';
  }
}

std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Every "identifier::" dropped: at::native::elementwise_kernel -> elementwise_kernel.
std::string without_namespaces(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_identifier(text[i]) && (i == 0 || !is_identifier(text[i - 1]))) {
      std::size_t end = i;
      while (end < text.size() && is_identifier(text[end])) ++end;
      if (text.compare(end, 2, "::") == 0) {
        i = end + 2;
        continue;
      }
      out.append(text, i, end - i);
      i = end;
      continue;
    }
    out += text[i++];
  }
  return out;
}

// The index of the '(' that opens the parameter list at the end of a
// function's name, or npos: "f<T>(int)" -> 4; "Memset (Device)" -> npos (a
// blank before it: words, not a signature).
std::size_t parameter_list_start(const std::string& name) {
  if (name.empty() || name.back() != ')') return std::string::npos;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (is_close(name[i])) ++depth;
    if (is_open(name[i]) && --depth == 0) {
      if (name[i] != '(' || i == 0) return std::string::npos;
      const char before = name[i - 1];
      return is_identifier(before) || before == '>' ? i : std::string::npos;
    }
  }
  return std::string::npos;
}

// Every " const" that is a word ("operator()() const"; not " constant").
std::string without_const(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 6, " const") == 0 && (i + 6 == text.size() || !is_identifier(text[i + 6]))) {
      i += 5;
      continue;
    }
    out += text[i];
  }
  return out;
}

// What a reader does not need to tell kernels apart: each parenthesized list
// inside the name as "(...)" (the parameters of a functor a template argument
// names), each lambda with what follows it in its argument
// ("masked_fill_kernel(...)::{lambda()#1}::operator()() ..." ->
// "masked_fill_kernel(...)"), the parameters of a function template named in
// one ("gpu_kernel_impl_nocast<add>(TensorIteratorBase&, ...)"), and blanks
// before a closing bracket ("> >").
std::string without_noise(const std::string& text) {
  std::string out;
  int parentheses = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (parentheses == 0 && text.compare(i, 3, "::{") == 0) {
      // Skip to the end of this argument: the next ',' or closer of this depth.
      int depth = 0;
      while (i + 1 < text.size()) {
        const char next = text[i + 1];
        if (depth == 0 && (next == ',' || is_close(next))) break;
        if (is_open(next)) ++depth;
        if (is_close(next)) --depth;
        ++i;
      }
    } else if (c == '(' && parentheses == 0 && !out.empty() && out.back() == '>') {
      // A function template's parameters: skip the whole list.
      for (int depth = 0; i < text.size(); ++i) {
        if (text[i] == '(') ++depth;
        if (text[i] == ')' && --depth == 0) break;
      }
    } else if (c == '(') {
      if (parentheses++ == 0) {
        out += '(';
        if (i + 1 < text.size() && text[i + 1] != ')') out += "...";
      }
    } else if (c == ')') {
      if (parentheses > 0 && --parentheses == 0) out += ')';
    } else if (parentheses == 0 && !(c == ' ' && i + 1 < text.size() && is_close(text[i + 1]))) {
      out += c;
    }
  }
  return out;
}

// The name without what never tells kernels apart, or the name as it is when it
// has no structure to cut (a cuDNN or cuBLAS kernel, "Memset (Device)").
std::string stripped(const std::string& name) {
  std::string text = name;
  if (text.rfind("void ", 0) == 0) text.erase(0, 5);
  text = replaced_all(text, "(anonymous namespace)::", "");
  const std::size_t parameters = parameter_list_start(text);
  if (parameters == std::string::npos && text.find('<') == std::string::npos) return name;
  if (parameters != std::string::npos) text.erase(parameters);
  return without_noise(without_const(without_namespaces(text)));
}

// Whether the group around `position` (with `inner` groups nested in it still
// open there) has another argument after it.
bool more_arguments(const std::string& text, std::size_t position, std::size_t inner) {
  for (std::size_t i = position; i < text.size(); ++i) {
    if (is_open(text[i])) ++inner;
    if (is_close(text[i])) {
      if (inner == 0) return false;
      --inner;
    }
    if (text[i] == ',' && inner == 0) return true;
  }
  return false;
}

// `text` cut at `position` (a ',' or just after an opening bracket), its open
// brackets closed, each saying "..." where arguments of it are left out:
// "f<a, b<c, ...>, ...>".
std::string cut_at(const std::string& text, std::size_t position) {
  std::vector<std::size_t> open;  // the brackets open at `position`, outermost first
  for (std::size_t i = 0; i < position; ++i) {
    if (is_open(text[i])) open.push_back(i);
    if (is_close(text[i]) && !open.empty()) open.pop_back();
  }
  std::string out = text.substr(0, position) + (text[position] == ',' ? ", ..." : "...");
  for (std::size_t k = open.size(); k-- > 0;) {
    const std::size_t inner = open.size() - 1 - k;
    if (inner > 0 && more_arguments(text, position, inner)) out += ", ...";
    out += closer_of(text[open[k]]);
  }
  return out;
}

// Six hex digits of the name's FNV-1a hash: tells apart two names whose
// shortest faithful forms are the same.
std::string name_hash(const std::string& name) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%06x", static_cast<unsigned>(hash & 0xffffff));
  return buffer;
}

// Every rendering of `name`, shortest first; just the name when it has no structure to cut.
std::vector<std::string> renderings(const std::string& name) {
  const std::string text = stripped(name);
  if (text == name) return {name};
  std::vector<std::string> all;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ',' || (i > 0 && is_open(text[i - 1]) && !is_close(text[i]))) {
      std::string cut = cut_at(text, i);
      // "f<true, ...>" is no shorter than "f<true, 64>".
      if (cut.size() < text.size()) all.push_back(std::move(cut));
    }
  }
  all.push_back(text);
  std::sort(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  all.erase(std::unique(all.begin(), all.end()), all.end());
  // Last, for two names that differ only in what was left out: a hash of the name.
  all.push_back(text + " #" + name_hash(name));
  return all;
}

// The longest rendering that fits in `width`, else the shortest.
std::size_t preferred(const std::vector<std::string>& options, std::size_t width) {
  std::size_t chosen = 0;
  for (std::size_t i = 0; i + 1 < options.size(); ++i) {
    if (options[i].size() <= width) chosen = i;
  }
  return chosen;
}

// ---- differences ------------------------------------------------------------------

std::string without_blanks(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != ' ') out += c;
  }
  return out;
}

KernelSide side_of(const KernelStat& kernel, double case_time_us) {
  KernelSide side;
  side.launches_per_pass = kernel.launches_per_forward;
  side.time_us = kernel.total_us;
  side.time_share = case_time_us > 0 ? kernel.total_us / case_time_us : 0;
  side.grid = without_blanks(kernel.grid);
  side.block = without_blanks(kernel.block);
  side.registers_per_thread = kernel.registers_per_thread;
  side.shared_memory_bytes = kernel.shared_memory_bytes;
  side.est_occupancy_pct = kernel.est_occupancy_pct;
  return side;
}

double time_of(const std::vector<KernelStat>& kernels) {
  double sum = 0;
  for (const KernelStat& kernel : kernels) sum += kernel.total_us;
  return sum;
}

bool different(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return true;
  return a && std::fabs(*a - *b) > 1e-6;
}

std::vector<KernelAspect> aspects_differing(const KernelSide& a, const KernelSide& b,
                                            const KernelDifferenceSettings& settings) {
  std::vector<KernelAspect> aspects;
  if (std::fabs(a.launches_per_pass - b.launches_per_pass) > 1e-9) aspects.push_back(KernelAspect::launches);
  if (a.grid != b.grid) aspects.push_back(KernelAspect::grid);
  if (a.block != b.block) aspects.push_back(KernelAspect::block);
  if (a.registers_per_thread != b.registers_per_thread) aspects.push_back(KernelAspect::registers);
  if (a.shared_memory_bytes != b.shared_memory_bytes) aspects.push_back(KernelAspect::shared_memory);
  if (different(a.est_occupancy_pct, b.est_occupancy_pct)) aspects.push_back(KernelAspect::occupancy);
  if (std::fabs(a.time_share - b.time_share) > settings.share_change) aspects.push_back(KernelAspect::time_share);
  return aspects;
}

double largest_share(const KernelDifference& difference) {
  return std::max(difference.baseline ? difference.baseline->time_share : 0.0,
                  difference.candidate ? difference.candidate->time_share : 0.0);
}

}  // namespace

const char* to_string(KernelChange change) {
  switch (change) {
    case KernelChange::added: return "added";
    case KernelChange::removed: return "removed";
    case KernelChange::changed: return "changed";
    case KernelChange::unchanged: return "unchanged";
  }
  return "?";
}

const char* to_string(KernelAspect aspect) {
  switch (aspect) {
    case KernelAspect::launches: return "launches";
    case KernelAspect::grid: return "grid";
    case KernelAspect::block: return "block";
    case KernelAspect::registers: return "registers";
    case KernelAspect::shared_memory: return "shared_memory";
    case KernelAspect::occupancy: return "occupancy";
    case KernelAspect::time_share: return "time_share";
  }
  return "?";
}

bool KernelDifference::differs(KernelAspect aspect) const {
  return std::find(aspects.begin(), aspects.end(), aspect) != aspects.end();
}

std::string short_kernel_name(const std::string& name, std::size_t width) {
  const std::vector<std::string> options = renderings(name);
  return options[preferred(options, width)];
}

std::vector<std::string> short_kernel_names(const std::vector<std::string>& names, std::size_t width) {
  std::vector<std::vector<std::string>> options;
  std::vector<std::size_t> chosen;
  for (const std::string& name : names) {
    options.push_back(renderings(name));
    chosen.push_back(preferred(options.back(), width));
  }
  // Two different names that came out the same each take their next longer
  // rendering, until they differ; at the latest their full names do.
  for (bool collided = true; collided;) {
    collided = false;
    std::map<std::string, std::vector<std::size_t>> by_text;
    for (std::size_t i = 0; i < names.size(); ++i) by_text[options[i][chosen[i]]].push_back(i);
    for (const auto& [text, indexes] : by_text) {
      std::set<std::string> full;
      for (std::size_t i : indexes) full.insert(names[i]);
      if (full.size() < 2) continue;
      for (std::size_t i : indexes) {
        if (chosen[i] + 1 < options[i].size()) {
          ++chosen[i];
          collided = true;
        }
      }
    }
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names.size(); ++i) out.push_back(options[i][chosen[i]]);
  return out;
}

KernelDifferences kernel_differences(const std::vector<KernelStat>& baseline, const std::vector<KernelStat>& candidate,
                                     const KernelDifferenceSettings& settings) {
  KernelDifferences result;
  result.baseline_rows = baseline.size();
  result.candidate_rows = candidate.size();
  result.baseline_time_us = time_of(baseline);
  result.candidate_time_us = time_of(candidate);
  if (baseline.empty() || candidate.empty()) {
    if (!baseline.empty() || !candidate.empty()) {
      result.missing = std::string("no kernel recorded in the ") + (baseline.empty() ? "baseline" : "candidate");
    }
    return result;
  }

  // Kind and name: a kernel, copy or fill is the same one in both runs.
  std::map<std::pair<std::string, std::string>, const KernelStat*> in_candidate;
  for (const KernelStat& kernel : candidate) in_candidate[{kernel.kind, kernel.name}] = &kernel;
  std::vector<KernelDifference> all;
  std::set<std::pair<std::string, std::string>> seen;
  for (const KernelStat& kernel : baseline) {
    KernelDifference difference{kernel.name, "", kernel.kind, KernelChange::removed,
                                side_of(kernel, result.baseline_time_us), std::nullopt, {}};
    seen.insert({kernel.kind, kernel.name});
    const auto found = in_candidate.find({kernel.kind, kernel.name});
    if (found != in_candidate.end()) {
      difference.candidate = side_of(*found->second, result.candidate_time_us);
      difference.aspects = aspects_differing(*difference.baseline, *difference.candidate, settings);
      difference.change = difference.aspects.empty() ? KernelChange::unchanged : KernelChange::changed;
    }
    all.push_back(std::move(difference));
  }
  for (const KernelStat& kernel : candidate) {
    if (seen.count({kernel.kind, kernel.name}) > 0) continue;
    all.push_back({kernel.name, "", kernel.kind, KernelChange::added, std::nullopt,
                   side_of(kernel, result.candidate_time_us), {}});
  }
  for (const KernelDifference& difference : all) {
    switch (difference.change) {
      case KernelChange::added: ++result.added; break;
      case KernelChange::removed: ++result.removed; break;
      case KernelChange::changed: ++result.changed; break;
      case KernelChange::unchanged: ++result.unchanged; break;
    }
  }

  for (const KernelDifference& difference : all) {
    if (difference.change != KernelChange::unchanged) result.kernels.push_back(difference);
  }
  if (result.kernels.empty()) {
    // Only the time changed: the kernels that hold most of it.
    result.top_by_time = true;
    result.kernels = all;
    std::stable_sort(result.kernels.begin(), result.kernels.end(), [](const auto& a, const auto& b) {
      return a.candidate->time_share > b.candidate->time_share;
    });
    if (result.kernels.size() > settings.top_by_time) result.kernels.resize(settings.top_by_time);
  } else {
    std::stable_sort(result.kernels.begin(), result.kernels.end(),
                     [](const auto& a, const auto& b) { return largest_share(a) > largest_share(b); });
  }
  std::vector<std::string> names;
  for (const KernelDifference& difference : result.kernels) names.push_back(difference.name);
  const std::vector<std::string> short_names = short_kernel_names(names, settings.short_name_width);
  for (std::size_t i = 0; i < result.kernels.size(); ++i) result.kernels[i].short_name = short_names[i];
  return result;
}

}  // namespace attnsweep::compare
