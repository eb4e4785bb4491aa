// Table descriptors: one stored table spelled out once, as a constexpr array
// of columns (name, SQL type and constraints, comment, and how the column maps
// to a field of the record), from which come the CREATE TABLE text, the
// writer's INSERT and its binds, and the reader's SELECT and column reads.
// The tables themselves are in exporters/sqlite/schema.h.
//
// A column's storage follows the C++ type of its field (Codec below): unsigned
// integers as the int64 of the same bits, signed as int64, bool as 0/1,
// double as REAL (NaN is NULL), std::string as TEXT, optionals as NULL when
// absent, and the vectors as JSON text (json_text.h). A field path through an
// optional (`&JobRecord::failure, &JobFailure::cls`) makes the column NULL
// while the optional is absent; every column through it is then NULL
// together. Columns that are not fields of the record say what they are by
// their Role: SQLite's row number, the owning record's key, the row's
// position in its owner's list, or a constant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "exporters/sqlite/json_text.h"
#include "exporters/sqlite/sqlite_util.h"
#include "model/records.h"

namespace ckpt::table {

// What a column holds.
enum class Role : uint8_t {
  Field,     // a field of the record
  RowId,     // seq INTEGER PRIMARY KEY: SQLite numbers the rows; never bound, ORDER BY it
  Owner,     // the key of the record whose list holds the row (a checkpoint id, a mount's seq)
  Ordinal,   // the row's position in its owner's list
  Constant,  // the same value in every row (the single job row's id)
};

// A value the reader refuses, phrased either about the column ("job.command
// is not a JSON array of strings") or about the row ("checkpoint 1 has
// unknown direction 'x'").
struct Complaint {
  bool about_row = false;
  std::string text;
};

// ---- codecs: how one C++ type is stored ----

template <typename T>
struct Codec;

template <typename T>
requires std::is_unsigned_v<T> &&(!std::is_same_v<T, bool>)struct Codec<T> {
  static void bind(sqlite::Stmt& s, int i, T v) { s.bind_u64(i, v); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, T& out) {
    out = static_cast<T>(s.col_u64(i));
    return std::nullopt;
  }
  // Top bit set: exercises the two's complement storage.
  static T sample(uint64_t seed) {
    return static_cast<T>((uint64_t{1} << (sizeof(T) * 8 - 1)) + seed);
  }
};

template <typename T>
requires std::is_signed_v<T> && std::is_integral_v<T>
struct Codec<T> {
  static void bind(sqlite::Stmt& s, int i, T v) { s.bind_i64(i, v); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, T& out) {
    out = static_cast<T>(s.col_i64(i));
    return std::nullopt;
  }
  static T sample(uint64_t seed) { return static_cast<T>(-static_cast<int64_t>(seed)); }
};

template <>
struct Codec<bool> {
  static void bind(sqlite::Stmt& s, int i, bool v) { s.bind_i64(i, v ? 1 : 0); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, bool& out) {
    out = s.col_i64(i) != 0;
    return std::nullopt;
  }
  static bool sample(uint64_t /*seed*/) { return true; }
};

// SQLite stores a NaN as NULL; a NULL in a column that is not optional reads
// back as NaN.
template <>
struct Codec<double> {
  static void bind(sqlite::Stmt& s, int i, double v) { s.bind_double(i, v); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, double& out) {
    out = s.col_opt_double(i).value_or(std::numeric_limits<double>::quiet_NaN());
    return std::nullopt;
  }
  // Not a short binary fraction: survives only bit-exact storage.
  static double sample(uint64_t seed) { return static_cast<double>(seed) + 1.0 / 3.0; }
};

template <>
struct Codec<std::string> {
  // Bound in place: the record outlives the statement's step.
  static void bind(sqlite::Stmt& s, int i, const std::string& v) { s.bind_text(i, v); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, std::string& out) {
    out = s.col_text(i);
    return std::nullopt;
  }
  static std::string sample(uint64_t seed) { return "v" + std::to_string(seed) + " 模 \xff"; }
};

template <>
struct Codec<Direction> {
  static void bind(sqlite::Stmt& s, int i, Direction v) { s.bind_text(i, to_string(v)); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, Direction& out) {
    std::string text = s.col_text(i);
    auto d = direction_from_string(text);
    if (!d) return Complaint{true, "has unknown direction '" + text + "'"};
    out = *d;
    return std::nullopt;
  }
  static Direction sample(uint64_t /*seed*/) { return Direction::Load; }  // not the default
};

// The JSON columns: encoded text is a temporary, so it is bound as a copy.
template <typename T, auto Encode, auto Decode, const char* kWhat>
struct JsonCodec {
  static void bind(sqlite::Stmt& s, int i, const T& v) { s.bind_text_copy(i, Encode(v)); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, T& out) {
    auto decoded = Decode(s.col_text(i));
    if (!decoded) return Complaint{false, std::string("is not ") + kWhat};
    out = std::move(*decoded);
    return std::nullopt;
  }
};

inline constexpr char kJsonStrings[] = "a JSON array of strings";
inline constexpr char kJsonProcessIds[] = "a JSON array of process ids";
inline constexpr char kJsonCounts[] = "a JSON object of counts";

template <>
struct Codec<std::vector<std::string>>
    : JsonCodec<std::vector<std::string>, json_text::encode_strings, json_text::decode_strings,
                kJsonStrings> {
  static std::vector<std::string> sample(uint64_t seed) {
    return {"s" + std::to_string(seed), "", "\"q\" \xff"};
  }
};

// The one list of unsigned 32-bit numbers stored is job.root_pids.
template <>
struct Codec<std::vector<uint32_t>> : JsonCodec<std::vector<uint32_t>, json_text::encode_u32s,
                                                json_text::decode_u32s, kJsonProcessIds> {
  static std::vector<uint32_t> sample(uint64_t seed) {
    return {static_cast<uint32_t>(seed), std::numeric_limits<uint32_t>::max()};
  }
};

template <>
struct Codec<std::vector<std::pair<std::string, uint64_t>>>
    : JsonCodec<std::vector<std::pair<std::string, uint64_t>>, json_text::encode_u64_object,
                json_text::decode_u64_object, kJsonCounts> {
  static std::vector<std::pair<std::string, uint64_t>> sample(uint64_t seed) {
    return {{"k" + std::to_string(seed), seed}, {"max", std::numeric_limits<uint64_t>::max()}};
  }
};

template <typename T>
struct Codec<std::optional<T>> {
  static void bind(sqlite::Stmt& s, int i, const std::optional<T>& v) {
    if (v) {
      Codec<T>::bind(s, i, *v);
    } else {
      s.bind_null(i);
    }
  }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, std::optional<T>& out) {
    if (s.is_null(i)) {
      out.reset();
      return std::nullopt;
    }
    return Codec<T>::read(s, i, out.emplace());
  }
  static std::optional<T> sample(uint64_t seed) { return Codec<T>::sample(seed); }
};

// ---- columns and tables ----

template <typename Record>
struct Column {
  std::string_view name;
  std::string_view sql;      // type and constraints, as CREATE TABLE has them
  std::string_view comment;  // shown after the column in the schema; '\n' between lines
  Role role = Role::Field;
  int since = 1;                          // the schema version that added the column
  std::string_view older_files = "NULL";  // the SQL value read in its place from older files
  // Through an optional: NULL exactly when the optional is absent, together
  // with every other such column of the table.
  bool null_together = false;
  int64_t constant = 0;        // Role::Constant
  std::string_view refers_to;  // Role::Owner: the owner's name in messages, e.g. "checkpoint"
  void (*bind)(sqlite::Stmt&, int, const Record&) = nullptr;                      // Role::Field
  std::optional<Complaint> (*read)(const sqlite::Stmt&, int, Record&) = nullptr;  // Role::Field
  void (*fill)(Record&, uint64_t seed) = nullptr;  // Role::Field: a distinct non-default value
  // Role::Field of an integer type: whether a stored value is one the field
  // can hold (check_integer); null for the other types.
  std::optional<Complaint> (*check)(const sqlite::Stmt&, int, bool nullable,
                                    bool any_bits) = nullptr;
  bool nullable = false;  // an optional, or through one: NULL is "absent"
  // An unsigned 64-bit identifier (st_dev, st_ino, a socket cookie): every
  // bit pattern is one, so values from 2^63 up, stored as negative INTEGERs,
  // are too. Every other unsigned 64-bit field is a quantity (bytes,
  // nanoseconds, counts, ids numbered from 1) that never reaches 2^63 (8 EiB,
  // 292 years): a negative INTEGER there is damage, not a value (issue 36).
  bool any_bits = false;
  void (*fill_any_bits)(Record&, uint64_t seed) = nullptr;  // fill, for identifier()

  // A column newer than its table: files of older versions lack it and read
  // `value` (an SQL literal) instead.
  [[nodiscard]] constexpr Column added_in(int version, std::string_view value) const {
    Column c = *this;
    c.since = version;
    c.older_files = value;
    return c;
  }
  // An identifier: every 64-bit pattern is a value (any_bits).
  [[nodiscard]] constexpr Column identifier() const {
    Column c = *this;
    c.any_bits = true;
    if (c.fill_any_bits != nullptr) c.fill = c.fill_any_bits;
    return c;
  }
};

template <typename Record>
struct Table {
  std::string_view name;
  int since;                 // the schema version that added the table
  std::string_view comment;  // the lines above CREATE TABLE, '\n' between lines
  std::span<const Column<Record>> columns;
  std::string_view constraints = {};  // table constraints after the columns
  std::string_view after = {};        // statements that follow the table (its indexes)
  // How messages name a row ("checkpoint 7"), for complaints about the row.
  std::string (*row_name)(const Record&) = nullptr;
};

namespace detail {

template <typename M>
struct MemberOf;
template <typename C, typename T>
struct MemberOf<T C::*> {
  using Class = C;
  using Type = T;
};

template <typename T>
inline constexpr bool kIsOptional = false;
template <typename T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

template <typename T>
struct Unoptional {
  using Type = T;
};
template <typename T>
struct Unoptional<std::optional<T>> {
  using Type = T;
};

// The record a member path starts from, and the field it ends at.
template <auto... Path>
struct PathStart;
template <auto First, auto... Rest>
struct PathStart<First, Rest...> {
  using Type = typename MemberOf<decltype(First)>::Class;
};
template <auto... Path>
using PathRecord = typename PathStart<Path...>::Type;
template <auto... Path>
struct PathField;
template <auto Last>
struct PathField<Last> {
  using Type = typename MemberOf<decltype(Last)>::Type;
};
template <auto First, auto Second, auto... Rest>
struct PathField<First, Second, Rest...> {
  using Type = typename PathField<Second, Rest...>::Type;
};

// Whether a step before the last one is an optional.
template <auto... Path>
struct PathThroughOptional;
template <auto Last>
struct PathThroughOptional<Last> : std::false_type {};
template <auto First, auto Second, auto... Rest>
struct PathThroughOptional<First, Second, Rest...>
    : std::bool_constant<kIsOptional<typename MemberOf<decltype(First)>::Type> ||
                         PathThroughOptional<Second, Rest...>::value> {};

// The field at the end of the path, or null when an optional on the way is
// absent.
template <auto First, auto... Rest>
const typename PathField<First, Rest...>::Type* find(const PathRecord<First, Rest...>& r) {
  const auto& member = r.*First;
  if constexpr (sizeof...(Rest) == 0) {
    return &member;
  } else if constexpr (kIsOptional<std::remove_cvref_t<decltype(member)>>) {
    return member ? find<Rest...>(*member) : nullptr;
  } else {
    return find<Rest...>(member);
  }
}

// The field at the end of the path, creating the optionals on the way.
template <auto First, auto... Rest>
typename PathField<First, Rest...>::Type& make(PathRecord<First, Rest...>& r) {
  auto& member = r.*First;
  if constexpr (sizeof...(Rest) == 0) {
    return member;
  } else if constexpr (kIsOptional<std::remove_cvref_t<decltype(member)>>) {
    if (!member) member.emplace();
    return make<Rest...>(*member);
  } else {
    return make<Rest...>(member);
  }
}

template <auto... Path>
void bind_path(sqlite::Stmt& s, int i, const PathRecord<Path...>& r) {
  using Field = typename PathField<Path...>::Type;
  if (const Field* f = find<Path...>(r)) {
    Codec<Field>::bind(s, i, *f);
  } else {
    s.bind_null(i);
  }
}

template <auto... Path>
std::optional<Complaint> read_path(const sqlite::Stmt& s, int i, PathRecord<Path...>& r) {
  using Field = typename PathField<Path...>::Type;
  if (PathThroughOptional<Path...>::value && s.is_null(i)) return std::nullopt;
  return Codec<Field>::read(s, i, make<Path...>(r));
}

// A sample the field can hold: for an unsigned 64-bit quantity below 2^63
// (still above 2^32, so its storage as a 64-bit integer is exercised); for
// an identifier, with the top bit set (its two's complement storage).
template <typename F>
F sample_value(uint64_t seed, bool any_bits) {
  if constexpr (kIsOptional<F>) {
    return F(sample_value<typename Unoptional<F>::Type>(seed, any_bits));
  } else if constexpr (std::is_same_v<F, uint64_t>) {
    return any_bits ? Codec<F>::sample(seed) : (uint64_t{1} << 62) + seed;
  } else {
    return Codec<F>::sample(seed);
  }
}

template <bool AnyBits, auto... Path>
void fill_path(PathRecord<Path...>& r, uint64_t seed) {
  using Field = typename PathField<Path...>::Type;
  make<Path...>(r) = sample_value<Field>(seed, AnyBits);
}

// Whether the INTEGER stored for a field of type T is one T holds: an
// integer (not text, a real or a blob; NULL only where the field is
// optional), within T's range; an unsigned 64-bit quantity below 2^63
// (Column::any_bits). The complaint says what is there and what may be.
template <typename T>
std::optional<Complaint> check_integer(const sqlite::Stmt& s, int i, bool nullable, bool any_bits) {
  const int type = s.col_type(i);
  if (type == SQLITE_NULL) {
    if (nullable) return std::nullopt;
    return Complaint{false, "is NULL, not a whole number"};
  }
  if (type != SQLITE_INTEGER) {
    const char* what = type == SQLITE_FLOAT  ? "a real number"
                       : type == SQLITE_TEXT ? "text"
                                             : "a blob";
    return Complaint{false,
                     std::string("is ") + what + " ('" + s.col_text(i) + "'), not a whole number"};
  }
  const int64_t v = s.col_i64(i);
  int64_t low = 0;
  int64_t high = std::numeric_limits<int64_t>::max();
  if constexpr (std::is_same_v<T, bool>) {
    high = 1;
  } else if constexpr (std::is_unsigned_v<T>) {
    if constexpr (sizeof(T) == sizeof(uint64_t)) {
      if (any_bits) return std::nullopt;
    } else {
      high = static_cast<int64_t>(std::numeric_limits<T>::max());
    }
  } else {
    low = static_cast<int64_t>(std::numeric_limits<T>::min());
    high = static_cast<int64_t>(std::numeric_limits<T>::max());
  }
  if (v >= low && v <= high) return std::nullopt;
  return Complaint{
      false, "is " + std::to_string(v) + ", out of its range (" + std::to_string(low) + " to " +
                 std::to_string(high) +
                 (v < 0 && low == 0 ? "; an unsigned quantity is never negative)" : ")")};
}

template <typename Field>
constexpr bool kIntegerField = std::is_integral_v<typename Unoptional<Field>::Type>;

template <typename Record, typename T, T (*Get)(const Record&), void (*Set)(Record&, T)>
struct Computed {
  static void bind(sqlite::Stmt& s, int i, const Record& r) { Codec<T>::bind(s, i, Get(r)); }
  static std::optional<Complaint> read(const sqlite::Stmt& s, int i, Record& r) {
    T value{};
    auto complaint = Codec<T>::read(s, i, value);
    if (!complaint) Set(r, std::move(value));
    return complaint;
  }
  static void fill(Record& r, uint64_t seed) { Set(r, Codec<T>::sample(seed)); }
};

}  // namespace detail

// A field of the record, reached through a path of members.
template <auto... Path>
constexpr Column<detail::PathRecord<Path...>> field(std::string_view name, std::string_view sql,
                                                    std::string_view comment = {}) {
  Column<detail::PathRecord<Path...>> c{name, sql, comment};
  using Field = typename detail::PathField<Path...>::Type;
  c.null_together = detail::PathThroughOptional<Path...>::value;
  c.bind = &detail::bind_path<Path...>;
  c.read = &detail::read_path<Path...>;
  c.fill = &detail::fill_path<false, Path...>;
  c.fill_any_bits = &detail::fill_path<true, Path...>;
  c.nullable = c.null_together || detail::kIsOptional<Field>;
  if constexpr (detail::kIntegerField<Field>)
    c.check = &detail::check_integer<typename detail::Unoptional<Field>::Type>;
  return c;
}

// A column computed from the record (get) that sets it back when read (set).
template <typename Record, typename T, T (*Get)(const Record&), void (*Set)(Record&, T)>
constexpr Column<Record> computed(std::string_view name, std::string_view sql,
                                  std::string_view comment = {}) {
  using C = detail::Computed<Record, T, Get, Set>;
  Column<Record> c{name, sql, comment};
  c.bind = &C::bind;
  c.read = &C::read;
  c.fill = &C::fill;
  c.nullable = detail::kIsOptional<T>;
  if constexpr (detail::kIntegerField<T>)
    c.check = &detail::check_integer<typename detail::Unoptional<T>::Type>;
  return c;
}

template <typename Record>
constexpr Column<Record> row_id(std::string_view name, std::string_view sql,
                                std::string_view comment = {}) {
  return {name, sql, comment, Role::RowId};
}

template <typename Record>
constexpr Column<Record> owner(std::string_view name, std::string_view sql,
                               std::string_view refers_to, std::string_view comment = {}) {
  Column<Record> c{name, sql, comment, Role::Owner};
  c.refers_to = refers_to;
  return c;
}

template <typename Record>
constexpr Column<Record> ordinal(std::string_view name, std::string_view sql,
                                 std::string_view comment = {}) {
  return {name, sql, comment, Role::Ordinal};
}

template <typename Record>
constexpr Column<Record> constant(std::string_view name, std::string_view sql, int64_t value,
                                  std::string_view comment = {}) {
  Column<Record> c{name, sql, comment, Role::Constant};
  c.constant = value;
  return c;
}

// ---- SQL text ----

// CREATE TABLE as the schema has always been laid out: names padded to the
// longest, comments lined up after the widest plain column (keys, whose
// types are long, do not push them right), continued below themselves.
//
// `version`: the table as that schema version had it (its newer columns left
// out), so the text of an older version can be checked to stay as it shipped.
template <typename Record>
std::string create_table_sql(const Table<Record>& t,
                             int version = std::numeric_limits<int>::max()) {
  std::vector<Column<Record>> columns;
  for (const auto& c : t.columns)
    if (c.since <= version) columns.push_back(c);
  size_t name_width = 0;
  size_t type_width = 0;
  for (const auto& c : columns) {
    name_width = std::max(name_width, c.name.size());
    const bool key = c.role == Role::RowId || c.role == Role::Owner || c.role == Role::Constant;
    if (!key) type_width = std::max(type_width, c.sql.size() + 1);  // the comma counts
  }
  const size_t comment_at = 2 + name_width + 1 + type_width + 2;
  std::string out;
  auto comment_lines = [&out](std::string_view text, size_t indent) {
    bool first = true;
    while (true) {
      const size_t end = text.find('\n');
      if (!first) out.append(indent, ' ');
      out += "-- ";
      out += text.substr(0, end);
      out += '\n';
      first = false;
      if (end == std::string_view::npos) break;
      text.remove_prefix(end + 1);
    }
  };
  if (!t.comment.empty()) comment_lines(t.comment, 0);
  out += "CREATE TABLE ";
  out += t.name;
  out += " (\n";
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    const bool last = i + 1 == columns.size() && t.constraints.empty();
    const size_t line_start = out.size();
    out += "  ";
    out += c.name;
    out.append(name_width + 1 - c.name.size(), ' ');
    out += c.sql;
    if (!last) out += ',';
    if (c.comment.empty()) {
      out += '\n';
      continue;
    }
    out.append(comment_at - (out.size() - line_start), ' ');
    comment_lines(c.comment, comment_at);
  }
  if (!t.constraints.empty()) {
    out += "  ";
    out += t.constraints;
    out += '\n';
  }
  out += ");\n";
  if (!t.after.empty()) {
    out += t.after;
    out += '\n';
  }
  return out;
}

// INSERT of every column but the row number, parameters ?1, ?2, ... in
// column order (bind_row's numbering). `verb` is "INSERT" or "INSERT OR REPLACE".
template <typename Record>
std::string insert_sql(const Table<Record>& t, std::string_view verb = "INSERT") {
  std::string names;
  std::string params;
  int n = 0;
  for (const auto& c : t.columns) {
    if (c.role == Role::RowId) continue;
    if (n > 0) {
      names += ", ";
      params += ", ";
    }
    names += c.name;
    params += "?" + std::to_string(++n);
  }
  return std::string(verb) + " INTO " + std::string(t.name) + " (" + names + ") VALUES (" + params +
         ")";
}

// UPDATE of every column but `key` in the rows whose `key` equals the bound
// one, with bind_row's numbering.
template <typename Record>
std::string update_sql(const Table<Record>& t, std::string_view key) {
  std::string sets;
  std::string where;
  int n = 0;
  for (const auto& c : t.columns) {
    if (c.role == Role::RowId) continue;
    const std::string param = "?" + std::to_string(++n);
    if (c.name == key) {
      where = std::string(c.name) + " = " + param;
      continue;
    }
    if (!sets.empty()) sets += ", ";
    sets += std::string(c.name) + " = " + param;
  }
  return "UPDATE " + std::string(t.name) + " SET " + sets + " WHERE " + where;
}

// SELECT of every column in column order (read_row's numbering), in the
// order the rows were written: by row number; the single row of a table with
// a constant key; or by owner and position.
template <typename Record>
std::string select_sql(const Table<Record>& t, int version) {
  std::string columns;
  std::string_view row_id;
  std::string_view constant;
  std::string_view owner_key;
  std::string_view ordinal_key;
  for (const auto& c : t.columns) {
    if (!columns.empty()) columns += ", ";
    columns += c.since <= version ? c.name : c.older_files;
    if (c.role == Role::RowId) row_id = c.name;
    if (c.role == Role::Constant) constant = c.name;
    if (c.role == Role::Owner) owner_key = c.name;
    if (c.role == Role::Ordinal) ordinal_key = c.name;
  }
  std::string order;
  if (!row_id.empty()) {
    order = " ORDER BY " + std::string(row_id);
  } else if (!constant.empty()) {
    order = " ORDER BY " + std::string(constant) + " LIMIT 1";
  } else if (!owner_key.empty()) {
    order = " ORDER BY " + std::string(owner_key);
    if (!ordinal_key.empty()) order += ", " + std::string(ordinal_key);
  }
  return "SELECT " + columns + " FROM " + std::string(t.name) + order;
}

// ---- rows ----

// What a written row gets besides its record.
struct RowKey {
  std::optional<uint64_t> owner;  // Role::Owner; NULL when absent
  uint64_t ordinal = 0;           // Role::Ordinal
};

// What a read row says besides its record.
struct RowFound {
  std::optional<uint64_t> owner;  // Role::Owner; absent when NULL
  int64_t row_id = 0;             // Role::RowId
};

template <typename Record>
void bind_row(sqlite::Stmt& s, const Table<Record>& t, const Record& r, const RowKey& key = {}) {
  int param = 0;
  for (const auto& c : t.columns) {
    switch (c.role) {
      case Role::RowId:
        continue;
      case Role::Field:
        c.bind(s, ++param, r);
        break;
      case Role::Owner:
        if (key.owner) {
          s.bind_u64(++param, *key.owner);
        } else {
          s.bind_null(++param);
        }
        break;
      case Role::Ordinal:
        s.bind_u64(++param, key.ordinal);
        break;
      case Role::Constant:
        s.bind_i64(++param, c.constant);
        break;
    }
  }
}

// Reads the row a select_sql statement is on into `r` and `found`; on a
// value it refuses, the message saying which and why.
template <typename Record>
std::optional<std::string> read_row(const sqlite::Stmt& s, const Table<Record>& t, Record& r,
                                    RowFound& found) {
  std::string_view refers_to;
  std::vector<std::string_view> together;
  size_t together_null = 0;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& c = t.columns[i];
    const int col = static_cast<int>(i);
    if (c.role == Role::RowId) found.row_id = s.col_i64(col);
    if (c.role == Role::Owner) {
      found.owner = s.is_null(col) ? std::nullopt : std::optional<uint64_t>(s.col_u64(col));
      refers_to = c.refers_to;
    }
    if (c.null_together) {
      together.push_back(c.name);
      together_null += s.is_null(col) ? 1 : 0;
    }
  }
  if (together_null != 0 && together_null != together.size()) {
    std::string names;
    for (size_t i = 0; i < together.size(); ++i) {
      if (i > 0) names += i + 1 == together.size() ? " and " : ", ";
      names += std::string(t.name) + "." + std::string(together[i]);
    }
    return names + " are not all NULL or all set";
  }
  const bool numbered = std::any_of(t.columns.begin(), t.columns.end(),
                                    [](const Column<Record>& c) { return c.role == Role::RowId; });
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& c = t.columns[i];
    if (c.role != Role::Field) continue;
    std::optional<Complaint> complaint;
    if (c.check != nullptr) complaint = c.check(s, static_cast<int>(i), c.nullable, c.any_bits);
    if (!complaint) complaint = c.read(s, static_cast<int>(i), r);
    if (!complaint) continue;
    if (complaint->about_row && t.row_name != nullptr) {
      return t.row_name(r) + " " + complaint->text;
    }
    // The table, the column and the row: its owner, and its number (seq)
    // in the tables that have one.
    std::string where = std::string(t.name) + "." + std::string(c.name);
    if (found.owner && !refers_to.empty()) {
      where += " of " + std::string(refers_to) + " " + std::to_string(*found.owner);
    }
    if (numbered) where += " (row seq " + std::to_string(found.row_id) + ")";
    return where + " " + complaint->text;
  }
  return std::nullopt;
}

// Sets every field column of `r` to a distinct value that is not its
// default, `seed` upwards: what a round trip must give back unchanged.
template <typename Record>
uint64_t fill_every_field(const Table<Record>& t, Record& r, uint64_t seed) {
  for (const auto& c : t.columns) {
    if (c.role == Role::Field) c.fill(r, seed++);
  }
  return seed;
}

}  // namespace ckpt::table
