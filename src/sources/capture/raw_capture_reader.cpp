#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "sources/capture/raw_capture.h"

namespace weft {

namespace {

// One section's payload: `count` whole records of `size` bytes (for byte
// sections, size 1).
struct SectionData {
  const char* data = nullptr;
  uint64_t count = 0;
  uint32_t size = 0;
};

template <class Record>
void append_records(const SectionData& s, std::vector<Record>& out) {
  // Older or newer writers may use other record sizes: copy the common prefix.
  for (uint64_t i = 0; i < s.count; ++i) {
    Record r{};
    std::memcpy(&r, s.data + i * s.size, std::min<size_t>(s.size, sizeof(Record)));
    out.push_back(r);
  }
}

// "key=value\n" lines; a line without '=' (a cut-short section) is ignored.
void read_analysis_values(const SectionData& s, RunCapture& capture) {
  std::string_view text(s.data, s.count);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos)
      capture.analysis_values[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
}

using SectionReader = void (*)(const SectionData&, RunCapture&);

// Where each record section goes in the RunCapture.
template <auto Member>
void records_into(const SectionData& s, RunCapture& capture) {
  append_records(s, capture.*Member);
}

struct SectionRoute {
  RawSection tag;
  SectionReader read;
};

constexpr SectionRoute kSectionRoutes[] = {
    {RawSection::Reason,
     [](const SectionData& s, RunCapture& c) { c.incomplete_reason.assign(s.data, s.count); }},
    {RawSection::Threads, records_into<&RunCapture::threads>},
    {RawSection::Sync, records_into<&RunCapture::sync>},
    {RawSection::ProcessMaps,
     [](const SectionData& s, RunCapture& c) { c.process_maps.assign(s.data, s.count); }},
    {RawSection::AnalysisValues, read_analysis_values},
};

// An analysis' section (a tag from analysis_section_tag): kept as written,
// for the analysis' own record types to read.
void keep_analysis_section(uint32_t tag, const SectionData& s, RunCapture& capture) {
  RunCapture::Section& kept = capture.sections[tag];
  kept.record_size = s.size;
  kept.bytes.insert(kept.bytes.end(), s.data, s.data + s.count * s.size);
}

void apply_meta(const RawMeta& meta, RunCapture& capture) {
  capture.complete = meta.complete != 0;
  capture.granularity = meta.granularity;
  capture.max_threads = meta.max_threads;
  capture.dropped_events = meta.dropped_events;
  capture.dropped_sync_events = meta.dropped_sync_events;
  capture.unlogged_mutex_events = meta.unlogged_mutex_events;
  capture.communication_alone_segments = meta.communication_alone_segments;
  capture.analyses = AnalysisSet::from_bits(meta.analyses).with_requirements();
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
  size_t pos = sizeof kRawCaptureMagic;
  while (pos + 16 <= bytes.size()) {
    uint32_t tag = 0;
    SectionData section;
    std::memcpy(&tag, &bytes[pos], 4);
    std::memcpy(&section.size, &bytes[pos + 4], 4);
    std::memcpy(&section.count, &bytes[pos + 8], 8);
    pos += 16;
    // Records of no bytes are none, whatever the count says (a count of
    // 2^62 zero-size records made the byte sections read past the file).
    if (section.size == 0) section.count = 0;
    const uint64_t available = section.size ? (bytes.size() - pos) / section.size : 0;
    const bool truncated = section.count > available;
    if (truncated) section.count = available;
    section.data = bytes.data() + pos;
    if (tag == static_cast<uint32_t>(RawSection::Meta) && section.count >= 1) {
      RawMeta meta;
      std::memcpy(&meta, section.data, std::min<size_t>(section.size, sizeof meta));
      apply_meta(meta, capture);
      saw_meta = true;
    }
    if (tag == static_cast<uint32_t>(RawSection::End)) saw_end = true;
    for (const SectionRoute& route : kSectionRoutes)
      if (static_cast<uint32_t>(route.tag) == tag) route.read(section, capture);
    if (tag >= analysis_section_tag(AnalysisId{}, 0) && section.size != 0)
      keep_analysis_section(tag, section, capture);
    pos += section.count * section.size;
    if (truncated) break;
  }
  if (!saw_end || !saw_meta) {
    capture.complete = false;
    if (capture.incomplete_reason.empty())
      capture.incomplete_reason = "the runtime's capture was cut short while being saved";
  }
  return capture;
}

}  // namespace weft
