// The raw capture: how a CaptureSession hands what it gathered to the profile
// builder. Both event sources write it through CaptureSession::write (the
// compile-time runtime inside the program, at exit, on a fatal signal or on
// SIGINT/SIGTERM, with plain write(2) calls and no allocation; the Valgrind
// backend inside `weft record`), and `weft record` decodes it into a
// RunCapture. Internal to weft; not a user format.
//
// Layout: 8-byte magic, then sections. Each section: u32 tag, u32 record
// size, u64 record count, then count * size bytes. A file cut short keeps
// every whole record before the cut. A reader copies the common prefix of
// records whose size differs from its own.
#pragma once

#include <cstdint>
#include <string>

#include "common/run_capture.h"

namespace weft {

inline constexpr char kRawCaptureMagic[8] = {'W', 'E', 'F', 'T', 'R', 'A', 'W', '2'};

// The incomplete reason of a capture the runtime's keeper wrote after the
// program's image ended without an exit handler (sources/compile/keeper.h);
// `weft record` replaces it with what the exit status says.
inline constexpr const char* kKeeperReason =
    "the program ended without running weft's exit handler; data kept up to its last event";

// The capture's own sections. The analyses' sections have tags from
// analysis_section_tag (common/run_capture.h), declared in their records
// headers (src/analyzers/NAME/NAME_records.h); the reader keeps them in
// RunCapture::sections, by tag.
enum class RawSection : uint32_t {
  Meta = 1,         // one RawMeta
  Reason = 2,       // bytes: incomplete reason
  Threads = 3,      // ThreadRecord[]
  Sync = 5,         // SyncRecord[]
  ProcessMaps = 6,  // bytes: /proc/self/maps
  End = 7,          // no records: the file is whole
  // bytes: "key=value\n" lines, the analyses' settings and counters by their
  // meta keys (common/analyses.h)
  AnalysisValues = 18,
};

struct RawMeta {
  uint32_t complete = 0;
  uint32_t granularity = 0;
  uint32_t max_threads = 0;
  uint32_t thread_count = 0;  // ids handed out, may exceed max_threads
  uint64_t dropped_events = 0;
  uint64_t dropped_sync_events = 0;
  uint32_t analyses = 0;  // AnalysisSet bits
  uint32_t reserved = 0;
  uint64_t unlogged_mutex_events = 0;         // beyond SyncLog::kMaxMutexRecords per thread
  uint64_t communication_alone_segments = 0;  // ThreadContext::communication_alone, summed
};

// Decodes a raw capture; throws std::runtime_error with a one-line cause if
// the file is missing or not a raw capture. A truncated file decodes to the
// records it holds, with complete = false.
RunCapture read_raw_capture(const std::string& path);

}  // namespace weft
