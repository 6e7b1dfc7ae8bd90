// The traces analysis' tables (docs/profile-format.md): one zstd-compressed
// LoopTrace encoding per thread and memory instruction; and their reader.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "profile/profile.h"

namespace weft {

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
};

// The traces of `thread` / `pc` (nullopt: all), by thread then pc.
std::vector<MemoryTraceInfo> memory_traces(const Profile& profile,
                                           std::optional<uint32_t> thread = std::nullopt,
                                           std::optional<uint64_t> pc = std::nullopt);

// zstd, as stored in memory_traces.encoding. decompress throws ProfileError
// on a corrupt blob.
std::vector<uint8_t> compress_trace_encoding(const std::vector<uint8_t>& encoding);
std::vector<uint8_t> decompress_trace_encoding(const std::vector<uint8_t>& blob,
                                               uint64_t encoded_bytes);

}  // namespace weft
