// `weft record` of an example, then `weft imbalance --format json` of its
// profile: what the end-to-end imbalance tests run, and the profile's meta.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

#include "support/command_runner.h"

namespace weft_test {

struct RecordedImbalance {
  std::string profile;  // dir/p.db
  CommandResult record;
  CommandResult view;
};

// Records `command` (a program and its arguments) with `backend` into
// dir/p.db, then views its imbalance as JSON.
inline RecordedImbalance record_imbalance(const TempDir& dir, const std::string& backend,
                                          const std::string& command) {
  const std::string weft = std::string(WEFT_BIN_DIR) + "/weft";
  RecordedImbalance r;
  r.profile = (dir.path / "p.db").string();
  r.record = run_command(weft + " record --backend " + backend + " " + kExampleCache + " -o " +
                             r.profile + " -- " + command,
                         dir.path);
  r.view = run_command(weft + " imbalance --format json " + r.profile, dir.path);
  return r;
}

// The value of `key` in the profile's meta, if it has one.
inline std::optional<std::string> profile_meta(const std::string& profile, const std::string& key) {
  sqlite3* db = nullptr;
  std::optional<std::string> value;
  if (sqlite3_open_v2(profile.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &s, nullptr) ==
        SQLITE_OK) {
      sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr)
        value = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      sqlite3_finalize(s);
    }
  }
  sqlite3_close(db);
  return value;
}

}  // namespace weft_test
