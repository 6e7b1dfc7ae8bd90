// What `weft report` shows, gathered once for its table and JSON: the run
// facts, the regions and thread pairs that communicate most, a heatmap of
// the whole-program RaW matrix, the locality and suggestions of the top
// regions, the most imbalanced sections, and the memory findings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/cache_model.h"
#include "findings/hot_loops.h"
#include "findings/imbalance_findings.h"
#include "findings/locality.h"
#include "findings/memory_findings.h"
#include "findings/profile_facts.h"
#include "findings/suggestions.h"
#include "profile/profile.h"

namespace weft {

// Suggestions are made for the top code regions that hold at least this
// share of the program's communication (raw + rar) and this many events:
// smaller ones cannot pay for a change.
inline constexpr double kSuggestionMinShare = 0.01;
inline constexpr uint64_t kSuggestionMinEvents = 1000;
// No thread affinity is advised for a region when at least this share of
// its communication is read at source lines the memory findings report as
// false sharing or a possible data race: fixing those removes it, and a
// placement would only move it.
inline constexpr double kThreadAffinityMaxContendedShare = 0.5;

struct ReportOptions {
  size_t top = 10;          // regions, thread pairs and suggestions' regions
  CacheOptions cache = {};  // the cache of the CRD cutoffs
  uint64_t suggestion_min_events = kSuggestionMinEvents;
  std::string cpu = {};  // the CPU model of the hot loops' static analysis; empty: this machine's
  // A build of the profiled program without weft-cc, where the hot loops of
  // an instrumented profile are analyzed (find_hot_loops).
  std::string binary = {};
  // The calibration of the hot loops' L2/RAM estimates (a file as `weft
  // calibrate` writes it); empty: this machine's.
  std::string calibration = {};
};

// The report's hot loops: the kReportLoops that executed the most
// instructions.
inline constexpr size_t kReportLoops = 5;

// The sections of the report: the kReportSections that lost the most time
// (idle thread-time at their closing points, summed over instances),
// whatever their imbalance percentage above kNegligibleImbalance, with
// kReportCauses causes at most.
inline constexpr size_t kReportSections = 3;
// A section whose threads' idle fraction averages under this (it prints as
// "imbalance 0.0%") is not listed: a few thousand idle cycles out of
// billions are the simulated shared cache's interleaving, nothing to act on.
inline constexpr double kNegligibleImbalance = 0.0005;
inline constexpr size_t kReportCauses = 3;

// The run as the profile's meta table records it.
struct RunFacts {
  std::string command;
  std::vector<std::string> args;  // meta args, a JSON array of strings
  std::string cwd;
  std::string source;
  std::string start_time;
  std::string hostname;
  std::string topology;
  std::string weft_version;
  double duration_s = 0;                  // 0 when unreadable
  std::string exit_status_text;           // meta exit_status as stored; "" when unknown
  std::optional<int64_t> exit_status;     // ... when it is an integer
  std::string exit_signal;                // "" unless the program was killed
  std::optional<int64_t> granularity;     // meta granularity, when an integer
  std::optional<int64_t> dropped_events;  // accesses not accounted
  std::optional<int64_t> dropped_sync_events;
};

struct ThreadPair {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t raw = 0;
  uint64_t rar = 0;
};

// A top region with its locality metrics.
struct RegionLocality {
  RegionVolume volume;
  LocalityMetrics metrics;
};

// A matrix shrunk to at most max_columns x max_columns cells by summing
// square blocks of `bucket` threads, drawn one character per cell.
struct Heatmap {
  size_t bucket = 1;              // threads per cell along each axis
  uint64_t max = 0;               // largest cell
  CommunicationMatrix cells;      // [writer bucket][reader bucket]
  std::vector<std::string> rows;  // one string per writer bucket
};

// The ramp, from zero to the largest cell; any non-zero cell is at least '.'.
inline constexpr const char* kHeatmapRamp = " .:-=+*#%@";

Heatmap make_heatmap(const CommunicationMatrix& matrix, size_t max_columns = 64);

struct ReportFindings {
  ProfileFacts profile;
  RunFacts run;
  // One ranking of the code regions (functions, loops, OpenMP bodies: each
  // instruction in one of them) by raw + rar, descending, at most `top`.
  std::vector<RegionVolume> top_regions;
  bool crd = false;                      // the profile measured CRD
  CacheModel cache;                      // resolved only when crd
  RegionLocality program;                // the whole program (region kind "program")
  std::vector<RegionLocality> locality;  // the top regions, same order
  // The parallel sections that communicate most (the same events again, cut
  // by the synchronisation points that close them), at most kReportSections.
  std::vector<RegionLocality> section_locality;
  // Of the top regions above the thresholds; one suggestion stands for every
  // region with the same finding (a broadcast from one writer, one grouping).
  std::vector<Suggestion> suggestions;
  std::vector<ThreadPair> top_pairs;  // by raw + rar, descending, at most `top`
  Heatmap heatmap;                    // of the whole-program raw matrix
  bool has_imbalance = false;         // the profile recorded the imbalance analysis
  // The most imbalanced sections (by lost busy time) with their top causes.
  std::vector<SectionImbalance> imbalance;
  // Lost time of every section (the shares of the shown ones are of it).
  double imbalance_total_lost = 0;
  // Schedules executed and findings from the traces and false sharing.
  MemoryHints memory;
  // The loops that executed the most instructions, with their static
  // analysis (with the imbalance analysis' block counts).
  HotLoopFindings hot_loops;
};

// Throws FindingError for a bad cache option (asked for only when the
// profile has CRD), ProfileError for an unreadable profile.
ReportFindings find_report(const Profile& profile, const ReportOptions& options);

}  // namespace weft
