// The profile's rows: the input is a list of edits to a valid recorded
// profile (fuzz/corpus/profile_file/ring.weft): a cell of some row set to
// a value (a small or huge integer, a negative one, text, NULL, a real, a
// trace encoding with a loop of any count), a column set in every row, a
// row deleted, a meta key set (after a first byte that chooses the view
// and its format). The edited file is then read by that view
// (fuzz_views.h). This reaches what byte flips of the file rarely do:
// well-formed SQLite with values a view does not expect (a thread id of
// 1,000,000, a negative count, granularity 'x').
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "common/loop_trace_format.h"
#include "fuzz_support.h"
#include "fuzz_views.h"

namespace {

struct Table {
  std::string name;
  std::vector<std::string> columns;
};

// The seed's bytes and tables, read once.
struct Seed {
  std::vector<char> bytes;
  std::vector<Table> tables;
};

const char* seed_path() {
  const char* path = std::getenv("WEFT_FUZZ_SEED_PROFILE");
  return path && *path ? path : WEFT_FUZZ_SEED_PROFILE;
}

const Seed& seed() {
  static const Seed s = [] {
    Seed seed;
    std::ifstream in(seed_path(), std::ios::binary);
    seed.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    sqlite3* db = nullptr;
    if (seed.bytes.empty() || sqlite3_open_v2(seed_path(), &db, SQLITE_OPEN_READONLY, nullptr))
      std::abort();  // the seed profile is missing: nothing to fuzz
    sqlite3_stmt* tables = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1,
                       &tables, nullptr);
    while (sqlite3_step(tables) == SQLITE_ROW) {
      Table table{reinterpret_cast<const char*>(sqlite3_column_text(tables, 0)), {}};
      sqlite3_stmt* info = nullptr;
      sqlite3_prepare_v2(db, ("PRAGMA table_info(\"" + table.name + "\")").c_str(), -1, &info,
                         nullptr);
      while (sqlite3_step(info) == SQLITE_ROW)
        table.columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(info, 1)));
      sqlite3_finalize(info);
      seed.tables.push_back(std::move(table));
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    return seed;
  }();
  return s;
}

// The input, read front to back; zeros once it is used up.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t byte() { return p_ == end_ ? 0 : *p_++; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  std::string text() {
    const size_t n = std::min<size_t>(byte() % 48, static_cast<size_t>(end_ - p_));
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Binds parameter 1 to a value chosen by the input.
void bind_value(sqlite3_stmt* statement, Input& in) {
  static constexpr int64_t kEdges[] = {-1,
                                       0,
                                       1,
                                       2,
                                       63,
                                       64,
                                       1024,
                                       65534,
                                       1000000,
                                       INT32_MAX,
                                       4294967296,
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min()};
  switch (in.byte() % 7) {
    case 0:
      sqlite3_bind_int64(statement, 1, static_cast<int8_t>(in.byte()));
      break;
    case 1:
      sqlite3_bind_int64(statement, 1, static_cast<int64_t>(in.u64()));
      break;
    case 2:
      sqlite3_bind_int64(statement, 1, kEdges[in.byte() % std::size(kEdges)]);
      break;
    case 3: {
      const std::string text = in.text();
      sqlite3_bind_text(statement, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      break;
    }
    case 4:
      sqlite3_bind_null(statement, 1);
      break;
    case 5: {
      // A well-formed trace encoding (common/loop_trace_format.h) of one
      // loop of the input's count around one strided value, for the
      // traces' `encoding`: a few bytes that expand to 2^63 addresses.
      uint8_t bytes[32] = {1, 1};
      size_t n = 2;
      n += weft::loop_trace_format::put_varint(bytes + n, in.u64());
      bytes[n++] = 1;                                      // body of one element
      bytes[n++] = weft::loop_trace_format::value_tag(1);  // a value, one coefficient
      n += weft::loop_trace_format::put_varint(bytes + n, in.byte());
      n += weft::loop_trace_format::put_varint(bytes + n, 16);
      sqlite3_bind_blob(statement, 1, bytes, static_cast<int>(n), SQLITE_TRANSIENT);
      break;
    }
    default: {
      const uint64_t bits = in.u64();
      double value;
      std::memcpy(&value, &bits, sizeof value);
      sqlite3_bind_double(statement, 1, value);
    }
  }
}

void run(sqlite3* db, const std::string& sql, Input& in, bool with_value, int64_t offset) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) return;
  if (with_value) bind_value(statement, in);
  if (sqlite3_bind_parameter_count(statement) >= 2) sqlite3_bind_int64(statement, 2, offset);
  sqlite3_step(statement);  // a constraint may refuse the edit: then it is not made
  sqlite3_finalize(statement);
}

const char* const kMetaKeys[] = {"granularity",  "complete",          "schema_version",
                                 "analyses",     "max_threads",       "llc_bytes",
                                 "line_size",    "cache_levels",      "args",
                                 "duration_s",   "exit_status",       "miss_penalties",
                                 "trace_budget", "incomplete_reason", "barrier_instances"};

void edit(sqlite3* db, Input& in) {
  const std::vector<Table>& tables = seed().tables;
  for (int edits = 0; edits < 8 && !in.empty(); ++edits) {
    const uint8_t op = in.byte() % 4;
    const Table& table = tables[in.byte() % tables.size()];
    const std::string& column = table.columns[in.byte() % table.columns.size()];
    const std::string& key = table.columns.front();
    const int64_t row = in.byte();
    const std::string t = "\"" + table.name + "\"", c = "\"" + column + "\"", k = "\"" + key + "\"";
    const std::string which =
        " WHERE " + k + " IS (SELECT " + k + " FROM " + t + " LIMIT 1 OFFSET ?2)";
    switch (op) {
      case 0:  // one row's cell (every row sharing its first column)
        run(db, "UPDATE " + t + " SET " + c + " = ?1" + which, in, true, row);
        break;
      case 1:  // a column in every row
        run(db, "UPDATE " + t + " SET " + c + " = ?1", in, true, row);
        break;
      case 2:
        run(db, "DELETE FROM " + t + which, in, false, row);
        break;
      default:
        run(db,
            std::string("INSERT OR REPLACE INTO meta(key, value) VALUES ('") +
                kMetaKeys[in.byte() % std::size(kMetaKeys)] + "', ?1)",
            in, true, row);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static weft_fuzz::ScratchFile file("rows.weft");
  const Seed& s = seed();
  file.write(reinterpret_cast<const uint8_t*>(s.bytes.data()), s.bytes.size());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.path().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_exec(db, "PRAGMA journal_mode = MEMORY; BEGIN", nullptr, nullptr, nullptr);
    Input in(data + (size ? 1 : 0), size ? size - 1 : 0);  // data[0] chooses the view
    edit(db, in);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  }
  sqlite3_close(db);
  weft_fuzz::run_view(file.path(), size ? data[0] : 0);
  return 0;
}
