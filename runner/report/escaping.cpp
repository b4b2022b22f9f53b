#include "runner/report/escaping.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace attnsweep::report {
namespace {

std::string hex_escape(const char* format, unsigned value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// The length of the well-formed UTF-8 sequence at `at` (1 to 4), or 0 when the
// bytes there are not one (a stray continuation byte, an overlong form, a
// surrogate, a cut sequence).
std::size_t utf8_length(const std::string& text, std::size_t at, unsigned& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned lead = byte(at);
  std::size_t length = 0;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(at + i) & 0x3F);
  }
  const bool overlong = (length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000);
  if (overlong || (code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF) return 0;
  return length;
}

// `text` rewritten one UTF-8 sequence at a time: `rewrite(at, length, code_point, out)`
// appends what the sequence at `at` becomes (length 0: a byte that starts no
// well-formed sequence) and returns how many bytes it took, at least one.
template <typename Rewrite>
std::string rewritten(const std::string& text, Rewrite rewrite) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    unsigned code_point = 0;
    const std::size_t length = utf8_length(text, at, code_point);
    at += rewrite(at, length, code_point, out);
  }
  return out;
}

}  // namespace

bool is_bidi_control(unsigned code_point) {
  return code_point == 0x061C || code_point == 0x200E || code_point == 0x200F ||
         (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069);
}

std::string bidi_controls_escaped(const std::string& text, const std::string& backslash) {
  return rewritten(text, [&](std::size_t at, std::size_t length, unsigned code_point, std::string& out) -> std::size_t {
    if (length > 1 && is_bidi_control(code_point)) {
      out += backslash + hex_escape("u%04x", code_point);
      return length;
    }
    const std::size_t taken = length == 0 ? 1 : length;  // a byte that is not UTF-8 passes as it is
    out.append(text, at, taken);
    return taken;
  });
}

namespace {

// Control characters, bidirectional controls and bytes that are not UTF-8 as escapes; `line_breaks`
// says what a line break becomes ("" to escape it as "\n").
std::string neutralized(const std::string& text, const std::string& line_breaks) {
  return rewritten(text, [&](std::size_t at, std::size_t length, unsigned code_point, std::string& out) -> std::size_t {
    if (length == 0) {
      out += hex_escape("\\x%02x", static_cast<unsigned char>(text[at]));
      return 1;
    }
    if ((code_point == '\n' || code_point == '\r') && !line_breaks.empty()) {
      out += line_breaks;
      const bool crlf = code_point == '\r' && at + 1 < text.size() && text[at + 1] == '\n';
      return crlf ? 2 : 1;  // CRLF is one line break
    }
    if (code_point == '\n') {
      out += "\\n";
    } else if (code_point == '\r') {
      out += "\\r";
    } else if (code_point == '\t') {
      out += "\\t";
    } else if (code_point < 0x20 || code_point == 0x7F) {
      out += hex_escape("\\x%02x", code_point);
    } else if (code_point >= 0x80 && code_point <= 0x9F) {
      out += hex_escape("\\u%04x", code_point);  // C1: 0x9B is CSI to many terminals
    } else if (is_bidi_control(code_point)) {
      out += hex_escape("\\u%04x", code_point);  // U+202E would show "txt.exe" as "exe.txt", and the rest of the line reversed
    } else {
      out.append(text, at, length);
    }
    return length;
  });
}

// `text` with each character that `replacements` names spelled as it says.
std::string replaced(const std::string& text, std::initializer_list<std::pair<char, const char*>> replacements) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto* found = std::find_if(replacements.begin(), replacements.end(),
                                     [c](const auto& replacement) { return replacement.first == c; });
    if (found == replacements.end()) {
      out += c;
    } else {
      out += found->second;
    }
  }
  return out;
}

}  // namespace

std::string terminal_safe(const std::string& text) { return neutralized(text, ""); }

std::string markdown_inline(const std::string& text) {
  std::string out;
  for (const char c : neutralized(text, " ")) {
    if (c == '\\' || c == '`' || c == '<') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_code(const std::string& text) {
  const std::string shown = neutralized(text, " ");
  std::size_t longest = 0, run = 0;
  for (const char c : shown) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A space between fence and text when the text starts or ends with a backtick (CommonMark strips one each side).
  const bool padded = !shown.empty() && (shown.front() == '`' || shown.back() == '`');
  const std::string pad = padded ? " " : "";
  return fence + pad + shown + pad + fence;
}

std::string html_text(const std::string& text) {
  return replaced(bidi_controls_escaped(text, "\\"), {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}});
}

std::string json_in_script(const std::string& json_text) {
  return replaced(bidi_controls_escaped(json_text, "\\\\"), {{'<', "\\u003c"}, {'>', "\\u003e"}, {'&', "\\u0026"}});
}

}  // namespace attnsweep::report
