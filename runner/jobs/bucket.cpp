#include "runner/jobs/bucket.hpp"

#include <vector>

#include "runner/common/errors.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {
namespace {

constexpr const char* kBucketScheme = "hf://buckets/";

bool is_part(const std::string& part) {
  if (part.empty() || part == "." || part == "..") return false;
  for (const char c : part) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                         c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = text.find('/', at);
    parts.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return parts;
    at = end + 1;
  }
}

}  // namespace

std::string BucketFolder::uri() const {
  return std::string(kBucketScheme) + org + "/" + name + (prefix.empty() ? "" : "/" + prefix);
}

std::string BucketFolder::file(const std::string& relative) const { return uri() + "/" + relative; }

BucketFolder BucketFolder::with_prefix(const std::string& new_prefix) const { return {org, name, new_prefix}; }

BucketFolder parse_bucket_folder(const std::string& text, const std::string& option) {
  const std::string expected = "; expected hf://buckets/ORG/NAME[/PREFIX] (letters, digits, '.', '_', '-')";
  const std::string scheme = kBucketScheme;
  const std::string shown = report::terminal_safe(text);  // a line break in TEXT is shown as \n: the error stays one line
  if (text.rfind(scheme, 0) != 0) {
    const std::string why = text.rfind("hf://", 0) == 0 ? "is not a bucket (jobs write only to buckets)"
                                                        : "is not a bucket URL";
    throw BadInputError(option + ": '" + shown + "' " + why + expected);
  }
  std::string rest = text.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const std::vector<std::string> parts = split(rest);
  if (parts.size() < 2) throw BadInputError(option + ": '" + shown + "' names no bucket" + expected);
  for (const std::string& part : parts) {
    if (!is_part(part)) throw BadInputError(option + ": '" + shown + "': '" + report::terminal_safe(part) + "' is not allowed" + expected);
  }
  BucketFolder folder{parts[0], parts[1], ""};
  for (std::size_t i = 2; i < parts.size(); ++i) folder.prefix += (i > 2 ? "/" : "") + parts[i];
  return folder;
}

}  // namespace attnsweep::jobs
