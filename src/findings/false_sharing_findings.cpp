#include "findings/false_sharing_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "findings/finding_error.h"
#include "findings/source_lines.h"

namespace weft {
namespace {

// Bit b of a mask is byte b of a 64-byte line; longer lines map
// line_size / 64 bytes per bit (the analysis' scaling, docs/metrics.md).
std::vector<std::pair<uint32_t, uint32_t>> mask_ranges(uint64_t mask, uint32_t line_size) {
  const uint32_t bytes_per_bit = line_size > 64 ? line_size / 64 : 1;
  const uint32_t bits = line_size >= 64 ? 64 : line_size;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  for (uint32_t b = 0; b < bits;) {
    if (!(mask >> b & 1)) {
      ++b;
      continue;
    }
    uint32_t e = b;
    while (e + 1 < bits && (mask >> (e + 1) & 1)) ++e;
    ranges.emplace_back(b * bytes_per_bit, (e + 1) * bytes_per_bit - 1);
    b = e + 1;
  }
  return ranges;
}

std::string fix_for(const FalseSharingLine& line, uint32_t line_size) {
  const std::string what = line.object.kind == "global" ? "'" + line.object.name + "'"
                           : line.object.kind == "heap" ? "the heap block"
                                                        : "the data";
  std::string fix = fmt::format(
      "give each thread's part of {} its own {}-byte line: pad each element to {} bytes and "
      "align it (alignas({}) / __attribute__((aligned({})))",
      what, line_size, line_size, line_size, line_size);
  if (line.object.kind == "heap")
    fix += fmt::format(", allocate with aligned_alloc({}, …)", line_size);
  fix +=
      "), or let each thread update a private copy (a local accumulator, or an OpenMP reduction) "
      "and combine the copies once at the end";
  return fix;
}

}  // namespace

std::string format_offsets(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string text;
  for (const auto& [first, last] : ranges)
    text += (text.empty() ? "" : ",") + fmt::format("{}-{}", first, last);
  return text;
}

std::vector<FalseSharingLine> analyze_false_sharing(const Profile& profile) {
  if (!profile.has_analysis(AnalysisId::FalseSharing))
    throw FindingError(profile.path() +
                       " has no false-sharing data: record it with the falseshare analysis "
                       "(weft record --analyses comm,falseshare ...)");
  const uint32_t line_size = false_sharing_line_size(profile);
  std::map<uint64_t, DataObject> objects;
  for (DataObject& o : data_objects(profile)) objects[o.line_address] = std::move(o);

  struct Gathered {
    FalseSharingLine line;
    std::map<uint32_t, uint64_t> bytes;                       // thread -> mask
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> pairs;  // (writer, reader) -> events
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> sites;  // (thread, pc) -> events
  };
  std::map<uint64_t, Gathered> lines;
  for (const LineSharingRecord& e : line_sharing(profile)) {
    Gathered& g = lines[e.line_address];
    g.line.line_address = e.line_address;
    g.line.events += e.false_events;
    g.bytes[e.thread] |= e.thread_bytes;
    g.bytes[e.writer] |= e.writer_bytes;
    g.pairs[{e.writer, e.thread}] += e.false_events;
    g.sites[{e.thread, e.pc}] += e.false_events;
  }

  SourceLines sources;
  std::vector<FalseSharingLine> out;
  for (auto& [address, g] : lines) {
    FalseSharingLine line = std::move(g.line);
    auto object = objects.find(address);
    if (object != objects.end()) {
      line.object = object->second;
    } else {
      line.object.line_address = address;
      line.object.kind = "unknown";
    }
    if (line.object.kind == "heap" && line.object.allocation_pc != 0)
      line.allocated_at = profile.source_position(line.object.allocation_pc);
    for (const auto& [thread, mask] : g.bytes)
      line.threads.push_back({thread, mask_ranges(mask, line_size)});
    for (const auto& [pair, events] : g.pairs)
      line.pairs.push_back({pair.first, pair.second, events});
    std::stable_sort(
        line.pairs.begin(), line.pairs.end(),
        [](const FalseSharingPair& a, const FalseSharingPair& b) { return a.events > b.events; });
    for (const auto& [key, events] : g.sites) {
      FalseSharingSite site;
      site.thread = key.first;
      site.pc = key.second;
      site.events = events;
      site.position = profile.source_position(site.pc).value_or(SourcePosition{"??", "", 0});
      site.code = sources.line(site.position.file, site.position.line);
      line.sites.push_back(std::move(site));
    }
    std::stable_sort(
        line.sites.begin(), line.sites.end(),
        [](const FalseSharingSite& a, const FalseSharingSite& b) { return a.events > b.events; });
    line.fix = fix_for(line, line_size);
    out.push_back(std::move(line));
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const FalseSharingLine& a, const FalseSharingLine& b) { return a.events > b.events; });
  return out;
}

std::string data_object_description(const FalseSharingLine& line) {
  const DataObject& o = line.object;
  if (o.kind == "global")
    return fmt::format("{} (global, {} bytes, line at offset {})", o.name, o.object_size,
                       static_cast<int64_t>(line.line_address - o.object_address));
  if (o.kind == "heap") {
    std::string where = "an unknown site";
    if (line.allocated_at) where = code_location(*line.allocated_at, o.allocation_pc);
    return fmt::format("heap block of {} bytes allocated at {} (line at offset {})", o.object_size,
                       where, static_cast<int64_t>(line.line_address - o.object_address));
  }
  return fmt::format("data at 0x{:x} (no symbol, no recorded allocation)", line.line_address);
}

FalseSharingFindings find_false_sharing(const Profile& profile) {
  FalseSharingFindings findings;
  findings.lines = analyze_false_sharing(profile);
  findings.profile = profile_facts(profile);
  findings.untracked_accesses = profile.meta_value("untracked_accesses");
  return findings;
}

}  // namespace weft
