#include "profile/sqlite_db.h"

namespace weft::sqlite {
namespace {

[[noreturn]] void fail(sqlite3* db, int rc) {
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw Error(rc & 0xff, message);
}

}  // namespace

Database::Database(const std::string& path, int flags) {
  int rc = sqlite3_open_v2(path.c_str(), &handle_, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error(rc & 0xff, handle_ != nullptr ? sqlite3_errmsg(handle_) : sqlite3_errstr(rc));
    sqlite3_close(handle_);
    handle_ = nullptr;
    throw error;
  }
  sqlite3_extended_result_codes(handle_, 1);
}

Database::~Database() { sqlite3_close(handle_); }

void Database::exec(const char* sql) {
  int rc = sqlite3_exec(handle_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(handle_, rc);
}

Statement::Statement(const Database& db, std::string_view sql) : db_(db.handle()) {
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr);
  if (rc != SQLITE_OK) fail(db_, rc);
}

Statement::~Statement() { sqlite3_finalize(statement_); }

void Statement::bind(int index, std::string_view value) {
  check(sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT));
}

void Statement::bind(int index, const std::vector<uint8_t>& blob) {
  check(sqlite3_bind_blob64(statement_, index, blob.data(), blob.size(), SQLITE_TRANSIENT));
}

std::vector<uint8_t> Statement::column_blob(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(statement_, column));
  if (data == nullptr) return {};
  return std::vector<uint8_t>(data, data + sqlite3_column_bytes(statement_, column));
}

bool Statement::step() {
  int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, rc);
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int64_t Statement::column_int(int column) const { return sqlite3_column_int64(statement_, column); }

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

void Statement::check(int rc) const {
  if (rc != SQLITE_OK) fail(db_, rc);
}

double Statement::column_double(int column) const {
  return sqlite3_column_double(statement_, column);
}

}  // namespace weft::sqlite
