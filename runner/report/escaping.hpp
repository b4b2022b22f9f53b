#pragma once
// Text from a database (names, paths, device names, error messages, hosts)
// shown to people: stored text is data, never markup or terminal commands.
// A config's name "t\n<!--" must not hide the rest of a GitHub comment, and a
// host name holding ESC [2J must not clear the terminal of whoever runs
// compare. Each printer calls these on every stored value it shows.
#include <string>

namespace attnsweep::report {

// For a terminal: every control character (C0 with tab and line breaks, DEL,
// C1) and every byte that is not UTF-8 shown as an escape, "\x1b", "\n",
// "\u009b"; everything else as it is. One line, whatever the text held.
std::string terminal_safe(const std::string& text);

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
