// The false-sharing analysis' tables (docs/profile-format.md): the falsely
// shared lines, the unsynchronised writes, the true/false transfer totals per
// thread pair, and the data objects behind each line; and their readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/false_sharing/false_sharing_records.h"
#include "profile/data_objects.h"
#include "profile/profile.h"

namespace weft {

// data_objects: the DataObject (profile/data_objects.h) of each falsely
// shared line (its line_address).

// line_objects: an object lying in the bytes a line's records used, from
// byte `offset` of the line (its first byte there; object.line_address is
// the line).
struct LineObject {
  uint32_t offset = 0;
  DataObject object;  // kind "global" or "heap"
};

// pc_objects: what an instruction that read communicated data (raw + rar >
// 0 in `thread`) accessed there: of kPcObjectSamples addresses spread evenly
// over its memory trace in `thread` (every address of a shorter trace),
// `samples` fell in `object` (kind "unknown", address 0: in no known
// object). Written when the run recorded the traces too.
inline constexpr size_t kPcObjectSamples = 64;
struct PcObject {
  uint64_t pc = 0;
  uint32_t thread = 0;
  DataObject object;  // line_address unused (0)
  uint64_t samples = 0;
};

// A pc_objects row of a region's instruction with the communication its
// thread read there (raw + rar of pc_communication).
struct PcObjectVolume {
  PcObject row;
  uint64_t events = 0;
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
// The pc_objects rows of the instructions of code region `region_id`, by
// pc, thread, object; none for a profile without the table.
std::vector<PcObjectVolume> region_pc_objects(const Profile& profile, int64_t region_id);

}  // namespace weft
