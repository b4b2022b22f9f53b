#pragma once
// Text from a database (names, paths, device names, error messages, hosts)
// shown to people: stored text is data, never markup or terminal commands.
// A config's name "t\n<!--" must not hide the rest of a GitHub comment, and a
// host name holding ESC [2J must not clear the terminal of whoever runs
// compare. Each printer calls these on every stored value it shows.
#include <string>

namespace attnsweep::report {

// For a terminal: every control character (C0 with tab and line breaks, DEL,
// C1), every bidirectional control (is_bidi_control) and every byte that is not
// UTF-8 shown as an escape, "\x1b", "\n", "\u009b", "\u202e"; everything else as
// it is. One line, whatever the text held, and in the order it was written.
std::string terminal_safe(const std::string& text);

// The bidirectional controls, which reorder what follows them on screen
// ("report-\u202elmth.exe" shows as "report-exe.html"): U+061C, U+200E, U+200F,
// U+202A to U+202E and U+2066 to U+2069.
bool is_bidi_control(unsigned code_point);

// `text` with each bidirectional control written as `backslash` + "u202e", the
// rest as it is: for HTML text ("\\") and inside a JSON string ("\\\\", which
// JSON.parse reads back as the visible "\u202e"). The markdown and terminal
// escapes above include it.
std::string bidi_controls_escaped(const std::string& text, const std::string& backslash);

// For HTML text and quoted attribute values: '&', '<', '>' and '"' as
// entities, bidirectional controls as the visible "\u202e". The report's and
// the history page's titles, tables and lines.
std::string html_text(const std::string& text);

// JSON text inside a <script> element: "</script" would end the element early
// and "<!--" change how the rest is parsed, so every '<', '>' and '&' (found
// only inside JSON strings) is written as its \u escape, which JSON.parse reads
// back as the same character; a bidirectional control becomes the visible text
// "\u202e" (a JSON "\\u202e"), so the page shows stored text in the order it was written.
std::string json_in_script(const std::string& json_text);

// For Markdown, as inline text (a heading, a line, a table cell): one line
// (a line break becomes a space), '\', '`' and '<' escaped with '\' (no code
// span, tag or HTML comment can start: "<!--" would hide everything after it
// on GitHub), and control characters as terminal_safe shows them. The table
// writer also escapes '|'.
std::string markdown_inline(const std::string& text);

// For Markdown, as a code span: the text in backticks, more of them than any
// run of backticks it holds (so it cannot close the span early), on one line,
// control characters as terminal_safe shows them.
std::string markdown_code(const std::string& text);

}  // namespace attnsweep::report
