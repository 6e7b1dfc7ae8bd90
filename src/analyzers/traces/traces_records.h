// What the traces analysis hands from the capture to the profile builder:
// one compressed address stream per thread and memory instruction.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/run_capture.h"

namespace weft {

// One compressed memory-access stream: the addresses instruction `pc`
// accessed in thread `thread`, in order, as a LoopTrace encoding
// (common/loop_trace.h) of `encoded_bytes` bytes.
struct TraceStreamHeader {
  uint32_t thread = 0;
  uint32_t access_size = 0;  // bytes of the widest access seen
  uint64_t pc = 0;
  uint32_t kinds = 0;         // kTraceRead | kTraceWrite, kTraceSegmentsLost
  uint32_t segment_runs = 0;  // TraceSegmentRun records after the encoding
  uint64_t accesses = 0;      // addresses the instruction accessed
  uint64_t lost = 0;          // of which not in the trace (memory budget exhausted): the trace
                              // holds the first accesses - lost addresses
  uint64_t encoded_bytes = 0;
};
inline constexpr uint32_t kTraceRead = 1;
inline constexpr uint32_t kTraceWrite = 2;
// The memory budget ran out before every segment start was kept: the
// stream's segment runs are incomplete (and not to be used).
inline constexpr uint32_t kTraceSegmentsLost = 4;

// Where the stream's accesses cross the thread's segments (docs/metrics.md,
// "Parallel section": segment k of a thread is its execution after its k-th
// logged section-closing record), as arithmetic runs: for j < count, the
// stream's first access in segment first_segment + j * segment_step is its
// access number first_access + j * access_step (from 0). The stream's
// accesses before the first run's first_access are in segment 0. A stream
// that never crossed a segment has no run.
struct TraceSegmentRun {
  uint64_t first_access = 0;
  uint64_t access_step = 0;
  uint32_t first_segment = 0;
  uint32_t segment_step = 0;
  uint32_t count = 0;
  uint32_t reserved = 0;
  bool operator==(const TraceSegmentRun&) const = default;
};
static_assert(sizeof(TraceSegmentRun) == 32);

// Per stream a TraceStreamHeader, then its encoded_bytes bytes, then its
// segment_runs TraceSegmentRun records.
inline constexpr ByteSection kTraceStreams{analysis_section_tag(AnalysisId::Traces, 1)};

struct TraceStream {
  TraceStreamHeader header;
  std::vector<uint8_t> encoding;  // LoopTrace encoding (common/loop_trace.h)
  std::vector<TraceSegmentRun> segments;
};

// Calls visit(header, encoding, segment_runs) for each stream of a
// kTraceStreams section, in order, without copying it: `encoding` is its
// LoopTrace encoding, `segment_runs` the bytes of its TraceSegmentRun
// records. A stream cut short by a truncated capture is left out.
template <class Visit>
void for_each_trace_stream(std::string_view bytes, Visit&& visit) {
  size_t pos = 0;
  while (pos + sizeof(TraceStreamHeader) <= bytes.size()) {
    TraceStreamHeader header;
    std::memcpy(&header, bytes.data() + pos, sizeof header);
    pos += sizeof header;
    if (header.encoded_bytes > bytes.size() - pos) break;
    const std::string_view encoding = bytes.substr(pos, header.encoded_bytes);
    pos += header.encoded_bytes;
    const uint64_t runs = header.segment_runs;
    if (runs > (bytes.size() - pos) / sizeof(TraceSegmentRun)) break;
    const std::string_view segment_runs = bytes.substr(pos, runs * sizeof(TraceSegmentRun));
    pos += runs * sizeof(TraceSegmentRun);
    visit(header, encoding, segment_runs);
  }
}

// The streams of a kTraceStreams section, copied.
inline std::vector<TraceStream> read_trace_streams(std::string_view bytes) {
  std::vector<TraceStream> streams;
  for_each_trace_stream(bytes, [&](const TraceStreamHeader& header, std::string_view encoding,
                                   std::string_view segment_runs) {
    TraceStream stream;
    stream.header = header;
    stream.encoding.assign(encoding.begin(), encoding.end());
    stream.segments.resize(header.segment_runs);
    if (!segment_runs.empty())
      std::memcpy(stream.segments.data(), segment_runs.data(), segment_runs.size());
    streams.push_back(std::move(stream));
  });
  return streams;
}

}  // namespace weft
