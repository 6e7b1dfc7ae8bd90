// What `weft report --html` shows: the terminal report's findings
// (report_findings.h, the same typed results, computed once) and what a page
// can draw beyond a terminal: the most imbalanced instances of the report's
// sections with each thread's busy time, the false-sharing and race items
// with their per-thread byte ranges, the communication graph's pair
// volumes, the placement payoff when a machine is given, and the source
// lines around every line a finding names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/false_sharing_findings.h"
#include "findings/placement_findings.h"
#include "findings/report_findings.h"
#include "profile/profile.h"

namespace weft {

// Heatmap cells per axis at most: with more threads, each cell sums a
// square block of `bucket` threads (make_heatmap), so the page stays small.
inline constexpr size_t kHtmlHeatmapCells = 64;

// One region's matrices as the page's heatmaps draw them.
struct HeatmapPanel {
  RegionVolume volume;  // the region (its name, kind) and its totals
  double homogeneity = 0;
  double balance = 0;
  bool borrowed_known = false;  // LocalityMetrics::borrowed_known
  size_t bucket = 1;            // threads per cell along each axis
  CommunicationMatrix raw;      // [writer bucket][reader bucket]
  CommunicationMatrix rar;
  // Per cell, Σrar / Σ(raw + borrowed) over its threads (crr_ratio); the
  // region's crr when bucket is 1.
  CrrMatrix crr;
};

// Instances drawn per section of the report: the most imbalanced ones.
inline constexpr size_t kHtmlInstances = 5;
// Source lines shown around each line a finding names.
inline constexpr uint32_t kSnippetContext = 3;

// One thread's part of an instance, in the report's measure (modeled
// cycles) and in wall time.
struct InstanceThreadBar {
  uint32_t thread = 0;
  double busy = 0;  // modeled cycles
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t wall_ns = 0;
};

struct InstanceBars {
  int64_t instance = 0;                    // ordinal among the section's instances
  double imbalance = 0;                    // the mean idle fraction by modeled cycles
  double max_busy = 0;                     // the busiest thread's modeled cycles (the section time)
  std::vector<InstanceThreadBar> threads;  // by thread id
};

// The instances of one of the report's sections (ReportFindings::imbalance,
// same order).
struct SectionInstanceBars {
  int64_t region_id = 0;
  size_t instances = 0;             // every instance of the section
  std::vector<InstanceBars> shown;  // at most kHtmlInstances, by imbalance descending
};

struct SnippetLine {
  uint32_t number = 0;
  std::string text;  // as in the file (tabs kept), without the line break
  bool highlighted = false;
};

// A window of a source file around the lines findings name; windows of
// one file that overlap are one snippet.
struct SourceSnippet {
  std::string file;  // as the profile names it
  std::vector<SnippetLine> lines;
};

struct HtmlReportFindings {
  ReportFindings report;
  // The region picker's entries: the whole program, the top regions, the
  // sections that communicate most (make_heatmap_panels).
  std::vector<HeatmapPanel> panels;
  // Pair volumes of the whole program (raw + rar, both directions): the
  // communication graph's edges (pair_volumes).
  ThreadVolumes pair_volume;
  bool has_false_sharing = false;  // the profile recorded the falseshare analysis
  FalseSharingFindings sharing;    // when it did
  std::vector<SectionInstanceBars> instances;
  // The placement payoff on a machine given by the user (the profile keeps
  // only its machine's summary); set by the caller with find_placement.
  std::optional<PlacementFindings> placement;
  std::vector<SourceSnippet> snippets;  // by file, then line
};

// The panels of `report` (sets findings.panels); find_html_report calls it.
void make_heatmap_panels(HtmlReportFindings& findings, size_t max_cells = kHtmlHeatmapCells);

// Throws as find_report does.
HtmlReportFindings find_html_report(const Profile& profile, const ReportOptions& options);

// The snippet holding `line` of `file`, or nullptr; for a view's links.
const SourceSnippet* find_snippet(const std::vector<SourceSnippet>& snippets,
                                  const std::string& file, uint32_t line);

}  // namespace weft
