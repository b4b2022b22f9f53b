// The report layer: typed cells, format names, and the exact output of each writer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "runner/common/errors.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/format.hpp"
#include "runner/report/table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

// A table of `columns` and `rows`, each row added by add_row (which checks its width).
Table table_of(std::vector<Column> columns, const std::vector<std::vector<Cell>>& rows = {}) {
  Table table;
  table.columns = std::move(columns);
  for (const std::vector<Cell>& row : rows) table.add_row(row);
  return table;
}

std::string written(const Table& table, Format format) {
  std::ostringstream out;
  write_table(out, table, format);
  return out.str();
}

// Three columns: left, right, left last; one full row and one of nulls.
Table timing_table() {
  return table_of({{"name", "", Align::left}, {"time_us", "us", Align::right}, {"note", "", Align::left}},
                  {{Cell::text("flash"), Cell::integer(12), Cell::text("ok")},
                   {Cell::text("math"), Cell::null(), Cell::null()}});
}

// Stored text shown to people (issue 21, finding 16): controls never reach a
// terminal, nothing in it starts Markdown markup.
TEST(Escaping, TerminalSafeShowsEveryControlAndStrayByteAsAnEscape) {
  EXPECT_EQ(terminal_safe("plain UTF-8: caf\xC3\xA9 \xE2\x9C\x93"), "plain UTF-8: caf\xC3\xA9 \xE2\x9C\x93");
  EXPECT_EQ(terminal_safe("a\x1b[2Jb\x07\x7f"), "a\\x1b[2Jb\\x07\\x7f");
  EXPECT_EQ(terminal_safe("1\n2\r\n3\t4"), "1\\n2\\r\\n3\\t4");
  EXPECT_EQ(terminal_safe("csi \xC2\x9B" "31m"), "csi \\u009b31m");     // C1 as UTF-8
  EXPECT_EQ(terminal_safe("raw \x9B" "31m \xFF \xC3"), "raw \\x9b31m \\xff \\xc3");  // not UTF-8
  EXPECT_EQ(terminal_safe(std::string("nul\0", 4)), "nul\\x00");
}

// Issue 33, item 15: the bidirectional controls reached the terminal and markdown raw:
// "report-<U+202E>lmth.exe" showed as "report-exe.html".
TEST(Escaping, BidirectionalControlsAreShownAsEscapesEverywhere) {
  const std::string spoof = "report-\xE2\x80\xAElmth.exe";
  EXPECT_EQ(terminal_safe(spoof), "report-\\u202elmth.exe");
  EXPECT_EQ(terminal_safe("a\xE2\x81\xA6" "b\xE2\x81\xA9 \xE2\x80\x8E\xE2\x80\x8F \xE2\x80\xAA\xE2\x80\xAD \xD8\x9C"),
            "a\\u2066b\\u2069 \\u200e\\u200f \\u202a\\u202d \\u061c");
  EXPECT_EQ(terminal_safe("\xE2\x80\x8D \xE2\x80\xAF \xE2\x81\xA5 \xE2\x81\xAA"),  // ZWJ, U+202F, U+2065, U+206A: not bidi controls
            "\xE2\x80\x8D \xE2\x80\xAF \xE2\x81\xA5 \xE2\x81\xAA");
  EXPECT_EQ(markdown_inline(spoof), "report-\\\\u202elmth.exe");  // shown as report-\u202elmth.exe
  EXPECT_EQ(markdown_code(spoof), "`report-\\u202elmth.exe`");
}

TEST(Escaping, MarkdownInlineIsOneLineThatStartsNoTagCommentOrCodeSpan) {
  EXPECT_EQ(markdown_inline("t\n<!--"), "t \\<!--");
  EXPECT_EQ(markdown_inline("a\r\nb\rc"), "a b c");
  EXPECT_EQ(markdown_inline("\\<img> `code` | x"), "\\\\\\<img> \\`code\\` | x");
  EXPECT_EQ(markdown_inline("h\x1b[2J"), "h\\\\x1b[2J");
  EXPECT_EQ(markdown_inline("sdpa_math 1x2x16x8"), "sdpa_math 1x2x16x8");
}

TEST(Escaping, MarkdownCodeIsASpanNoBacktickInsideCanClose) {
  EXPECT_EQ(markdown_code("/data/night.db"), "`/data/night.db`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code("``x"), "``` ``x ```");
  EXPECT_EQ(markdown_code("x\n<!--\x1b"), "`x <!--\\x1b`");
}

TEST(MarkdownWriter, EscapesStoredTextInCells) {
  const Table table = table_of({{"name"}}, {{Cell::text("a|b\n<!--`\\")}});
  std::ostringstream out;
  write_table(out, table, Format::markdown);
  EXPECT_EQ(out.str(), "| name |\n| --- |\n| a\\|b \\<!--\\`\\\\ |\n");
}

TEST(Cell, KindsAndAccessors) {
  EXPECT_EQ(Cell::null().kind(), CellKind::null);
  EXPECT_TRUE(Cell::null().is_null());
  EXPECT_EQ(Cell::integer(-7).kind(), CellKind::integer);
  EXPECT_EQ(Cell::integer(-7).as_integer(), -7);
  EXPECT_EQ(Cell::real(2.5, 1).kind(), CellKind::real);
  EXPECT_DOUBLE_EQ(Cell::real(2.5, 1).as_real(), 2.5);
  EXPECT_EQ(Cell::text("x").kind(), CellKind::text);
  EXPECT_EQ(Cell::text("x").as_text(), "x");
  EXPECT_FALSE(Cell::text("").is_null());
  EXPECT_THROW(Cell::text("1").as_integer(), std::logic_error);
  EXPECT_THROW(Cell::integer(1).as_real(), std::logic_error);
  EXPECT_THROW(Cell::null().as_text(), std::logic_error);
}

TEST(Cell, NonFiniteRealIsNull) {
  EXPECT_TRUE(Cell::real(std::nan(""), 2).is_null());
  EXPECT_TRUE(Cell::real(std::numeric_limits<double>::infinity(), 2).is_null());
  EXPECT_TRUE(Cell::real(-std::numeric_limits<double>::infinity(), -1).is_null());
  EXPECT_EQ(Cell::real(std::nan(""), 2).to_text(), "");
}

TEST(Cell, ToText) {
  EXPECT_EQ(Cell::null().to_text(), "");
  EXPECT_EQ(Cell::integer(-9223372036854775807LL - 1).to_text(), "-9223372036854775808");
  EXPECT_EQ(Cell::text("a b").to_text(), "a b");
  EXPECT_EQ(Cell::real(1.0 / 3, 3).to_text(), "0.333");
  EXPECT_EQ(Cell::real(2.7, 0).to_text(), "3");
  EXPECT_EQ(Cell::real(1e20, 1).to_text(), "100000000000000000000.0");
}

TEST(Cell, NegativeDigitsGiveSqlitesTextOfAReal) {
  // Each expected string is what sqlite3 3.40 prints for the same REAL.
  EXPECT_EQ(Cell::real(1.0, -1).to_text(), "1.0");
  EXPECT_EQ(Cell::real(-2.0, -1).to_text(), "-2.0");
  EXPECT_EQ(Cell::real(100.0, -1).to_text(), "100.0");
  EXPECT_EQ(Cell::real(0.1, -1).to_text(), "0.1");
  EXPECT_EQ(Cell::real(1.5, -1).to_text(), "1.5");
  EXPECT_EQ(Cell::real(1.0 / 3, -1).to_text(), "0.333333333333333");
  EXPECT_EQ(Cell::real(1e20, -1).to_text(), "1.0e+20");
  EXPECT_EQ(Cell::real(1e-5, -1).to_text(), "1.0e-05");
  EXPECT_EQ(Cell::real(123456789012345678.0, -1).to_text(), "1.23456789012346e+17");
}

TEST(Table, AddRowChecksWidth) {
  Table table;
  table.columns = {{"a"}, {"b"}};
  table.add_row({Cell::integer(1), Cell::integer(2)});
  EXPECT_THROW(table.add_row({Cell::integer(1)}), std::invalid_argument);
  EXPECT_THROW(table.add_row({Cell::integer(1), Cell::integer(2), Cell::integer(3)}), std::invalid_argument);
  EXPECT_EQ(table.rows.size(), 1u);
  try {
    table.add_row({});
    FAIL() << "an empty row was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "row has 0 cells; the table has 2 columns");
  }
}

TEST(Format, ParsesTheFourNames) {
  EXPECT_EQ(parse_format("table"), Format::table);
  EXPECT_EQ(parse_format("csv"), Format::csv);
  EXPECT_EQ(parse_format("json"), Format::json);
  EXPECT_EQ(parse_format("markdown"), Format::markdown);
  EXPECT_EQ(format_names(), (std::vector<std::string>{"table", "csv", "json", "markdown"}));
  for (const std::string& name : format_names()) EXPECT_EQ(to_string(parse_format(name)), name);
}

TEST(Format, RejectsUnknownNamesListingTheAllowedOnes) {
  try {
    parse_format("xml");
    FAIL() << "xml was accepted";
  } catch (const BadInputError& error) {
    EXPECT_STREQ(error.what(), "unknown format 'xml'; allowed: table, csv, json, markdown");
  }
  EXPECT_THROW(parse_format("CSV"), BadInputError);
  EXPECT_THROW(parse_format(""), BadInputError);
}

TEST(TextWriter, AlignsColumnsAndPrintsNullText) {
  EXPECT_EQ(written(timing_table(), Format::table),
            "name   time_us  note\n"
            "flash       12  ok\n"
            "math         -  -\n");
}

TEST(TextWriter, PadsARightAlignedLastColumnOnTheLeft) {
  const Table table = table_of({{"a"}, {"value", "", Align::right}},
                               {{Cell::text("x"), Cell::real(1.5, 2)}, {Cell::text("long"), Cell::real(12345.678, 2)}});
  EXPECT_EQ(written(table, Format::table),
            "a        value\n"
            "x         1.50\n"
            "long  12345.68\n");
}

TEST(TextWriter, NullTextCountsInTheWidth) {
  const Table table = table_of({{"a", "", Align::left, "NULL"}, {"b"}}, {{Cell::null(), Cell::text("y")}});
  EXPECT_EQ(written(table, Format::table),
            "a     b\n"
            "NULL  y\n");
}

TEST(TextWriter, CutsCellsLongerThan80Characters) {
  const Table table = table_of(
      {{"message"}, {"n", "", Align::right}},
      {{Cell::text(std::string(100, 'x')), Cell::integer(1)}, {Cell::text(std::string(80, 'y')), Cell::integer(2)}});
  EXPECT_EQ(written(table, Format::table),
            "message" + std::string(73, ' ') + "  n\n" +
            std::string(77, 'x') + "...  1\n" +
            std::string(80, 'y') + "  2\n");
}

TEST(TextWriter, AColumnWithoutAWidthLimitIsNeverCut) {
  const Table table = table_of({{"n"}, {"description", "", Align::left, "-", 0}},
                               {{Cell::integer(1), Cell::text(std::string(100, 'z'))}});
  EXPECT_EQ(written(table, Format::table), "n  description\n1  " + std::string(100, 'z') + "\n");
}

TEST(TextWriter, StreamsRowsAfterTheSizingRowsWithTheirWidths) {
  std::ostringstream out;
  const auto writer = make_row_writer(out, Format::table, 2);
  writer->begin({{"a"}, {"b", "", Align::right}});
  writer->row({Cell::text("x"), Cell::integer(1)});
  EXPECT_EQ(out.str(), "");  // still sizing the columns
  writer->row({Cell::text("yy"), Cell::integer(22)});
  EXPECT_EQ(out.str(), "a    b\nx    1\nyy  22\n");
  writer->row({Cell::text("zzzz"), Cell::integer(3)});  // wider than the fixed width: pushes its line out
  writer->end();
  EXPECT_EQ(out.str(), "a    b\nx    1\nyy  22\nzzzz   3\n");
}

TEST(TextWriter, HeaderOnlyAndNoColumns) {
  const Table table = table_of({{"a"}, {"bb"}});
  EXPECT_EQ(written(table, Format::table), "a  bb\n");
  EXPECT_EQ(written(Table{}, Format::table), "");
}

TEST(CsvWriter, WritesHeaderTypedFieldsAndNullsAsEmpty) {
  EXPECT_EQ(written(timing_table(), Format::csv),
            "name,time_us,note\n"
            "flash,12,ok\n"
            "math,,\n");
}

TEST(CsvWriter, QuotesCommasQuotesAndLineBreaks) {
  const Table table = table_of({{"a,b"}, {"text"}}, {{Cell::text("plain"), Cell::text("say \"hi\"")},
                                                     {Cell::text("x,y"), Cell::text("line1\nline2")},
                                                     {Cell::text("cr\r"), Cell::text("")}});
  EXPECT_EQ(written(table, Format::csv),
            "\"a,b\",text\n"
            "plain,\"say \"\"hi\"\"\"\n"
            "\"x,y\",\"line1\nline2\"\n"
            "\"cr\r\",\n");
}

TEST(CsvWriter, WritesRealsAtFullPrecision) {
  const Table table = table_of({{"value"}, {"nan"}}, {{Cell::real(0.1, 2), Cell::real(std::nan(""), 2)},
                                                      {Cell::real(1e300, -1), Cell::real(-0.5, 0)}});
  EXPECT_EQ(written(table, Format::csv),
            "value,nan\n"
            "0.10000000000000001,\n"
            "1.0000000000000001e+300,-0.5\n");
}

TEST(JsonWriter, WritesTypedValuesInColumnOrder) {
  const Table table = table_of(
      {{"name"}, {"count"}, {"time_us", "us"}, {"note"}, {"bad"}},
      {{Cell::text("flash \"v2\""), Cell::integer(3), Cell::real(0.1, 2), Cell::null(), Cell::real(std::nan(""), 2)},
       {Cell::text("math"), Cell::integer(-9223372036854775807LL - 1), Cell::real(2.0, -1), Cell::text(""),
        Cell::real(1.0 / 3, 1)}});
  EXPECT_EQ(written(table, Format::json),
            "[\n"
            "  {\n"
            "    \"name\": \"flash \\\"v2\\\"\",\n"
            "    \"count\": 3,\n"
            "    \"time_us\": 0.1,\n"
            "    \"note\": null,\n"
            "    \"bad\": null\n"
            "  },\n"
            "  {\n"
            "    \"name\": \"math\",\n"
            "    \"count\": -9223372036854775808,\n"
            "    \"time_us\": 2.0,\n"
            "    \"note\": \"\",\n"
            "    \"bad\": 0.3333333333333333\n"
            "  }\n"
            "]\n");
}

TEST(JsonWriter, EmptyTableIsAnEmptyArray) {
  const Table table = table_of({{"a"}});
  EXPECT_EQ(written(table, Format::json), "[]\n");
  EXPECT_EQ(written(Table{}, Format::json), "[]\n");
}

TEST(JsonWriter, RepeatedColumnNamesGetASuffixSoNoValueIsLost) {
  const Table table = table_of({{"id"}, {"id"}, {"id_2"}, {"id"}},
                               {{Cell::integer(1), Cell::integer(2), Cell::integer(3), Cell::integer(4)}});
  EXPECT_EQ(written(table, Format::json),
            "[\n  {\n    \"id\": 1,\n    \"id_2\": 2,\n    \"id_2_2\": 3,\n    \"id_3\": 4\n  }\n]\n");
}

TEST(JsonWriter, ReplacesInvalidUtf8InsteadOfFailing) {
  const Table table = table_of({{"a"}}, {{Cell::text("x\xffy")}});
  EXPECT_EQ(written(table, Format::json), "[\n  {\n    \"a\": \"x\xef\xbf\xbdy\"\n  }\n]\n");
}

TEST(MarkdownWriter, WritesAlignmentRowAndNullText) {
  EXPECT_EQ(written(timing_table(), Format::markdown),
            "| name | time_us | note |\n"
            "| --- | ---: | --- |\n"
            "| flash | 12 | ok |\n"
            "| math | - | - |\n");
}

TEST(MarkdownWriter, AddsUnitsToHeadersThatDoNotNameThem) {
  const Table table = table_of({{"gpu_time_us", "us", Align::right},
                                {"throughput", "TFLOP/s", Align::right},
                                {"peak_mem_bytes", "bytes", Align::right},
                                {"status", "us"},
                                {"us", "us"},
                                {"variant"}});
  EXPECT_EQ(written(table, Format::markdown),
            "| gpu_time_us | throughput (TFLOP/s) | peak_mem_bytes | status (us) | us | variant |\n"
            "| ---: | ---: | ---: | --- | --- | --- |\n");
}

TEST(MarkdownWriter, EscapesPipesAndLineBreaks) {
  const Table table = table_of({{"a|b"}, {"text"}}, {{Cell::text("x|y"), Cell::text("line1\nline2\r\nline3\rline4")},
                                                     {Cell::real(1.25, 2), Cell::null()}});
  EXPECT_EQ(written(table, Format::markdown),
            "| a\\|b | text |\n"
            "| --- | --- |\n"
            "| x\\|y | line1 line2 line3 line4 |\n"
            "| 1.25 | - |\n");
}

TEST(MarkdownWriter, NoColumnsPrintsNothing) { EXPECT_EQ(written(Table{}, Format::markdown), ""); }

}  // namespace
}  // namespace attnsweep::report
