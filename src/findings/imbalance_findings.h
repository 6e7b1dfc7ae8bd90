// Per parallel section, how unevenly its threads were busy (LIME's
// imbalance: the mean idle fraction at the closing barrier) and the ranked
// causes (the control-flow decisions and the cache misses whose per-thread
// counts explain the busy times) at source lines.
//
// The analysis of each instance is diagnosis/imbalance_diagnosis.h; this
// file feeds it the profile's counts and turns its program counters into
// source positions. `weft imbalance` renders find_imbalance(); the report
// takes its top causes from analyze_imbalance().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

// Which per-thread busy time the analysis explains (docs/metrics.md).
enum class BusyMeasure { ModeledCycles, Instructions, Wall };
const char* busy_measure_name(BusyMeasure measure);  // "cycles", "instructions", "wall"

struct ImbalanceOptions {
  std::optional<std::string> section = std::nullopt;  // region name or FILE:LINE of its barrier
  BusyMeasure measure = BusyMeasure::ModeledCycles;
  double cluster_threshold = 0.9;  // UPGMA stopping correlation
  // Instances analyzed per section at most: those with the largest imbalance
  // (they carry most of the weight of the per-section aggregation).
  size_t max_instances = 256;
};

// A cause explaining less than this fraction of the imbalance: kept in the
// JSON, not listed in tables or the report (nobody acts on it).
inline constexpr double kNegligibleCauseScore = 0.001;

struct ImbalanceCauseLine {
  std::string kind;  // "control-flow" or "cache-miss"
  double score = 0;
  uint64_t pc = 0;    // the decision (last instruction of the leader block) or the load/store
  std::string level;  // cache-miss: "L1", "L2" or "LLC"; empty for control flow
  SourcePosition position;
  std::string code;  // the source line's text, when the file is readable
};

// A section idle under this share of its thread-time is balanced.
inline constexpr double kBalancedIdleShare = 0.01;

struct SectionImbalance {
  RegionInfo region;
  size_t instances = 0;
  size_t analyzed_instances = 0;
  // Instances whose memory instructions were counted (sampled section
  // instances): only these are diagnosed; the others' misses are estimates.
  size_t measured_instances = 0;
  double imbalance = 0;  // mean over instances of the idle fraction
  double lost = 0;       // sum over instances and threads of (max - busy)
  // lost / (lost + the threads' busy time): the share of the section's
  // thread-time spent idle at its closing points. Unlike `imbalance`, each
  // instance counts by its length: many short instances that one thread
  // runs alone (an `omp master` between two barriers) make the mean high
  // and this share small.
  double idle_share = 0;
  size_t largest_team = 0;        // the most threads in one instance (the diagnosis needs 3)
  std::vector<uint32_t> threads;  // thread ids, ascending
  std::vector<double> busy;       // per thread, summed over instances
  std::vector<ImbalanceCauseLine> causes;  // by score, descending; each at a source line
  // Causes the diagnosis found at no source line (the section's entry as
  // leader, code without line information): counted, not ranked.
  size_t unlocated_causes = 0;
  // Idle under kBalancedIdleShare of its thread-time: nobody would
  // restructure code for it, whatever its causes.
  bool balanced() const { return idle_share < kBalancedIdleShare; }
  // Whether the text views rank its causes (the JSON lists them always).
  bool ranks_causes() const { return !causes.empty() && !balanced(); }
};

// Sections by lost busy time, descending. Throws FindingError when the
// profile has no imbalance data or the section is unknown.
std::vector<SectionImbalance> analyze_imbalance(const Profile& profile,
                                                const ImbalanceOptions& options);

// What `weft imbalance` shows: the sections with every cause, and the
// measure their busy times are in.
struct ImbalanceFindings {
  ProfileFacts profile;
  BusyMeasure measure = BusyMeasure::ModeledCycles;
  std::vector<SectionImbalance> sections;  // as analyze_imbalance returns them
};

ImbalanceFindings find_imbalance(const Profile& profile, const ImbalanceOptions& options);

// "file.c:88 function" (or "function 0x…" without a source line).
std::string cause_location(const ImbalanceCauseLine& cause);

// "file.c:93" for region "section@file.c:93" (other names as they are).
std::string section_location(const RegionInfo& region);

}  // namespace weft
