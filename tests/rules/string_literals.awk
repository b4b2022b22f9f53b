# The string literals of C++ files, one per line: "FILE<TAB>LINE<TAB>TEXT"
# (LINE: where it starts; a raw string's lines joined by spaces). Comments and
# character literals are skipped. Used by tests/rules/sql_text_test.sh.
FNR == 1 { state = "code" }
{
  line = $0
  n = length(line)
  i = 1
  while (i <= n) {
    c = substr(line, i, 1)
    if (state == "block") {  # inside /* ... */
      if (substr(line, i, 2) == "*/") { state = "code"; i += 2 } else i++
      continue
    }
    if (state == "raw") {  # inside R"delim( ... )delim"
      end = index(substr(line, i), ")" delim "\"")
      if (end == 0) { text = text substr(line, i) " "; i = n + 1; continue }
      print FILENAME "\t" start "\t" text substr(line, i, end - 1)
      i += end + length(delim) + 1
      state = "code"
      continue
    }
    two = substr(line, i, 2)
    if (two == "//") break
    if (two == "/*") { state = "block"; i += 2; continue }
    if (c == "R" && substr(line, i + 1, 1) == "\"" && (i == 1 || substr(line, i - 1, 1) !~ /[A-Za-z0-9_]/)) {
      open = index(substr(line, i + 2), "(")
      if (open > 0) {
        delim = substr(line, i + 2, open - 1)
        state = "raw"; start = FNR; text = ""
        i += 2 + open
        continue
      }
    }
    if (c == "\"") {
      j = i + 1; text = ""
      while (j <= n) {
        d = substr(line, j, 1)
        if (d == "\\") { text = text substr(line, j, 2); j += 2; continue }
        if (d == "\"") break
        text = text d; j++
      }
      print FILENAME "\t" FNR "\t" text
      i = j + 1
      continue
    }
    if (c == "'") {  # a character literal ('"', '\''), not a digit separator (1'000)
      if (i > 1 && substr(line, i - 1, 1) ~ /[0-9A-Fa-f]/ && substr(line, i + 1, 1) ~ /[0-9A-Fa-f]/) { i++; continue }
      j = i + 1
      while (j <= n) {
        d = substr(line, j, 1)
        if (d == "\\") { j += 2; continue }
        if (d == "'") break
        j++
      }
      i = j + 1
      continue
    }
    i++
  }
}
