// The tables of the false-sharing and traces analyses (docs/profile-format.md):
// what the profile writer derives for them before writing (the data object
// behind each falsely shared line) and how trace encodings are stored
// (zstd-compressed LoopTrace encodings).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/run_capture.h"
#include "profile/sqlite_db.h"
#include "static/symbolizer.h"

namespace weft {

// What a line with false sharing belongs to: a global or static variable
// (from the modules' symbol tables), a heap block (by the call site that
// allocated it, as recorded by the event source), or nothing known.
struct DataObject {
  uint64_t line_address = 0;
  std::string kind;  // "global", "heap" or "unknown"
  std::string name;  // the variable's name (global); empty otherwise
  uint64_t object_address = 0;
  uint64_t object_size = 0;
  uint64_t allocation_pc = 0;  // heap: the allocating call
  uint32_t allocation_thread = 0;
};

// One DataObject per line of `capture.line_sharing`, in line order. A heap
// line belongs to the latest recorded block (highest sequence) covering it.
std::vector<DataObject> resolve_data_objects(const RunCapture& capture, Symbolizer& symbolizer);

// Writes line_sharing, sharing_totals, data_objects and memory_traces.
void write_memory_tables(const sqlite::Database& db, const RunCapture& capture,
                         const std::vector<DataObject>& objects);

// zstd, as stored in memory_traces.encoding. decompress throws ProfileError
// on a corrupt blob.
std::vector<uint8_t> compress_trace_encoding(const std::vector<uint8_t>& encoding);
std::vector<uint8_t> decompress_trace_encoding(const std::vector<uint8_t>& blob,
                                               uint64_t encoded_bytes);

}  // namespace weft
