// The false-sharing analysis' tables (docs/profile-format.md): the falsely
// shared lines, the unsynchronised writes, the true/false transfer totals per
// thread pair, and the data objects behind each line; and their readers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/false_sharing/false_sharing_records.h"
#include "profile/profile.h"

namespace weft {

// data_objects: what a falsely shared line belongs to: a global or static
// variable (from the symbol table), a heap block (by the call that
// allocated it, as recorded by the event source), or nothing known.
struct DataObject {
  uint64_t line_address = 0;
  std::string kind;  // "global", "heap", "unknown"
  std::string name;
  uint64_t object_address = 0;
  uint64_t object_size = 0;
  uint64_t allocation_pc = 0;  // 0 unless heap
  uint32_t allocation_thread = 0;
};

// line_objects: an object lying in the bytes a line's records used, from
// byte `offset` of the line (its first byte there; object.line_address is
// the line).
struct LineObject {
  uint32_t offset = 0;
  DataObject object;  // kind "global" or "heap"
};

// The analysis' line (meta line_size); 64 when absent.
uint32_t false_sharing_line_size(const Profile& profile);
// The tables' rows as the analysis produced them (false_sharing_records.h).
// Profiles of an earlier weft without unsync_writes, line_objects or
// line_sharing.thread_written read as having none.
std::vector<LineSharingRecord> line_sharing(const Profile& profile);
std::vector<UnsyncWriteRecord> unsync_writes(const Profile& profile);
std::vector<SharingPairTotals> sharing_totals(const Profile& profile);
std::vector<DataObject> data_objects(const Profile& profile);
std::vector<LineObject> line_objects(const Profile& profile);  // by line, offset

}  // namespace weft
