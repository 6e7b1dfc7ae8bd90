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
  uint32_t kinds = 0;  // kTraceRead | kTraceWrite
  uint32_t reserved = 0;
  uint64_t accesses = 0;  // addresses the instruction accessed
  uint64_t lost = 0;      // of which not in the trace (memory budget exhausted): the trace
                          // holds the first accesses - lost addresses
  uint64_t encoded_bytes = 0;
};
inline constexpr uint32_t kTraceRead = 1;
inline constexpr uint32_t kTraceWrite = 2;

// Per stream a TraceStreamHeader, then its encoded_bytes bytes.
inline constexpr ByteSection kTraceStreams{analysis_section_tag(AnalysisId::Traces, 1)};

struct TraceStream {
  TraceStreamHeader header;
  std::vector<uint8_t> encoding;  // LoopTrace encoding (common/loop_trace.h)
};

// The streams of a kTraceStreams section; a stream cut short by a truncated
// capture is left out.
inline std::vector<TraceStream> read_trace_streams(std::string_view bytes) {
  std::vector<TraceStream> streams;
  size_t pos = 0;
  while (pos + sizeof(TraceStreamHeader) <= bytes.size()) {
    TraceStream stream;
    std::memcpy(&stream.header, bytes.data() + pos, sizeof stream.header);
    pos += sizeof stream.header;
    if (stream.header.encoded_bytes > bytes.size() - pos) break;
    stream.encoding.assign(bytes.data() + pos, bytes.data() + pos + stream.header.encoded_bytes);
    pos += stream.header.encoded_bytes;
    streams.push_back(std::move(stream));
  }
  return streams;
}

}  // namespace weft
