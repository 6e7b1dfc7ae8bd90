// The profile's SQLite schema. docs/profile-format.md documents every table
// and column; change both together and bump kProfileSchemaVersion whenever a
// reader of the previous version would misread a new file.
#pragma once

#include <array>
#include <string_view>

namespace weft {

inline constexpr int kProfileSchemaVersion = 5;
// The oldest schema this weft reads: older ones are refused with a request to
// record again (docs/profile-format.md, "Versioning", says how to migrate a
// v4 profile by hand).
inline constexpr int kOldestReadableSchemaVersion = 5;

// PRAGMA application_id of every profile ("weft" in ASCII), so that `file`
// and other tools can recognise one.
inline constexpr int kProfileApplicationId = 0x77656674;

// The tables every run has whatever its analyses; each analysis' own tables
// are listed in its descriptor (common/analyses.h). A profile holds all of
// them (an analysis that did not run leaves its tables empty).
inline constexpr std::array<std::string_view, 7> kRunTables = {
    "meta", "threads", "modules", "code_locations", "inline_frames", "regions", "sync_events"};

// The run tables' SQL; each analysis' tables are created from its own
// (AnalysisTables::schema_sql, profile/analysis_tables.h).
inline constexpr const char* kProfileSchemaSql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE threads(
  id INTEGER PRIMARY KEY, os_tid INTEGER, parent INTEGER, start_routine_pc INTEGER,
  start_routine TEXT, creation_order INTEGER, start_ns INTEGER, end_ns INTEGER,
  basic_blocks INTEGER);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, build_id TEXT);
CREATE TABLE regions(
  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL UNIQUE, function TEXT,
  file TEXT, first_line INTEGER, last_line INTEGER, parent_id INTEGER REFERENCES regions(id));
CREATE TABLE code_locations(
  pc INTEGER PRIMARY KEY, module_id INTEGER REFERENCES modules(id), module_offset INTEGER,
  function TEXT, file TEXT, line INTEGER, column INTEGER,
  region_id INTEGER REFERENCES regions(id));
CREATE TABLE inline_frames(
  pc INTEGER NOT NULL, depth INTEGER NOT NULL, function TEXT, file TEXT, line INTEGER,
  column INTEGER, PRIMARY KEY(pc, depth)) WITHOUT ROWID;
CREATE TABLE sync_events(
  thread INTEGER NOT NULL, kind TEXT NOT NULL, time_ns INTEGER NOT NULL, pc INTEGER,
  object INTEGER, arg0 INTEGER, arg1 INTEGER);
CREATE INDEX sync_events_by_thread ON sync_events(thread, time_ns);
)sql";

}  // namespace weft
