// The tables of the false-sharing and traces analyses (docs/profile-format.md):
// what the profile writer derives for them before writing (the data object
// behind each falsely shared line) and how trace encodings are stored
// (zstd-compressed LoopTrace encodings).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/run_capture.h"
#include "profile/profile.h"
#include "profile/sqlite_db.h"
#include "static/symbolizer.h"

namespace weft {

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
