// Thin RAII layer over the SQLite C API, private to the profile module: a
// connection, prepared statements with typed binding, and errors that carry
// SQLite's result code so callers can tell "not a database" from "corrupt".
#pragma once

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace weft::sqlite {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // primary result code (SQLITE_NOTADB, SQLITE_CORRUPT...)

 private:
  int code_;
};

class Database {
 public:
  // flags: SQLITE_OPEN_READONLY, or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  Database(const std::string& path, int flags);
  ~Database();
  Database(Database&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database& operator=(Database&&) = delete;

  void exec(const char* sql);
  sqlite3* handle() const { return handle_; }

 private:
  sqlite3* handle_ = nullptr;
};

// Integers are stored as SQLite's signed 64-bit values; uint64_t round-trips
// bit for bit (pcs and counts never reach 2^63 in practice).
class Statement {
 public:
  Statement(const Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  template <std::integral T>
  void bind(int index, T value) {
    check(sqlite3_bind_int64(statement_, index, static_cast<sqlite3_int64>(value)));
  }
  void bind(int index, double value) { check(sqlite3_bind_double(statement_, index, value)); }
  void bind(int index, std::string_view value);
  void bind(int index, const char* value) { bind(index, std::string_view(value)); }
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }
  void bind(int index, std::nullptr_t) { check(sqlite3_bind_null(statement_, index)); }
  void bind(int index, const std::vector<uint8_t>& blob);
  template <class T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind(index, *value);
    } else {
      bind(index, nullptr);
    }
  }

  // Binds the arguments to parameters 1..N, runs the statement to completion
  // and resets it for the next use.
  template <class... Args>
  void run(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    while (step()) {
    }
    reset();
  }

  bool step();  // true while a row is available
  void reset();

  bool is_null(int column) const;
  int64_t column_int(int column) const;
  uint64_t column_u64(int column) const { return static_cast<uint64_t>(column_int(column)); }
  std::string column_text(int column) const;           // "" for NULL
  std::vector<uint8_t> column_blob(int column) const;  // empty for NULL
  double column_double(int column) const;

 private:
  void check(int rc) const;

  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

}  // namespace weft::sqlite
