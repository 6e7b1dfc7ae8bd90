#include "findings/report_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "findings/crd_findings.h"
#include "findings/false_sharing_findings.h"
#include "findings/source_lines.h"
#include "profile/region_naming.h"

namespace weft {
namespace {

std::vector<std::string> parse_args(const std::string& json_text) {
  auto json = nlohmann::json::parse(json_text, nullptr, false);
  std::vector<std::string> args;
  if (!json.is_array()) return args;
  for (const auto& arg : json) {
    if (arg.is_string()) args.push_back(arg.get<std::string>());
  }
  return args;
}

std::optional<int64_t> meta_integer(const Profile& profile, const std::string& key) {
  std::string text = profile.meta_value(key);
  try {
    size_t used = 0;
    int64_t value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

double meta_double(const Profile& profile, const std::string& key) {
  try {
    return std::stod(profile.meta_value(key));
  } catch (const std::exception&) {
    return 0;
  }
}

RunFacts run_facts(const Profile& profile) {
  RunFacts run;
  run.command = profile.meta_value("command");
  run.args = parse_args(profile.meta_value("args"));
  run.cwd = profile.meta_value("cwd");
  run.source = profile.meta_value("source");
  run.start_time = profile.meta_value("start_time");
  run.hostname = profile.meta_value("hostname");
  run.topology = profile.meta_value("topology");
  run.weft_version = profile.meta_value("weft_version");
  run.duration_s = meta_double(profile, "duration_s");
  run.exit_status_text = profile.meta_value("exit_status");
  run.exit_status = meta_integer(profile, "exit_status");
  run.exit_signal = profile.meta_value("exit_signal");
  run.granularity = meta_integer(profile, "granularity");
  run.dropped_events = meta_integer(profile, "dropped_events");
  run.dropped_sync_events = meta_integer(profile, "dropped_sync_events");
  return run;
}

// The source line that reads most of the region's communication, and its text.
void name_reading_line(const Profile& profile, const RegionInfo& region, SourceLines& sources,
                       Suggestion& suggestion) {
  const std::vector<LineVolume> lines = profile.reading_lines(region.id);
  if (lines.empty()) return;
  suggestion.reads_at = fmt::format("{}:{}", path_basename(lines[0].file), lines[0].line);
  const std::string code = sources.line(lines[0].file, lines[0].line);
  if (!code.empty()) suggestion.reads_code = "`" + code + "`";
}

// The source lines the memory findings report as false sharing or a
// possible data race.
std::set<std::pair<std::string, uint32_t>> contended_lines(const MemoryHints& memory) {
  std::set<std::pair<std::string, uint32_t>> lines;
  for (const MemoryHint& hint : memory.hints)
    if (hint.kind == "race" || hint.kind == "false-sharing")
      lines.emplace(hint.position.file, hint.position.line);
  return lines;
}

// The share of the region's communication read at those lines.
double contended_share(const Profile& profile, const RegionInfo& region,
                       const std::set<std::pair<std::string, uint32_t>>& contended) {
  uint64_t all = 0, at_contended = 0;
  for (const LineVolume& line : profile.reading_lines(region.id)) {
    all += line.events;
    if (contended.contains({line.file, line.line})) at_contended += line.events;
  }
  return all == 0 ? 0.0 : static_cast<double>(at_contended) / static_cast<double>(all);
}

// The data object most of the region's communication reads: each reading
// instruction's events in a thread are shared among the objects of its
// sampled addresses there, in proportion; the known object with the most.
void name_read_object(const Profile& profile, const RegionVolume& volume, SourceLines& sources,
                      Suggestion& suggestion) {
  struct Weight {
    DataObject object;
    double events = 0;
  };
  std::map<std::pair<std::string, uint64_t>, Weight> weights;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> samples;  // per (pc, thread)
  const std::vector<PcObjectVolume> rows = region_pc_objects(profile, volume.region.id);
  for (const PcObjectVolume& v : rows) samples[{v.row.pc, v.row.thread}] += v.row.samples;
  for (const PcObjectVolume& v : rows) {
    if (v.row.object.kind == "unknown") continue;
    Weight& w = weights[{v.row.object.kind, v.row.object.object_address}];
    w.object = v.row.object;
    w.events += static_cast<double>(v.events) * static_cast<double>(v.row.samples) /
                static_cast<double>(samples[{v.row.pc, v.row.thread}]);
  }
  const Weight* top = nullptr;
  for (const auto& [key, w] : weights)
    if (!top || w.events > top->events) top = &w;
  const uint64_t events = volume.raw + volume.rar;
  if (!top || events == 0) return;
  ReadObject o;
  o.kind = top->object.kind;
  o.name = top->object.name;
  o.bytes = top->object.object_size;
  std::optional<SourcePosition> at;
  if (o.kind == "heap" && top->object.allocation_pc != 0) {
    at = profile.source_position(top->object.allocation_pc);
    if (at && !at->file.empty()) {
      o.allocated_at = fmt::format("{}:{}", path_basename(at->file), at->line);
      const std::string code = sources.line(at->file, at->line);
      if (!code.empty()) o.allocated_code = "`" + code + "`";
    }
  }
  o.description = data_object_description(top->object, at, 1, top->object.object_address);
  o.share = std::min(1.0, top->events / static_cast<double>(events));
  suggestion.reads_object = std::move(o);
}

}  // namespace

Heatmap make_heatmap(const CommunicationMatrix& matrix, size_t max_columns) {
  Heatmap heatmap;
  const size_t threads = matrix.size();
  max_columns = std::max<size_t>(max_columns, 1);
  heatmap.bucket = threads <= max_columns ? 1 : (threads + max_columns - 1) / max_columns;
  const size_t cells = (threads + heatmap.bucket - 1) / heatmap.bucket;
  heatmap.cells.assign(cells, std::vector<uint64_t>(cells, 0));
  for (size_t writer = 0; writer < threads; ++writer) {
    for (size_t reader = 0; reader < threads; ++reader) {
      heatmap.cells[writer / heatmap.bucket][reader / heatmap.bucket] += matrix[writer][reader];
    }
  }
  for (const auto& row : heatmap.cells) {
    for (uint64_t value : row) heatmap.max = std::max(heatmap.max, value);
  }

  const size_t top_level = std::char_traits<char>::length(kHeatmapRamp) - 1;
  for (const auto& row : heatmap.cells) {
    std::string line;
    for (uint64_t value : row) {
      size_t level = 0;
      if (value > 0) {
        double scaled = std::ceil(static_cast<double>(value) * static_cast<double>(top_level) /
                                  static_cast<double>(heatmap.max));
        level = std::clamp<size_t>(static_cast<size_t>(scaled), 1, top_level);
      }
      line += kHeatmapRamp[level];
    }
    heatmap.rows.push_back(std::move(line));
  }
  return heatmap;
}

ReportFindings find_report(const Profile& profile, const ReportOptions& options) {
  const size_t top = options.top;
  ReportFindings data;
  data.has_imbalance = profile.has_analysis(AnalysisId::Imbalance);
  if (data.has_imbalance) {
    // By lost time, descending (analyze_imbalance's order).
    for (SectionImbalance& section : analyze_imbalance(profile, ImbalanceOptions{})) {
      data.imbalance_total_lost += section.lost;
      if (data.imbalance.size() == kReportSections || !(section.lost > 0) ||
          section.imbalance < kNegligibleImbalance)
        continue;
      std::erase_if(section.causes,
                    [](const ImbalanceCauseLine& c) { return c.score < kNegligibleCauseScore; });
      if (section.causes.size() > kReportCauses) section.causes.resize(kReportCauses);
      data.imbalance.push_back(std::move(section));
    }
  }

  data.memory = analyze_memory_hints(profile);
  data.hot_loops =
      find_hot_loops(profile, kReportLoops, options.cpu, options.binary, options.calibration);
  attach_memory_hints(data.hot_loops, data.memory);

  // Code regions and sections partition the same events twice: one ranking
  // each, never one list of both.
  std::vector<RegionVolume> sections;
  for (RegionVolume& volume : profile.region_volumes()) {
    if (volume.raw + volume.rar == 0) continue;
    (volume.region.kind == kRegionSection ? sections : data.top_regions)
        .push_back(std::move(volume));
  }
  auto by_volume = [](const RegionVolume& a, const RegionVolume& b) {
    return a.raw + a.rar > b.raw + b.rar;
  };
  std::stable_sort(data.top_regions.begin(), data.top_regions.end(), by_volume);
  std::stable_sort(sections.begin(), sections.end(), by_volume);
  if (data.top_regions.size() > top) data.top_regions.resize(top);
  if (sections.size() > kReportSections) sections.resize(kReportSections);

  data.crd = profile.has_analysis(AnalysisId::Crd);
  if (data.crd) {
    data.cache = resolve_cache(profile, options.cache);
    attach_crd(data.hot_loops, profile, data.cache);
  }
  data.program.metrics = compute_locality(profile, {}, data.cache);
  data.program.volume.region.name = "whole program";
  data.program.volume.region.kind = kProgramRegionKind;
  data.program.volume.raw = data.program.metrics.raw_total;
  data.program.volume.rar = data.program.metrics.rar_total;
  const uint64_t program_events = data.program.metrics.raw_total + data.program.metrics.rar_total;
  const std::vector<RegionInfo> regions = profile.regions();
  SourceLines sources;
  std::vector<Suggestion> suggestions;
  const std::set<std::pair<std::string, uint32_t>> contended = contended_lines(data.memory);
  for (const RegionVolume& volume : data.top_regions) {
    LocalityMetrics metrics = compute_locality(profile, {volume.region.id}, data.cache);
    const uint64_t events = volume.raw + volume.rar;
    if (events >= options.suggestion_min_events &&
        static_cast<double>(events) >= kSuggestionMinShare * static_cast<double>(program_events)) {
      for (Suggestion& suggestion : suggest(volume.region, metrics, regions)) {
        if (suggestion.kind == SuggestionKind::ThreadAffinity &&
            contended_share(profile, volume.region, contended) >= kThreadAffinityMaxContendedShare)
          continue;
        if (suggestion.kind == SuggestionKind::DataAffinity) {
          name_reading_line(profile, volume.region, sources, suggestion);
          name_read_object(profile, volume, sources, suggestion);
        }
        suggestions.push_back(std::move(suggestion));
      }
    }
    data.locality.push_back({volume, std::move(metrics)});
  }
  data.suggestions = merge_same_findings(std::move(suggestions));
  for (const RegionVolume& volume : sections)
    data.section_locality.push_back(
        {volume, compute_locality(profile, {volume.region.id}, data.cache)});

  CommunicationMatrix raw = profile.matrix({}, MatrixKind::Raw);
  CommunicationMatrix rar = profile.matrix({}, MatrixKind::Rar);
  for (uint32_t writer = 0; writer < raw.size(); ++writer) {
    for (uint32_t reader = 0; reader < raw.size(); ++reader) {
      ThreadPair pair{writer, reader, raw[writer][reader], rar[writer][reader]};
      if (pair.raw + pair.rar > 0) data.top_pairs.push_back(pair);
    }
  }
  std::stable_sort(
      data.top_pairs.begin(), data.top_pairs.end(),
      [](const ThreadPair& a, const ThreadPair& b) { return a.raw + a.rar > b.raw + b.rar; });
  if (data.top_pairs.size() > top) data.top_pairs.resize(top);

  data.heatmap = make_heatmap(raw);
  data.profile = profile_facts(profile);
  data.run = run_facts(profile);
  return data;
}

}  // namespace weft
