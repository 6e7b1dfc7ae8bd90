#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "sources/compile/raw_capture_format.h"

namespace weft {

namespace {

template <class Record>
void append_records(const char* data, uint64_t count, uint32_t size, std::vector<Record>& out) {
  // Older or newer writers may use other record sizes: copy the common prefix.
  for (uint64_t i = 0; i < count; ++i) {
    Record r{};
    std::memcpy(&r, data + i * size, std::min<size_t>(size, sizeof(Record)));
    out.push_back(r);
  }
}

// Streams are variable-length: a header, then its encoding. A stream cut
// short by a truncated file is left out.
void read_trace_streams(const char* data, uint64_t size,
                        std::vector<RunCapture::TraceStream>& out) {
  uint64_t pos = 0;
  while (pos + sizeof(TraceStreamHeader) <= size) {
    RunCapture::TraceStream stream;
    std::memcpy(&stream.header, data + pos, sizeof stream.header);
    pos += sizeof stream.header;
    if (stream.header.encoded_bytes > size - pos) break;
    stream.encoding.assign(data + pos, data + pos + stream.header.encoded_bytes);
    pos += stream.header.encoded_bytes;
    out.push_back(std::move(stream));
  }
}

}  // namespace

RunCapture read_raw_capture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open raw capture " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kRawCaptureMagic ||
      std::memcmp(bytes.data(), kRawCaptureMagic, sizeof kRawCaptureMagic) != 0)
    throw std::runtime_error(path + " is not a weft raw capture");

  RunCapture capture;
  capture.source = "compile";
  bool saw_end = false;
  bool saw_meta = false;
  RawMeta meta;
  size_t pos = sizeof kRawCaptureMagic;
  while (pos + 16 <= bytes.size()) {
    uint32_t tag = 0, size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, &bytes[pos], 4);
    std::memcpy(&size, &bytes[pos + 4], 4);
    std::memcpy(&count, &bytes[pos + 8], 8);
    pos += 16;
    const uint64_t available = size ? (bytes.size() - pos) / size : 0;
    const bool truncated = size && count > available;
    if (truncated) count = available;
    const char* data = &bytes[pos];
    switch (static_cast<RawSection>(tag)) {
      case RawSection::Meta:
        if (count >= 1) {
          std::memcpy(&meta, data, std::min<size_t>(size, sizeof meta));
          saw_meta = true;
        }
        break;
      case RawSection::Reason:
        capture.incomplete_reason.assign(data, count);
        break;
      case RawSection::Threads:
        append_records(data, count, size, capture.threads);
        break;
      case RawSection::Communication:
        append_records(data, count, size, capture.communication);
        break;
      case RawSection::Sync:
        append_records(data, count, size, capture.sync);
        break;
      case RawSection::ProcessMaps:
        capture.process_maps.assign(data, count);
        break;
      case RawSection::Distances:
        append_records(data, count, size, capture.distances);
        break;
      case RawSection::Footprints:
        append_records(data, count, size, capture.footprints);
        break;
      case RawSection::SectionCommunication:
        append_records(data, count, size, capture.section_communication);
        break;
      case RawSection::SectionDistances:
        append_records(data, count, size, capture.section_distances);
        break;
      case RawSection::SegmentEdges:
        append_records(data, count, size, capture.segment_edges);
        break;
      case RawSection::SegmentInstructions:
        append_records(data, count, size, capture.segment_instructions);
        break;
      case RawSection::LineSharing:
        append_records(data, count, size, capture.line_sharing);
        break;
      case RawSection::SharingTotals:
        append_records(data, count, size, capture.sharing_totals);
        break;
      case RawSection::Allocations:
        append_records(data, count, size, capture.allocations);
        break;
      case RawSection::Traces:
        read_trace_streams(data, count, capture.traces);
        break;
      case RawSection::End:
        saw_end = true;
        break;
    }
    pos += count * size;
    if (truncated) break;
  }
  if (saw_meta) {
    capture.complete = meta.complete != 0;
    capture.granularity = meta.granularity;
    capture.max_threads = meta.max_threads;
    capture.dropped_events = meta.dropped_events;
    capture.dropped_sync_events = meta.dropped_sync_events;
    capture.unlogged_mutex_events = meta.unlogged_mutex_events;
    if (meta.analyses & kRawAnalysisCrd) capture.analyses.push_back(kAnalysisCrd);
    if (meta.analyses & kRawAnalysisImbalance) {
      capture.analyses.push_back(kAnalysisImbalance);
      capture.caches = meta.caches;
    }
    if (meta.analyses & kRawAnalysisFalseSharing) {
      capture.analyses.push_back(kAnalysisFalseSharing);
      capture.line_size = meta.line_size;
      capture.untracked_accesses = meta.untracked_accesses;
    }
    if (meta.analyses & kRawAnalysisTraces) capture.analyses.push_back(kAnalysisTraces);
    capture.crd_max_granules = meta.crd_max_granules;
    capture.crd_capped_pairs = meta.crd_capped_pairs;
  }
  if (!saw_end || !saw_meta) {
    capture.complete = false;
    if (capture.incomplete_reason.empty())
      capture.incomplete_reason = "the runtime's capture was cut short while being saved";
  }
  return capture;
}

}  // namespace weft
