// Thin RAII over the SQLite C API, private to the trace store. Only what the
// store needs: owning handles, a statement with typed bind/column helpers,
// and exec for statements without results.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt::sqlite {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;

// Opens `path` with `flags` (SQLITE_OPEN_*). On failure the error carries
// SQLite's message without any prefix; callers add the context.
Expected<DbPtr> open_db(const std::string& path, int flags);

// Runs one or more statements that return no rows we care about.
Expected<void> exec(sqlite3* db, std::string_view sql);

// The connection's latest error message.
std::string last_error(sqlite3* db);

class Stmt {
 public:
  Stmt() = default;
  static Expected<Stmt> prepare(sqlite3* db, std::string_view sql);

  // Parameters are 1-based, as in SQLite. A bind failure (e.g. a string too
  // big) is remembered and reported by the next step(), so call sites stay
  // flat. Text is bound SQLITE_STATIC: it must outlive step().
  void bind_null(int i);
  void bind_i64(int i, int64_t v);
  // Stored as the int64 with the same bit pattern (two's complement above 2^63).
  void bind_u64(int i, uint64_t v) { bind_i64(i, static_cast<int64_t>(v)); }
  void bind_double(int i, double v);
  void bind_text(int i, std::string_view v);
  // Text bound SQLITE_TRANSIENT (copied): for a temporary, such as encoded JSON.
  void bind_text_copy(int i, std::string_view v);
  void bind_opt_u64(int i, const std::optional<uint64_t>& v);
  void bind_opt_int(int i, const std::optional<int>& v);
  void bind_opt_double(int i, const std::optional<double>& v);

  // SQLITE_ROW or SQLITE_DONE on success; anything else is an error code.
  int step();
  // Steps a statement that returns no rows and resets it for reuse.
  Expected<void> run();
  void reset();

  [[nodiscard]] bool is_null(int col) const;
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  [[nodiscard]] int col_type(int col) const;
  [[nodiscard]] int64_t col_i64(int col) const;
  [[nodiscard]] uint64_t col_u64(int col) const { return static_cast<uint64_t>(col_i64(col)); }
  [[nodiscard]] double col_double(int col) const;
  [[nodiscard]] std::string col_text(int col) const;  // "" for NULL
  [[nodiscard]] std::optional<uint64_t> col_opt_u64(int col) const;
  [[nodiscard]] std::optional<int> col_opt_int(int col) const;
  [[nodiscard]] std::optional<double> col_opt_double(int col) const;

  [[nodiscard]] sqlite3_stmt* get() const { return stmt_.get(); }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  explicit Stmt(sqlite3_stmt* s) : stmt_(s) {}
  void note(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }

  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  int bind_rc_ = SQLITE_OK;
};

}  // namespace ckpt::sqlite
