// The profile's SQLite schema. docs/profile-format.md documents every table
// and column; change both together and bump kProfileSchemaVersion whenever a
// reader of the previous version would misread a new file.
#pragma once

#include <array>
#include <string_view>

namespace weft {

inline constexpr int kProfileSchemaVersion = 3;
// The oldest schema this weft reads: older ones are refused with a request to
// record again (docs/profile-format.md, "Versions", says how to migrate a v2
// profile by hand).
inline constexpr int kOldestReadableSchemaVersion = 3;

// PRAGMA application_id of every profile ("weft" in ASCII), so that `file`
// and other tools can recognise one.
inline constexpr int kProfileApplicationId = 0x77656674;

// The tables every run has whatever its analyses; each analysis' own tables
// are listed in its descriptor (common/analyses.h). A profile holds all of
// them (an analysis that did not run leaves its tables empty).
inline constexpr std::array<std::string_view, 7> kRunTables = {
    "meta", "threads", "modules", "code_locations", "inline_frames", "regions", "sync_events"};

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
CREATE TABLE matrix_entries(
  region_id INTEGER NOT NULL REFERENCES regions(id), kind TEXT NOT NULL,
  writer INTEGER NOT NULL, reader INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, kind, writer, reader)) WITHOUT ROWID;
CREATE INDEX matrix_entries_by_kind ON matrix_entries(kind, writer, reader);
CREATE TABLE pc_communication(
  pc INTEGER NOT NULL, thread INTEGER NOT NULL, peer INTEGER NOT NULL, raw INTEGER NOT NULL,
  rar INTEGER NOT NULL, inval INTEGER NOT NULL);
CREATE INDEX pc_communication_by_pc ON pc_communication(pc);
CREATE TABLE sync_events(
  thread INTEGER NOT NULL, kind TEXT NOT NULL, time_ns INTEGER NOT NULL, pc INTEGER,
  object INTEGER, arg0 INTEGER, arg1 INTEGER);
CREATE INDEX sync_events_by_thread ON sync_events(thread, time_ns);
CREATE TABLE crd_distances(
  region_id INTEGER NOT NULL REFERENCES regions(id), writer INTEGER NOT NULL,
  reader INTEGER NOT NULL, distance INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, writer, reader, distance)) WITHOUT ROWID;
CREATE TABLE crd_unmeasured(
  region_id INTEGER NOT NULL REFERENCES regions(id), writer INTEGER NOT NULL,
  reader INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, writer, reader)) WITHOUT ROWID;
CREATE TABLE region_footprints(
  region_id INTEGER PRIMARY KEY REFERENCES regions(id), private_granules INTEGER NOT NULL,
  shared_granules INTEGER NOT NULL);
CREATE TABLE section_instances(
  id INTEGER PRIMARY KEY, region_id INTEGER NOT NULL REFERENCES regions(id),
  instance INTEGER NOT NULL, thread_count INTEGER NOT NULL, imbalance REAL NOT NULL);
CREATE TABLE section_instance_threads(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, wall_ns INTEGER NOT NULL,
  instructions INTEGER NOT NULL, l1_misses INTEGER NOT NULL, l2_misses INTEGER NOT NULL,
  llc_misses INTEGER NOT NULL, modeled_cycles REAL NOT NULL,
  PRIMARY KEY(instance_id, thread)) WITHOUT ROWID;
CREATE TABLE instance_edges(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  from_pc INTEGER NOT NULL, to_pc INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(instance_id, thread, from_pc, to_pc)) WITHOUT ROWID;
CREATE TABLE instance_instructions(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  pc INTEGER NOT NULL, executions INTEGER NOT NULL, l1_misses INTEGER NOT NULL,
  l2_misses INTEGER NOT NULL, llc_misses INTEGER NOT NULL,
  PRIMARY KEY(instance_id, thread, pc)) WITHOUT ROWID;
CREATE TABLE control_flow_blocks(
  pc INTEGER PRIMARY KEY, instructions INTEGER NOT NULL, decision_pc INTEGER NOT NULL);
CREATE TABLE line_sharing(
  line_address INTEGER NOT NULL, thread INTEGER NOT NULL, writer INTEGER NOT NULL,
  pc INTEGER NOT NULL, false_events INTEGER NOT NULL, thread_bytes INTEGER NOT NULL,
  writer_bytes INTEGER NOT NULL, PRIMARY KEY(line_address, thread, writer, pc)) WITHOUT ROWID;
CREATE TABLE sharing_totals(
  thread INTEGER NOT NULL, writer INTEGER NOT NULL, true_events INTEGER NOT NULL,
  false_events INTEGER NOT NULL, PRIMARY KEY(thread, writer)) WITHOUT ROWID;
CREATE TABLE data_objects(
  line_address INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, object_address INTEGER,
  object_size INTEGER, allocation_pc INTEGER, allocation_thread INTEGER);
CREATE TABLE memory_traces(
  thread INTEGER NOT NULL, pc INTEGER NOT NULL, access_size INTEGER NOT NULL,
  reads INTEGER NOT NULL, writes INTEGER NOT NULL, accesses INTEGER NOT NULL,
  lost INTEGER NOT NULL, encoded_bytes INTEGER NOT NULL, encoding BLOB NOT NULL,
  PRIMARY KEY(thread, pc)) WITHOUT ROWID;
)sql";

}  // namespace weft
