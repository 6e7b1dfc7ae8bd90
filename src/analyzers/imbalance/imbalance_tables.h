// The imbalance analysis' tables (docs/profile-format.md): the segments of
// each thread grouped into section instances, the blocks the analysis saw
// with their decisions, and per instance and thread the edges, the memory
// instructions' misses and the busy measures; and their readers.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profile/profile.h"

namespace weft {

// One thread's part of a section instance: its busy time by the three
// measures (docs/metrics.md, "Load imbalance") and its simulated misses.
struct InstanceThreadBusy {
  uint32_t thread = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t wall_ns = 0;
  uint64_t instructions = 0;
  uint64_t l1_misses = 0;
  uint64_t l2_misses = 0;
  uint64_t llc_misses = 0;
  double modeled_cycles = 0;
};

// A dynamic instance of a parallel section (region kind "section").
struct SectionInstanceInfo {
  int64_t id = 0;
  int64_t region_id = 0;
  int64_t instance = 0;  // ordinal among the region's instances
  double imbalance = 0;  // by modeled cycles
  // How many instances its memory counts stand for (sampled section
  // instances): 1, itself; N, one the sample selected; 0, its memory
  // instructions were not counted: its misses are estimates and it has no
  // instance_instructions.
  uint32_t memory_weight = 1;
  bool measured() const { return memory_weight != 0; }
  std::vector<InstanceThreadBusy> threads;  // by thread id
};

// LIME's imbalance of one instance: the mean over its threads of the idle
// fraction (max - b_t) / max of their busy times b_t; 0 when all are 0.
// Shared by the writer (sections' stored imbalance) and the findings.
double idle_fraction(const std::vector<double>& busy);

// Control-flow edge (from, to) counted `count` times by `thread` in an
// instance; from = 0 is the section's entry.
struct InstanceEdgeCount {
  uint32_t thread = 0;
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t count = 0;
};

// A memory instruction's executions and simulated misses in an instance.
struct InstanceInstructionCount {
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint64_t executions = 0;
  uint64_t l1_misses = 0;
  uint64_t l2_misses = 0;
  uint64_t llc_misses = 0;
};

// Every section instance, by id, with its threads.
std::vector<SectionInstanceInfo> section_instances(const Profile& profile);
std::vector<InstanceEdgeCount> instance_edges(const Profile& profile, int64_t instance_id);
std::vector<InstanceInstructionCount> instance_instructions(const Profile& profile,
                                                            int64_t instance_id);
// The decision (last instruction) of each block the analysis saw.
std::map<uint64_t, uint64_t> block_decisions(const Profile& profile);

// Instructions a thread executed in the blocks that end at `decision_pc`
// (every edge into a block times the block's instruction count, over every
// section instance), and the code region of that decision pc (a block
// belongs to the region of its branch: its loop, or its function).
struct DecisionInstructions {
  uint64_t decision_pc = 0;
  int64_t region_id = 0;
  uint32_t thread = 0;
  uint64_t instructions = 0;
};
std::vector<DecisionInstructions> executed_instructions(const Profile& profile);

// Every control-flow edge between block pcs, summed over the measured
// section instances (those instruction_executions counts too) and threads
// (from = 0, a section's entry, left out); by from, then to.
struct EdgeTotal {
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t count = 0;
};
std::vector<EdgeTotal> edge_totals(const Profile& profile);

// How often each memory instruction ran, summed over the measured section
// instances and threads, by pc.
std::map<uint64_t, uint64_t> instruction_executions(const Profile& profile);

}  // namespace weft
