// The traces analysis' tables (docs/profile-format.md): one zstd-compressed
// LoopTrace encoding per thread and memory instruction; and their reader.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "profile/profile.h"

namespace weft {

// memory_traces.segments, one run: for j < count, the stream's first access
// in the thread's segment first_segment + j * segment_step is its access
// number first_access + j * access_step (from 0); accesses before the
// first run's are in segment 0 (the capture's TraceSegmentRun).
struct StreamSegmentRun {
  uint32_t first_segment = 0;
  uint32_t segment_step = 0;
  uint32_t count = 0;
  uint64_t first_access = 0;
  uint64_t access_step = 0;
  bool operator==(const StreamSegmentRun&) const = default;
};

// memory_traces: one compressed address stream, its encoding decompressed
// (decode it with decode_loop_trace, common/loop_trace.h).
struct MemoryTraceInfo {
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint32_t access_size = 0;
  bool reads = false;
  bool writes = false;
  uint64_t accesses = 0;
  uint64_t lost = 0;
  int64_t region_id = 0;  // the pc's region (0 when the pc is not described)
  std::vector<uint8_t> encoding;
  // Where its accesses cross the thread's segments; nullopt when unknown
  // (the budget ran out, or the profile predates them).
  std::optional<std::vector<StreamSegmentRun>> segments;
};

// The traces of `thread` / `pc` (nullopt: all), by thread then pc.
std::vector<MemoryTraceInfo> memory_traces(const Profile& profile,
                                           std::optional<uint32_t> thread = std::nullopt,
                                           std::optional<uint64_t> pc = std::nullopt);
// The distinct pcs memory_traces holds, ascending (no blob is read).
std::vector<uint64_t> memory_trace_pcs(const Profile& profile);

// memory_traces.segments: varint(runs), then per run varint(first_segment),
// varint(segment_step), varint(count), varint(first_access),
// varint(access_step). decode throws ProfileError on a corrupt blob.
std::vector<uint8_t> encode_segment_runs(const std::vector<StreamSegmentRun>& runs);
std::vector<StreamSegmentRun> decode_segment_runs(const std::vector<uint8_t>& blob);

// zstd, as stored in memory_traces.encoding. decompress throws ProfileError
// on a corrupt blob.
std::vector<uint8_t> compress_trace_encoding(const std::vector<uint8_t>& encoding);
std::vector<uint8_t> decompress_trace_encoding(const std::vector<uint8_t>& blob,
                                               uint64_t encoded_bytes);

}  // namespace weft
