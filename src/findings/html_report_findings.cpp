#include "findings/html_report_findings.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "analyzers/imbalance/imbalance_tables.h"

namespace weft {
namespace {

constexpr off_t kMaxSourceBytes = off_t{64} << 20;

// The file's lines, or none when it is not a readable regular file of a
// source's size (a profile names its files; a device would never end).
std::vector<std::string> read_lines(const std::string& file) {
  std::vector<std::string> lines;
  struct stat status {};
  if (file.empty() || ::stat(file.c_str(), &status) != 0 || !S_ISREG(status.st_mode) ||
      status.st_size > kMaxSourceBytes)
    return lines;
  std::ifstream in(file);
  for (std::string text; std::getline(in, text);) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    lines.push_back(std::move(text));
  }
  return lines;
}

std::vector<SourceSnippet> make_snippets(
    const std::map<std::string, std::set<uint32_t>>& named_lines) {
  std::vector<SourceSnippet> snippets;
  for (const auto& [file, numbers] : named_lines) {
    const std::vector<std::string> text = read_lines(file);
    if (text.empty()) continue;
    SourceSnippet current;
    uint32_t current_last = 0;
    for (uint32_t number : numbers) {
      if (number == 0 || number > text.size()) continue;
      const uint32_t first = number > kSnippetContext ? number - kSnippetContext : 1;
      const uint32_t last =
          std::min<uint32_t>(static_cast<uint32_t>(text.size()), number + kSnippetContext);
      if (!current.lines.empty() && first > current_last + 1) {
        snippets.push_back(std::move(current));
        current = {};
      }
      current.file = file;
      for (uint32_t n = std::max(first, current_last + 1); n <= last; ++n)
        current.lines.push_back({n, text[n - 1], false});
      current_last = std::max(current_last, last);
      for (SnippetLine& line : current.lines)
        if (line.number == number) line.highlighted = true;
    }
    if (!current.lines.empty()) snippets.push_back(std::move(current));
  }
  return snippets;
}

std::vector<SectionInstanceBars> instance_bars(const Profile& profile,
                                               const std::vector<SectionImbalance>& sections) {
  std::vector<SectionInstanceBars> out;
  if (sections.empty()) return out;
  std::map<int64_t, std::vector<const SectionInstanceInfo*>> by_region;
  const std::vector<SectionInstanceInfo> all = section_instances(profile);
  for (const SectionInstanceInfo& instance : all)
    by_region[instance.region_id].push_back(&instance);
  for (const SectionImbalance& section : sections) {
    SectionInstanceBars bars;
    bars.region_id = section.region.id;
    std::vector<const SectionInstanceInfo*> instances = by_region[section.region.id];
    bars.instances = instances.size();
    std::stable_sort(instances.begin(), instances.end(),
                     [](const SectionInstanceInfo* a, const SectionInstanceInfo* b) {
                       return a->imbalance > b->imbalance;
                     });
    if (instances.size() > kHtmlInstances) instances.resize(kHtmlInstances);
    for (const SectionInstanceInfo* instance : instances) {
      InstanceBars shown;
      shown.instance = instance->instance;
      shown.imbalance = instance->imbalance;
      for (const InstanceThreadBusy& t : instance->threads) {
        shown.threads.push_back({t.thread, t.modeled_cycles, t.start_ns, t.end_ns, t.wall_ns});
        shown.max_busy = std::max(shown.max_busy, t.modeled_cycles);
      }
      bars.shown.push_back(std::move(shown));
    }
    out.push_back(std::move(bars));
  }
  return out;
}

HeatmapPanel make_panel(const RegionLocality& region, size_t max_cells) {
  HeatmapPanel panel;
  const LocalityMetrics& m = region.metrics;
  panel.volume = region.volume;
  panel.homogeneity = m.homogeneity;
  panel.balance = m.balance;
  panel.borrowed_known = m.borrowed_known;
  const Heatmap raw = make_heatmap(m.raw, max_cells);
  panel.bucket = raw.bucket;
  if (panel.bucket == 1) {
    panel.raw = m.raw;
    panel.rar = m.rar;
    panel.crr = m.crr;
    return panel;
  }
  panel.raw = raw.cells;
  panel.rar = make_heatmap(m.rar, max_cells).cells;
  const CommunicationMatrix denominator =
      make_heatmap(m.borrowed.size() == m.raw.size() ? crr_denominator(m.raw, m.borrowed) : m.raw,
                   max_cells)
          .cells;
  panel.crr.assign(panel.raw.size(), std::vector<double>(panel.raw.size(), 0));
  for (size_t w = 0; w < panel.raw.size(); ++w)
    for (size_t r = 0; r < panel.raw.size(); ++r)
      panel.crr[w][r] = crr_ratio(panel.rar[w][r], denominator[w][r]);
  return panel;
}

}  // namespace

void make_heatmap_panels(HtmlReportFindings& findings, size_t max_cells) {
  const ReportFindings& r = findings.report;
  findings.panels.clear();
  findings.panels.push_back(make_panel(r.program, max_cells));
  for (const RegionLocality& region : r.locality)
    findings.panels.push_back(make_panel(region, max_cells));
  for (const RegionLocality& region : r.section_locality)
    findings.panels.push_back(make_panel(region, max_cells));
}

HtmlReportFindings find_html_report(const Profile& profile, const ReportOptions& options) {
  HtmlReportFindings data;
  data.report = find_report(profile, options);
  const ReportFindings& report = data.report;
  make_heatmap_panels(data);
  data.pair_volume = pair_volumes(report.program.metrics.raw, report.program.metrics.rar);
  data.has_false_sharing = profile.has_analysis(AnalysisId::FalseSharing);
  if (data.has_false_sharing) data.sharing = find_false_sharing(profile);
  if (report.has_imbalance) data.instances = instance_bars(profile, report.imbalance);

  // Every source line a finding names.
  std::map<std::string, std::set<uint32_t>> named;
  auto name = [&](const std::string& file, uint32_t line) {
    if (!file.empty() && line > 0) named[file].insert(line);
  };
  for (const SectionImbalance& section : report.imbalance)
    for (const ImbalanceCauseLine& cause : section.causes)
      name(cause.position.file, cause.position.line);
  for (const MemoryHint& hint : report.memory.hints) name(hint.position.file, hint.position.line);
  for (const LoopSchedule& schedule : report.memory.schedules)
    name(schedule.position.file, schedule.position.line);
  for (const SharingItem& item : data.sharing.items)
    for (const SharingSourceLine& line : item.source_lines)
      name(line.position.file, line.position.line);
  for (const Suggestion& suggestion : report.suggestions)
    if (suggestion.first_line > 0) name(suggestion.file, suggestion.first_line);
  for (const HotLoop& loop : report.hot_loops.loops) name(loop.region.file, loop.region.first_line);
  data.snippets = make_snippets(named);
  return data;
}

const SourceSnippet* find_snippet(const std::vector<SourceSnippet>& snippets,
                                  const std::string& file, uint32_t line) {
  for (const SourceSnippet& snippet : snippets)
    if (snippet.file == file && !snippet.lines.empty() && snippet.lines.front().number <= line &&
        line <= snippet.lines.back().number)
      return &snippet;
  return nullptr;
}

}  // namespace weft
