#pragma once
// Writers that turn a Table into one output format each; a command builds the Table once and
// write_table picks the writer, so no command carries its own printer.
#include <ostream>

#include "runner/report/format.hpp"
#include "runner/report/table.hpp"

namespace attnsweep::report {

void write_table(std::ostream& out, const Table& table, Format format);

// Aligned columns for a terminal, the layout `attnsweep query` has always printed: two spaces between
// columns, text longer than the column's max_width (80) cut to 77 plus "...", no trailing spaces. No columns: nothing.
void write_text(std::ostream& out, const Table& table);
// RFC 4180 with a header row; null is an empty field; reals at full precision (%.17g) so they round-trip.
void write_csv(std::ostream& out, const Table& table);
// One array of objects keyed by column name in column order, values typed; an empty table is [].
void write_json(std::ostream& out, const Table& table);
// A GitHub table; headers carry the unit in parentheses unless the name already ends in it.
void write_markdown(std::ostream& out, const Table& table);

}  // namespace attnsweep::report
