#include "runner/storage/query.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <set>

#include "runner/common/errors.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/open_for_reading.hpp"

namespace attnsweep::storage {
namespace {

// PRAGMAs that take an argument and still only read (table_info(cases), ...);
// any other PRAGMA with a value sets something and is refused.
const std::set<std::string> kReadingPragmasWithArgument = {
    "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check", "table_list", "pragma_list"};

struct Refusal {
  std::string why;  // set by the authorizer, reported instead of SQLite's "not authorized"
};

int authorize(void* data, int action, const char* first, const char* second, const char*, const char*) {
  auto& refusal = *static_cast<Refusal*>(data);
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      refusal.why = "ATTACH and DETACH are refused: query reads the one database it is given";
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      if (second && !kReadingPragmasWithArgument.count(first ? first : "")) {
        refusal.why = std::string("PRAGMA ") + (first ? first : "") + " with a value changes the connection or the "
                      "database; query only reads (PRAGMA " + (first ? first : "") + " without a value reads it)";
        return SQLITE_DENY;
      }
      return SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

// Closed and finalized on every path out (sqlite3_close_v2 waits for open statements).
using Connection = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;
using Prepared = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

std::string skip_blank(const char* text) {
  std::string rest = text ? text : "";
  const auto first = rest.find_first_not_of(" \t\r\n;");
  return first == std::string::npos ? "" : rest.substr(first);
}

// Opens read-only and prepares the one statement; an empty statement for empty SQL.
Prepared open_and_prepare(const std::string& db_path, const std::string& sql, bool immutable, Connection& db,
                          Refusal& refusal) {
  const std::string name = immutable ? immutable_uri(db_path) : db_path;
  const int flags = SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0);
  sqlite3* handle = nullptr;
  const int opened = sqlite3_open_v2(name.c_str(), &handle, flags, nullptr);
  db.reset(handle);
  if (opened != SQLITE_OK) throw BadInputError(db_path + ": cannot open: " + sqlite3_errmsg(handle));
  sqlite3_busy_timeout(handle, 10000);
  sqlite3_set_authorizer(handle, authorize, &refusal);
  sqlite3_stmt* statement = nullptr;
  const char* tail = nullptr;
  const int prepared = sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &statement, &tail);
  Prepared first(statement, sqlite3_finalize);
  if (prepared != SQLITE_OK) {
    throw BadInputError(db_path + ": query failed: " + (refusal.why.empty() ? sqlite3_errmsg(handle) : refusal.why));
  }
  // A second statement would be dropped without a word: refuse it instead.
  const std::string rest = skip_blank(tail);
  if (!first || rest.empty()) return first;
  sqlite3_stmt* next = nullptr;
  const bool only_comments = sqlite3_prepare_v2(handle, rest.c_str(), -1, &next, nullptr) == SQLITE_OK && !next;
  sqlite3_finalize(next);
  if (only_comments) return first;
  throw BadInputError(db_path + ": one statement at a time; this follows the first: '" + rest.substr(0, 60) +
                      (rest.size() > 60 ? "...'" : "'") + "; run it separately");
}

}  // namespace

void run_query(const std::string& db_path, const std::string& sql,
               const std::function<void(const std::vector<std::string>&)>& on_columns,
               const std::function<void(const std::vector<QueryValue>&)>& on_row) {
  refuse_side_file_name(db_path);
  struct stat info {};
  if (stat(db_path.c_str(), &info) != 0) {
    throw BadInputError(db_path + ": " + (errno == ENOENT ? std::string("database not found") : std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) throw BadInputError(db_path + ": not a regular file, so not a results database");

  Connection db(nullptr, sqlite3_close_v2);
  Prepared prepared(nullptr, sqlite3_finalize);
  Refusal refusal;
  try {
    prepared = open_and_prepare(db_path, sql, /*immutable=*/false, db, refusal);
  } catch (const BadInputError&) {
    // A WAL database on read-only media cannot be opened for reading unless its
    // -shm file can be made. Without a -wal file all of it is in the database
    // file, and reading it as immutable is exact.
    const int code = db ? sqlite3_extended_errcode(db.get()) : SQLITE_CANTOPEN;
    if (!may_read_as_immutable(db_path, code)) throw;
    refusal.why.clear();
    prepared = open_and_prepare(db_path, sql, /*immutable=*/true, db, refusal);
  }
  if (!prepared) throw BadInputError("no SQL statement given; e.g. \"SELECT * FROM results\"");
  if (!sqlite3_stmt_readonly(prepared.get())) {
    throw BadInputError(db_path + ": query only reads; this statement would change the database (use SELECT, WITH "
                        "or a reading PRAGMA; sqlite3 for anything else)");
  }

  const int columns = sqlite3_column_count(prepared.get());
  std::vector<std::string> names;
  for (int i = 0; i < columns; ++i) names.push_back(sqlite3_column_name(prepared.get(), i));
  on_columns(names);
  std::vector<QueryValue> row(static_cast<std::size_t>(columns));
  int status = SQLITE_ROW;
  while ((status = sqlite3_step(prepared.get())) == SQLITE_ROW) {
    for (int i = 0; i < columns; ++i) {
      auto& value = row[static_cast<std::size_t>(i)];
      switch (sqlite3_column_type(prepared.get(), i)) {
        case SQLITE_NULL: value = std::monostate{}; break;
        case SQLITE_INTEGER: value = static_cast<std::int64_t>(sqlite3_column_int64(prepared.get(), i)); break;
        case SQLITE_FLOAT: value = sqlite3_column_double(prepared.get(), i); break;
        default: {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(prepared.get(), i));
          value = std::string(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(prepared.get(), i)));
        }
      }
    }
    on_row(row);
  }
  if (status != SQLITE_DONE) {
    throw BadInputError(db_path + ": query failed: " + sqlite3_errmsg(db.get()));
  }
}

}  // namespace attnsweep::storage
