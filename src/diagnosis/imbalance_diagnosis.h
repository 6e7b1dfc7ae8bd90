// LIME's load-imbalance diagnosis (Oh et al., "LIME: a framework for
// debugging load imbalance in multi-threaded execution", ICSE 2011) for one
// instance of a parallel section, and the aggregation of the instances of a
// section. Pure analysis on plain data: no I/O, no profile format.
//
// Per instance: hardware events are freed of what their superior events
// explain (Gram–Schmidt), events are clustered on the correlation of their
// per-thread counts (event_clustering.h), control-flow clusters get leader
// nodes in the control-flow graph, and a forward-selection regression of the
// per-thread time on the clusters picks the clusters that explain it. See
// README.md for the details and the choices made where the paper is silent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft {

// A control-flow edge of the section and how often each thread took it.
// from == 0 is the section-entry pseudo node (a real block never has pc 0).
struct ControlFlowEdge {
  uint64_t from = 0;
  uint64_t to = 0;
  std::vector<double> counts;  // counts[t] for thread t; empty = never taken
};

// The hierarchy of hardware events of one instruction: each level can only
// happen when the one before it did.
enum class HardwareLevel : uint8_t { Executions = 0, L1Miss = 1, L2Miss = 2, LlcMiss = 3 };

struct InstructionEvents {
  uint64_t pc = 0;
  // Indexed by HardwareLevel; each is counts[t] per thread, or empty (all 0).
  std::array<std::vector<double>, 4> counts;
};

struct SectionInstanceData {
  size_t threads = 0;
  std::vector<double> time;  // per thread, size `threads`
  std::vector<ControlFlowEdge> edges;
  std::vector<InstructionEvents> instructions;
};

struct DiagnosisOptions {
  // Clusters are merged while their average-linkage correlation is >= this.
  double cluster_threshold = 0.9;
  // Event pairs correlated at least this much are merged before UPGMA.
  double bulk_threshold = 0.99;
  // A cluster enters the regression when its partial F-test p-value is below.
  double significance = 0.05;
  // A hardware event whose variation keeps less than this fraction of its
  // (centered) norm once its superiors are projected out is dropped.
  double explained_fraction = 0.05;
};

enum class CauseKind : uint8_t { ControlFlow, CacheMiss };

struct Cause {
  CauseKind kind = CauseKind::ControlFlow;
  // ControlFlow: the leader node (a block pc, the `from` of its out-edges).
  // CacheMiss: the instruction.
  uint64_t pc = 0;
  // CacheMiss: the level of the misses. ControlFlow: Executions.
  HardwareLevel level = HardwareLevel::Executions;
  // In [0, 1]: the fraction of the variance of the per-thread time that the
  // cause's cluster explained when it entered the regression (its
  // sequential R^2 gain) times the cause's share of that cluster. The
  // scores of an instance's causes add up to at most the model's R^2.
  double score = 0;
  // The cause's part of its cluster's explained variance, in [0, 1]; the
  // parts of a cluster's causes add up to 1.
  // ControlFlow: its leader score over the sum of the positive leader scores
  // of the cluster's leaders (a leader whose score is not positive is no
  // cause). CacheMiss: the spread (over threads) of its residual misses over
  // the sum of the spreads of the cluster's members. LIME gives every member
  // the cluster's weight; but when one thread is slow, everything it does
  // differently correlates perfectly with time, and a load missing 100,000
  // times more must outrank a stub missing once more.
  double share = 1;
  // Standardized regression coefficient of the cause's cluster.
  double beta = 0;
  // ControlFlow: the leader node's score (max correlation with time over its
  // out-edges minus that over its in-edges). CacheMiss: 0.
  double leader_score = 0;
  // ControlFlow: target of the leader's out-edge most correlated with time.
  // CacheMiss: 0.
  uint64_t edge_to = 0;
};

struct InstanceDiagnosis {
  std::vector<Cause> causes;  // score descending, then pc ascending
  size_t events = 0;          // events that entered the clustering
  size_t clusters = 0;
  size_t selected_clusters = 0;  // clusters in the final regression model
  double r_squared = 0;          // of the final regression model
  bool analyzable = false;       // false: fewer than 2 threads or constant time
};

// Diagnoses one section instance. Throws std::invalid_argument when a
// vector's size is neither `threads` nor (for counts) 0, or when a value is
// not finite.
InstanceDiagnosis diagnose_instance(const SectionInstanceData& data,
                                    const DiagnosisOptions& options = {});

// Combines the diagnoses of a section's instances: each pair is (the
// instance's imbalance, its diagnosis). Per (kind, pc, level), the score
// (hence still in [0, 1]),
// beta and leader score are the imbalance-weighted sums over the instances
// divided by the sum of all the weights (an instance without the cause
// counts as 0); edge_to is the one of the heaviest instance that has the
// cause. Negative or non-finite weights count as 0; when all weights are 0
// the result is empty. Sorted like InstanceDiagnosis::causes.
std::vector<Cause> combine_instances(
    const std::vector<std::pair<double, InstanceDiagnosis>>& instances);

}  // namespace weft
