#include "views/report_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "findings/source_lines.h"
#include "views/imbalance_view.h"
#include "views/loops_view.h"
#include "views/text_table.h"

namespace weft {
namespace {

// Quotes for display only, so that arguments with spaces stay readable.
std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string exit_description(const RunFacts& run) {
  if (!run.exit_signal.empty()) return "killed by " + run.exit_signal;
  if (!run.exit_status_text.empty()) return "status " + run.exit_status_text;
  return "unknown";
}

std::string render_locality(const ReportFindings& data) {
  if (data.locality.empty()) return "";
  std::string text =
      data.crd ? fmt::format(
                     "\nLocality of the top regions (median CRD of the line visits, in granules; "
                     "cache {} ({}); beyond min = events with probable or certain capacity "
                     "misses)\n",
                     human_bytes(data.cache.bytes), data.cache.origin)
               : std::string(
                     "\nLocality of the top regions (CRD not recorded: record with "
                     "--analyses comm,crd)\n");
  using A = TextTable::Align;
  auto add_row = [&](TextTable& table, const std::string& rank, const RegionLocality& entry) {
    const LocalityMetrics& m = entry.metrics;
    const bool measured = data.crd && m.crd.events > 0;
    table.add_row({rank, entry.volume.region.name,
                   std::to_string(entry.volume.raw + entry.volume.rar),
                   data.crd ? std::to_string(m.crd.events) : "-",
                   measured && m.median() ? std::to_string(*m.median()) : "-",
                   measured ? fmt::format("{:.1f}%", m.crd.fraction_beyond_min() * 100) : "-",
                   fmt::format("{:.3g}", m.homogeneity), fmt::format("{:.1f}%", m.balance)});
  };
  const std::vector<std::string> header = {"#",          "region",     "raw+rar", "crd events",
                                           "median crd", "beyond min", "H",       "B"};
  const std::vector<A> align = {A::Right, A::Left,  A::Right, A::Right,
                                A::Right, A::Right, A::Right, A::Right};
  TextTable table(align);
  table.add_row(header);
  add_row(table, "-", data.program);
  for (size_t i = 0; i < data.locality.size(); ++i)
    add_row(table, std::to_string(i + 1), data.locality[i]);
  text += table.render("  ");
  if (!data.section_locality.empty()) {
    text +=
        "\nParallel sections that communicate most (the same events, cut at the synchronisation "
        "that closes them)\n";
    TextTable sections(align);
    sections.add_row(header);
    for (size_t i = 0; i < data.section_locality.size(); ++i)
      add_row(sections, std::to_string(i + 1), data.section_locality[i]);
    text += sections.render("  ");
  }
  return text;
}

std::string render_suggestions(const ReportFindings& data) {
  std::string text = "\nSuggestions (top regions; thresholds in docs/metrics.md)\n";
  if (data.suggestions.empty()) return text + "  none: no top region crosses a threshold\n";
  for (const Suggestion& suggestion : data.suggestions) {
    std::string paragraph = format_suggestion(suggestion);
    // Indent every line by two spaces.
    size_t start = 0;
    while (start < paragraph.size()) {
      size_t end = paragraph.find('\n', start);
      if (end == std::string::npos) end = paragraph.size();
      text += "  " + paragraph.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  return text;
}

std::string render_imbalance_summary(const ReportFindings& data) {
  if (!data.has_imbalance) return "";
  std::string text =
      "\nLoad imbalance: the sections that lost the most time (idle thread-time at their "
      "closing points, modeled cycles, summed over instances; details: weft imbalance)\n";
  if (data.profile.no_barrier_recognised()) text += no_barrier_note(data.profile.threads, "  ");
  if (data.imbalance.empty())
    return text + "  none: no section's threads waited for each other (imbalance under 0.05%)\n";
  for (const SectionImbalance& section : data.imbalance) {
    text += fmt::format(
        "  {}  {} instance{}  lost {:.3g} ({:.0f}% of all lost; idle {} of its thread-time)  "
        "imbalance {:.1f}%\n",
        section_location(section.region), section.instances, section.instances == 1 ? "" : "s",
        section.lost, 100 * section.lost / data.imbalance_total_lost,
        share_text(section.idle_share), 100 * section.imbalance);
    if (!section.ranks_causes()) {
      text += imbalance_unranked_note(section, "    ");
      continue;
    }
    for (size_t i = 0; i < section.causes.size(); ++i) {
      const ImbalanceCauseLine& c = section.causes[i];
      text += fmt::format("    {} {:<13} {:>7.3f}  {}  {}\n", i + 1,
                          c.level.empty() ? c.kind : c.kind + " " + c.level, c.score,
                          cause_location(c), c.code);
    }
  }
  return text;
}

// "all 12 executions", "1 execution", "7 of 10 executions (others: static,4 in 2, unknown
// in 1)".
std::string executions_text(const RecoveredSchedule& s) {
  if (s.executions == 1) return "1 execution";
  if (s.agreeing == s.executions) return fmt::format("all {} executions", s.executions);
  std::string others;
  for (const ScheduleTally& o : s.others)
    others += fmt::format("{}{} in {}", others.empty() ? "" : ", ", o.schedule, o.executions);
  return fmt::format("{} of {} executions (others: {})", s.agreeing, s.executions, others);
}

std::string render_memory_summary(const ReportFindings& data) {
  const MemoryHints& memory = data.memory;
  std::string text;
  if (!memory.schedules.empty()) {
    text += "\nOpenMP loop schedules executed\n";
    for (const LoopSchedule& s : memory.schedules) {
      text +=
          fmt::format("  {}  {} in {}  (from the {}; {})\n", code_location(s.position, s.pc),
                      s.name, executions_text(s.schedule),
                      s.source == "runtime" ? "runtime's chunks" : "traces", s.schedule.evidence);
      if (!s.warning.empty()) text += "    warning: " + s.warning + "\n";
    }
  }
  if (!memory.traces && !memory.false_sharing) return text;
  text += "\nMemory access findings (details: weft falseshare, weft trace)\n";
  if (memory.hints.empty()) return text + "  none\n";
  for (size_t i = 0; i < memory.hints.size(); ++i) {
    const MemoryHint& h = memory.hints[i];
    text +=
        fmt::format("  {} {:<15} {}  {}\n", i + 1, h.kind, code_location(h.position, h.pc), h.code);
    text += "      " + h.evidence + "\n";
    text += "      fix: " + h.suggestion + "\n";
  }
  return text;
}

std::string render_run_facts(const ReportFindings& data) {
  const RunFacts& run = data.run;
  std::string command = run.command;
  for (const std::string& arg : run.args) command += " " + shell_quote(arg);

  TextTable facts({TextTable::Align::Left, TextTable::Align::Left});
  facts.add_row({"command", command});
  facts.add_row({"source", run.source});
  facts.add_row({"started", fmt::format("{} on {}", run.start_time, run.hostname)});
  facts.add_row({"duration", fmt::format("{:.3f} s", run.duration_s)});
  facts.add_row({"exit", exit_description(run)});
  facts.add_row({"profile", data.profile.complete
                                ? std::string("complete")
                                : "INCOMPLETE: " + data.profile.incomplete_reason});
  facts.add_row({"granularity", data.profile.granularity + " bytes"});
  if (const std::string note = crd_sampling_note(data.profile); !note.empty())
    facts.add_row({"crd", note});
  if (const std::string note = instance_sampling_note(data.profile); !note.empty())
    facts.add_row({"sampled", note});
  facts.add_row({"threads", std::to_string(data.profile.threads)});
  facts.add_row({"topology", run.topology});
  const int64_t dropped = run.dropped_events.value_or(0);
  const int64_t dropped_sync = run.dropped_sync_events.value_or(0);
  if (dropped != 0 || dropped_sync != 0) {
    facts.add_row({"dropped", fmt::format("{} accesses, {} sync events not accounted", dropped,
                                          dropped_sync)});
  }
  return fmt::format("weft report: {}\n", data.profile.path) + facts.render("  ");
}

std::string render_top_regions(const ReportFindings& data) {
  std::string text = fmt::format("\nTop regions by communication (raw + rar)\n");
  if (data.top_regions.empty()) return text + "  no communication recorded\n";
  using A = TextTable::Align;
  TextTable regions({A::Right, A::Left, A::Left, A::Left, A::Right, A::Right});
  regions.add_row({"#", "region", "kind", "location", "raw", "rar"});
  for (size_t i = 0; i < data.top_regions.size(); ++i) {
    const RegionVolume& volume = data.top_regions[i];
    regions.add_row({std::to_string(i + 1), volume.region.name, volume.region.kind,
                     region_start_location(volume.region), std::to_string(volume.raw),
                     std::to_string(volume.rar)});
  }
  return text + regions.render("  ");
}

std::string render_top_pairs(const ReportFindings& data) {
  std::string text = fmt::format("\nTop thread pairs (writer -> reader)\n");
  if (data.top_pairs.empty()) return text + "  no communication recorded\n";
  using A = TextTable::Align;
  TextTable pairs({A::Left, A::Right, A::Right});
  pairs.add_row({"writer -> reader", "raw", "rar"});
  for (const ThreadPair& pair : data.top_pairs) {
    pairs.add_row({fmt::format("{:>6} -> {}", pair.writer, pair.reader), std::to_string(pair.raw),
                   std::to_string(pair.rar)});
  }
  return text + pairs.render("  ");
}

std::string render_heatmap(const ReportFindings& data) {
  const Heatmap& heatmap = data.heatmap;
  if (heatmap.max == 0) return "";
  std::string text = fmt::format(
      "\nWhole-program raw communication (rows = writers, columns = readers{}; '{}' up to {})\n",
      heatmap.bucket > 1 ? fmt::format(", {} threads per cell", heatmap.bucket) : "", kHeatmapRamp,
      heatmap.max);
  const size_t label_width = std::to_string(data.profile.threads).size();
  // Column ruler: the last digit of each cell's first thread.
  std::string ruler;
  for (size_t column = 0; column < heatmap.cells.size(); ++column) {
    ruler += static_cast<char>('0' + (column * heatmap.bucket) % 10);
  }
  text += fmt::format("  {:>{}}  {}\n", "", label_width, ruler);
  for (size_t row = 0; row < heatmap.rows.size(); ++row) {
    text += fmt::format("  {:>{}} |{}|\n", row * heatmap.bucket, label_width, heatmap.rows[row]);
  }
  return text;
}

std::string render_hot_loops(const ReportFindings& data) {
  const HotLoopFindings& h = data.hot_loops;
  if (!h.recorded || h.loops.empty()) return "";
  std::string text = fmt::format(
      "\nHot loops: the loops that executed the most instructions (imbalance analysis), each "
      "with its static analysis on CPU model {} (details: weft loops BINARY --line FILE:LINE)\n",
      h.cpu);
  if (!h.calibration_note.empty()) text += "  (" + h.calibration_note + ")\n";
  for (const std::string& caveat : h.cpu_caveats) text += "  (model caveat: " + caveat + ")\n";
  // One reason shared by every loop left unanalyzed (a weft-cc build
  // without --binary: all of them) is said once, not under each loop.
  std::set<std::string> reasons;
  size_t unanalyzed = 0;
  for (const HotLoop& loop : h.loops)
    if (!loop.performance) {
      reasons.insert(loop.not_analyzed);
      ++unanalyzed;
    }
  const bool said_once = unanalyzed > 1 && reasons.size() == 1;
  if (said_once) text += "  (no static analysis of these loops: " + *reasons.begin() + ")\n";
  for (const HotLoop& loop : h.loops) {
    text += fmt::format("  {:5.1f}%  {}  raw {} rar {}{}  busiest thread {:.2f}x the mean\n",
                        100 * loop.share, loop.region.name, loop.raw, loop.rar,
                        loop.crd ? "  " + hot_loop_crd_text(loop) : "", loop.thread_spread);
    if (loop.performance)
      text += "          " + loop_summary_line(*loop.performance) + "\n";
    else if (!said_once)
      text += "          no static analysis: " + loop.not_analyzed + "\n";
    if (loop.hot_path_blocks != 0)
      text += fmt::format(
          "          simulated on its hot path: {} of {} blocks, those run in at least half of "
          "its iterations (every block: L1 {:.2f} cycles/iteration)\n",
          loop.hot_path_blocks, loop.performance->blocks, loop.all_paths_cycles);
    if (loop.performance && !loop.performance->memory_levels.empty()) {
      std::vector<std::string> levels;
      for (const MemoryLevelEstimate& level : loop.performance->memory_levels)
        levels.push_back(fmt::format("{} {:.2f} ({})", level.level, level.cycles_per_iteration,
                                     level.bottleneck));
      text += fmt::format("          operands in {}; strides {}\n", fmt::join(levels, ", "),
                          hot_loop_strides_text(loop));
    }
    if (loop.performance && !loop.performance->hints.empty())
      text += "          hint: " + loop.performance->hints.front() + "\n";
    std::vector<std::string> memory;
    for (const MemoryHint& hint : loop.memory)
      memory.push_back(fmt::format("{} at line {}", hint.kind, hint.position.line));
    if (!memory.empty())
      text += fmt::format("          memory findings here: {}\n", fmt::join(memory, ", "));
  }
  return text;
}

}  // namespace

std::string hot_loop_crd_text(const HotLoop& loop) {
  if (!loop.crd) return "";
  if (loop.crd->events == 0 || !loop.crd->median) return "crd -";
  return fmt::format("crd median {} ({:.1f}% beyond min, {:.1f}% above max)", *loop.crd->median,
                     100 * loop.crd->beyond_min, 100 * loop.crd->above_max);
}

std::string hot_loop_strides_text(const HotLoop& loop) {
  const size_t accesses = loop.performance ? loop.performance->memory_accesses.size() : 0;
  if (loop.recorded_strides == 0) return "from the addressing";
  if (loop.recorded_strides == accesses) return "from the run";
  return fmt::format("from the run for {} of {} accesses, the addressing for the rest",
                     loop.recorded_strides, accesses);
}

namespace {

std::string render_table(const ReportFindings& data) {
  return render_run_facts(data) + render_top_regions(data) + render_locality(data) +
         render_top_pairs(data) + render_suggestions(data) + render_imbalance_summary(data) +
         render_hot_loops(data) + render_memory_summary(data) + render_heatmap(data);
}

using nlohmann::json;

json optional_integer(const std::optional<int64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json optional_text(const std::string& value) { return value.empty() ? json(nullptr) : json(value); }

json optional_line(uint32_t line) { return line == 0 ? json(nullptr) : json(line); }

double instance_sample_rate(uint64_t skipped, uint64_t rate) {
  return skipped == 0 || rate == 0 ? 1.0 : 1.0 / static_cast<double>(rate);
}

json run_json(const ReportFindings& data) {
  const RunFacts& facts = data.run;
  return {
      {"command", facts.command},
      {"args", facts.args},
      {"cwd", facts.cwd},
      {"source", facts.source},
      {"start_time", facts.start_time},
      {"duration_s", facts.duration_s},
      {"exit_status", optional_integer(facts.exit_status)},
      {"exit_signal", optional_text(facts.exit_signal)},
      {"complete", data.profile.complete},
      {"incomplete_reason", optional_text(data.profile.incomplete_reason)},
      {"granularity", optional_integer(facts.granularity)},
      {"threads", data.profile.threads},
      {"topology", facts.topology},
      {"hostname", facts.hostname},
      {"weft_version", facts.weft_version},
      {"dropped_events", optional_integer(facts.dropped_events)},
      {"dropped_sync_events", optional_integer(facts.dropped_sync_events)},
      {"crd_sample_rate", 1.0 / static_cast<double>(uint64_t{1} << data.profile.crd_sample_shift)},
      // The share of section instances past their first ones the CRD, the
      // traces, false sharing and the imbalance analysis' memory counts
      // analyzed (1: every one; docs/metrics.md).
      {"crd_instance_sample_rate",
       instance_sample_rate(data.profile.crd_skipped_segments, data.profile.crd_instance_sampling)},
      // The share of a long analyzed instance's stretches the CRD counted
      // past its whole part (docs/metrics.md, "Stretches of long
      // instances"): 1/8 when it skipped some, else 1.
      {"crd_stretch_sample_rate", data.profile.crd_stretch_sample_rate},
      // The long-reuse sample's rate (docs/metrics.md, "Long reuses"), when
      // instances were skipped.
      {"crd_long_sample_rate",
       data.profile.crd_skipped_segments == 0 && data.profile.crd_skipped_stretches == 0
           ? 1.0
           : 1.0 / static_cast<double>(uint64_t{1} << data.profile.crd_long_sample_shift)},
      {"trace_sample_rate",
       instance_sample_rate(data.profile.trace_skipped_segments, data.profile.trace_sampling)},
      {"falseshare_sample_rate", instance_sample_rate(data.profile.falseshare_skipped_segments,
                                                      data.profile.falseshare_sampling)},
      {"imbalance_memory_sample_rate",
       instance_sample_rate(data.profile.imbalance_unmeasured_segments,
                            data.profile.imbalance_instance_sampling)},
      // The share of a long segment's blocks whose memory the imbalance
      // analysis counted past its whole part: 1/8 when a segment reached
      // its stretches, else 1.
      {"imbalance_stretch_sample_rate", data.profile.imbalance_stretch_sample_rate},
  };
}

json top_regions_json(const ReportFindings& data) {
  json regions = json::array();
  for (const RegionVolume& volume : data.top_regions) {
    const RegionInfo& region = volume.region;
    regions.push_back({{"name", region.name},
                       {"kind", region.kind},
                       {"function", region.function},
                       {"file", region.file.empty() ? json(nullptr) : json(region.file)},
                       {"line", region.first_line == 0 ? json(nullptr) : json(region.first_line)},
                       {"raw", volume.raw},
                       {"rar", volume.rar}});
  }
  return regions;
}

json top_pairs_json(const ReportFindings& data) {
  json pairs = json::array();
  for (const ThreadPair& pair : data.top_pairs) {
    pairs.push_back(
        {{"writer", pair.writer}, {"reader", pair.reader}, {"raw", pair.raw}, {"rar", pair.rar}});
  }
  return pairs;
}

json heatmap_json(const Heatmap& heatmap) {
  return {{"kind", "raw"},        {"bucket", heatmap.bucket}, {"max", heatmap.max},
          {"ramp", kHeatmapRamp}, {"cells", heatmap.cells},   {"rows", heatmap.rows}};
}

json cache_json(const ReportFindings& data) {
  return data.crd ? json{{"bytes", data.cache.bytes},
                         {"source", cache_source_name(data.cache.source)},
                         {"origin", data.cache.origin}}
                  : json(nullptr);
}

json region_locality_json(const ReportFindings& data, const RegionLocality& entry) {
  const RegionInfo& region = entry.volume.region;
  const LocalityMetrics& m = entry.metrics;
  const bool measured = data.crd && m.crd.events > 0;
  return {{"name", region.name},
          {"kind", region.kind},
          {"file", region.file.empty() ? json(nullptr) : json(region.file)},
          {"first_line", optional_line(region.first_line)},
          {"last_line", optional_line(region.last_line)},
          {"raw", entry.volume.raw},
          {"rar", entry.volume.rar},
          {"events", m.crd.events},
          {"unmeasured", m.unmeasured},
          {"median", measured && m.median() ? json(*m.median()) : json(nullptr)},
          {"granule_median", measured ? json(*m.crd.median) : json(nullptr)},
          {"min_cutoff", data.crd ? json(m.cutoffs.min) : json(nullptr)},
          {"max_cutoff", data.crd ? json(m.cutoffs.max) : json(nullptr)},
          {"fraction_beyond_min", measured ? json(m.crd.fraction_beyond_min()) : json(nullptr)},
          {"homogeneity", m.homogeneity},
          {"balance", m.balance}};
}

json locality_json(const ReportFindings& data, const std::vector<RegionLocality>& entries) {
  json locality = json::array();
  for (const RegionLocality& entry : entries) locality.push_back(region_locality_json(data, entry));
  return locality;
}

json read_object_json(const std::optional<ReadObject>& object) {
  if (!object) return nullptr;
  auto unless_empty = [](const std::string& text) {
    return text.empty() ? json(nullptr) : json(text);
  };
  return {{"kind", object->kind},
          {"name", unless_empty(object->name)},
          {"bytes", object->bytes},
          {"allocated_at", unless_empty(object->allocated_at)},
          {"allocated_code", unless_empty(object->allocated_code)},
          {"description", object->description},
          {"share", object->share}};
}

json suggestions_json(const ReportFindings& data) {
  json suggestions = json::array();
  for (const Suggestion& suggestion : data.suggestions) {
    json suggested_pairs = json::array();
    for (const ThreadPairVolume& pair : suggestion.pairs)
      suggested_pairs.push_back({{"threads", {pair.first, pair.second}}, {"events", pair.events}});
    suggestions.push_back(
        {{"kind", suggestion_kind_name(suggestion.kind)},
         {"region", suggestion.region},
         {"file", suggestion.file.empty() ? json(nullptr) : json(suggestion.file)},
         {"first_line", optional_line(suggestion.first_line)},
         {"last_line", optional_line(suggestion.last_line)},
         {"location", suggestion.location},
         {"evidence", suggestion.evidence},
         {"actions", suggestion.actions},
         {"pairs", std::move(suggested_pairs)},
         {"groups", suggestion.groups},
         {"reads_at", suggestion.reads_at.empty() ? json(nullptr) : json(suggestion.reads_at)},
         {"reads_code",
          suggestion.reads_code.empty() ? json(nullptr) : json(suggestion.reads_code)},
         {"reads_object", read_object_json(suggestion.reads_object)},
         {"also_in", suggestion.also_in}});
  }
  return suggestions;
}

json imbalance_json(const ReportFindings& data) {
  json imbalance = data.has_imbalance ? json::array() : json(nullptr);
  for (const SectionImbalance& section : data.imbalance) {
    json causes = json::array();
    for (const ImbalanceCauseLine& c : section.causes)
      causes.push_back({{"kind", c.kind},
                        {"score", c.score},
                        {"file", c.position.file},
                        {"line", c.position.line},
                        {"function", c.position.function}});
    imbalance.push_back({{"location", section_location(section.region)},
                         {"instances", section.instances},
                         {"imbalance", section.imbalance},
                         {"lost", section.lost},
                         {"lost_share", section.lost / data.imbalance_total_lost},
                         {"idle_share", section.idle_share},
                         {"causes", std::move(causes)}});
  }
  return imbalance;
}

json schedules_json(const MemoryHints& memory) {
  json schedules = json::array();
  for (const LoopSchedule& s : memory.schedules) {
    json others = json::array();
    for (const ScheduleTally& o : s.schedule.others)
      others.push_back({{"schedule", o.schedule}, {"executions", o.executions}});
    schedules.push_back({{"file", s.position.file},
                         {"line", s.position.line},
                         {"function", s.position.function},
                         {"pc", s.pc},
                         {"schedule", s.name},
                         {"chunk", s.schedule.chunk},
                         {"iterations", s.schedule.iterations},
                         {"threads", s.schedule.threads},
                         {"executions", s.schedule.executions},
                         {"agreeing_executions", s.schedule.agreeing},
                         {"other_schedules", std::move(others)},
                         {"source", s.source},
                         {"evidence", s.schedule.evidence},
                         {"warning", s.warning.empty() ? json(nullptr) : json(s.warning)}});
  }
  return schedules;
}

json memory_findings_json(const MemoryHints& memory) {
  json findings = json::array();
  for (const MemoryHint& h : memory.hints)
    findings.push_back({{"kind", h.kind},
                        {"file", h.position.file},
                        {"line", h.position.line},
                        {"function", h.position.function},
                        {"pc", h.pc},
                        {"weight", h.weight},
                        {"evidence", h.evidence},
                        {"suggestion", h.suggestion}});
  return findings;
}

// The kinds and lines of a hot loop's memory findings (the findings
// themselves are in memory_findings).
json memory_kinds(const HotLoop& loop) {
  json out = json::array();
  for (const MemoryHint& hint : loop.memory)
    out.push_back({{"kind", hint.kind}, {"line", hint.position.line}});
  return out;
}

json hot_loop_crd_json(const HotLoop& loop) {
  if (!loop.crd) return nullptr;
  const bool measured = loop.crd->events > 0;
  return {{"events", loop.crd->events},
          {"median", measured && loop.crd->median ? json(*loop.crd->median) : json(nullptr)},
          {"fraction_beyond_min", measured ? json(loop.crd->beyond_min) : json(nullptr)},
          {"fraction_above_max", measured ? json(loop.crd->above_max) : json(nullptr)}};
}

json hot_loops_json(const HotLoopFindings& h) {
  if (!h.recorded) return json(nullptr);
  json loops = json::array();
  for (const HotLoop& loop : h.loops)
    loops.push_back(
        {{"region", loop.region.name},
         {"file", optional_text(loop.region.file)},
         {"first_line", optional_line(loop.region.first_line)},
         {"last_line", optional_line(loop.region.last_line)},
         {"instructions", loop.instructions},
         {"share", loop.share},
         {"thread_instructions", loop.thread_instructions},
         {"thread_spread", loop.thread_spread},
         {"memory_findings", memory_kinds(loop)},
         {"raw", loop.raw},
         {"rar", loop.rar},
         {"module", loop.module},
         {"function", loop.function},
         {"analyzed_in", optional_text(loop.analyzed_in)},
         {"address", loop.vaddr},
         {"static", loop.performance ? loop_version_json(*loop.performance) : json(nullptr)},
         {"not_analyzed", optional_text(loop.not_analyzed)},
         {"hot_path_blocks",
          loop.hot_path_blocks != 0 ? json(loop.hot_path_blocks) : json(nullptr)},
         {"all_paths_cycles",
          loop.hot_path_blocks != 0 ? json(loop.all_paths_cycles) : json(nullptr)},
         {"recorded_strides", loop.recorded_strides},
         {"crd", hot_loop_crd_json(loop)}});
  return {{"cpu", h.cpu},
          {"cpu_caveats", h.cpu_caveats},
          {"instructions", h.instructions},
          {"calibration_note", optional_text(h.calibration_note)},
          {"loops", loops}};
}

std::string render_json(const ReportFindings& data) {
  const json report = {{"profile", data.profile.path},
                       {"run", run_json(data)},
                       {"top_regions", top_regions_json(data)},
                       {"top_pairs", top_pairs_json(data)},
                       {"heatmap", heatmap_json(data.heatmap)},
                       {"cache", cache_json(data)},
                       {"program_locality", region_locality_json(data, data.program)},
                       {"regions_locality", locality_json(data, data.locality)},
                       {"sections_locality", locality_json(data, data.section_locality)},
                       {"suggestions", suggestions_json(data)},
                       {"imbalance", imbalance_json(data)},
                       {"hot_loops", hot_loops_json(data.hot_loops)},
                       {"no_barrier_recognised", data.profile.no_barrier_recognised()},
                       {"schedules", schedules_json(data.memory)},
                       {"memory_findings", memory_findings_json(data.memory)}};
  return report.dump() + "\n";
}

}  // namespace

std::string render_report(const ReportFindings& findings, OutputFormat format) {
  if (format == OutputFormat::Csv) {
    throw ViewError("the report has no csv format; use --format table or json");
  }
  if (format == OutputFormat::Json) return render_json(findings);
  return render_table(findings);
}

}  // namespace weft
