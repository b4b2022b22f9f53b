#pragma once
// What the CLI tests share about tests/support/flash_like_op.cpp (FA3's calling
// convention on the CPU) and about reading a database back: the op-library
// entry of a config that loads it, and a query's rows as text.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace attnsweep::testing {

// A `variants:` entry loading attnsweep_flash_like::fwd as FA3 is mapped
// (bshd, a bottom-right causal flag, softmax_scale), plus `arguments` (YAML lines).
inline std::string flash_like(const std::string& name, const std::string& arguments) {
  return "  - name: " + name + "\n"
         "    kind: op_library\n"
         "    library: '" ATTNSWEEP_FLASH_LIKE_OP_LIBRARY "'\n"
         "    op: attnsweep_flash_like::fwd\n"
         "    layout: bshd\n"
         "    causal: is_causal\n"
         "    causal_alignment: bottom_right\n"
         "    scale: softmax_scale\n" +
         arguments;
}

// Every row of `sql`, its columns joined by '|', one row per line; NULL as "NULL".
inline std::string rows_text(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  std::string out;
  while (query.executeStep()) {
    for (int i = 0; i < query.getColumnCount(); ++i) {
      out += (i ? "|" : "") + (query.getColumn(i).isNull() ? std::string("NULL") : query.getColumn(i).getString());
    }
    out += "\n";
  }
  return out;
}

}  // namespace attnsweep::testing
