#include "exporters/sqlite/sqlite_util.h"

#include <climits>

namespace ckpt::sqlite {

std::string last_error(sqlite3* db) {
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : nullptr;
  return msg != nullptr ? msg : "out of memory";
}

Expected<DbPtr> open_db(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbPtr db(raw);  // sqlite3_open_v2 may hand back a handle even on failure
  if (rc != SQLITE_OK) return make_error(last_error(db.get()));
  // Extended codes make SQLITE_CORRUPT and friends distinguishable in messages.
  sqlite3_extended_result_codes(db.get(), 1);
  return db;
}

Expected<void> exec(sqlite3* db, std::string_view sql) {
  // sqlite3_exec wants a NUL-terminated string; the SQL here is small.
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return {};
  std::string message = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return make_error(std::move(message));
}

Expected<Stmt> Stmt::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  if (sql.size() > static_cast<size_t>(INT_MAX)) return make_error("SQL statement too long");
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  Stmt stmt(raw);
  if (rc != SQLITE_OK) return make_error(last_error(db));
  if (raw == nullptr) return make_error("empty SQL statement");
  return stmt;
}

void Stmt::bind_null(int i) { note(sqlite3_bind_null(stmt_.get(), i)); }

void Stmt::bind_i64(int i, int64_t v) { note(sqlite3_bind_int64(stmt_.get(), i, v)); }

void Stmt::bind_double(int i, double v) { note(sqlite3_bind_double(stmt_.get(), i, v)); }

void Stmt::bind_text(int i, std::string_view v) {
  // A null data pointer would bind SQL NULL; an empty view must stay ''.
  const char* data = v.data() != nullptr ? v.data() : "";
  note(sqlite3_bind_text64(stmt_.get(), i, data, v.size(), SQLITE_STATIC, SQLITE_UTF8));
}

void Stmt::bind_text_copy(int i, std::string_view v) {
  const char* data = v.data() != nullptr ? v.data() : "";
  note(sqlite3_bind_text64(stmt_.get(), i, data, v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

void Stmt::bind_opt_u64(int i, const std::optional<uint64_t>& v) {
  if (v) {
    bind_u64(i, *v);
  } else {
    bind_null(i);
  }
}

void Stmt::bind_opt_int(int i, const std::optional<int>& v) {
  if (v) {
    bind_i64(i, *v);
  } else {
    bind_null(i);
  }
}

void Stmt::bind_opt_double(int i, const std::optional<double>& v) {
  if (v) {
    bind_double(i, *v);
  } else {
    bind_null(i);
  }
}

int Stmt::step() {
  if (bind_rc_ != SQLITE_OK) return bind_rc_;
  return sqlite3_step(stmt_.get());
}

void Stmt::reset() {
  sqlite3_reset(stmt_.get());
  bind_rc_ = SQLITE_OK;
}

Expected<void> Stmt::run() {
  int bind_rc = bind_rc_;
  int rc = step();
  std::string message;
  if (bind_rc != SQLITE_OK) {
    message = sqlite3_errstr(bind_rc);
  } else if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    message = last_error(sqlite3_db_handle(stmt_.get()));
  }
  reset();
  if (!message.empty()) return make_error(std::move(message));
  return {};
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }

int Stmt::col_type(int col) const { return sqlite3_column_type(stmt_.get(), col); }

int64_t Stmt::col_i64(int col) const { return sqlite3_column_int64(stmt_.get(), col); }

double Stmt::col_double(int col) const { return sqlite3_column_double(stmt_.get(), col); }

std::string Stmt::col_text(int col) const {
  const auto* text = sqlite3_column_text(stmt_.get(), col);
  if (text == nullptr) return {};
  int n = sqlite3_column_bytes(stmt_.get(), col);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(n));
}

std::optional<uint64_t> Stmt::col_opt_u64(int col) const {
  if (is_null(col)) return std::nullopt;
  return col_u64(col);
}

std::optional<int> Stmt::col_opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return static_cast<int>(col_i64(col));
}

std::optional<double> Stmt::col_opt_double(int col) const {
  if (is_null(col)) return std::nullopt;
  return col_double(col);
}

}  // namespace ckpt::sqlite
