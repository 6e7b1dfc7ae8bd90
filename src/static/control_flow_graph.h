// Dominators and natural loops of a control-flow graph given as plain data
// (node i's successors), independent of any binary so it can be tested on
// hand-made graphs. Node 0 is the entry unless told otherwise.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace weft {

// successors[i]: the nodes control can go to from node i. Duplicates and
// edges to nodes >= successors.size() are ignored.
using Successors = std::vector<std::vector<uint32_t>>;

inline constexpr int32_t kNoDominator = -1;

// Immediate dominators by the Cooper–Harvey–Kennedy iterative algorithm over
// the reverse post-order from `entry`. idom[entry] == entry; nodes that are
// unreachable from the entry get kNoDominator.
std::vector<int32_t> immediate_dominators(const Successors& successors, uint32_t entry = 0);

// Whether a dominates b (every node dominates itself). False when b is
// unreachable.
bool dominates(const std::vector<int32_t>& idom, uint32_t a, uint32_t b);

struct NaturalLoop {
  uint32_t header = 0;
  std::vector<uint32_t> latches;  // sources of the back edges into the header, sorted
  std::vector<uint32_t> body;     // header included, sorted
  int32_t parent = -1;            // index of the smallest enclosing loop, -1 at top level
  uint32_t depth = 1;             // 1 = outermost
};

struct LoopForest {
  std::vector<int32_t> idom;                              // immediate_dominators()
  std::vector<std::pair<uint32_t, uint32_t>> back_edges;  // (latch, header), sorted
  // Parents before children (a pre-order of the forest; siblings and roots in
  // the order of their header's node number).
  std::vector<NaturalLoop> loops;
  std::vector<int32_t> innermost;  // per node: innermost loop containing it, -1 if none
};

// Back edges are the edges u -> h where h dominates u. The natural loop of a
// back edge is h plus every node that reaches u without passing through h;
// loops with the same header are merged into one. Nodes unreachable from the
// entry belong to no loop. Cycles that have no dominating header
// (irreducible control flow) have no back edge and therefore are not loops.
// Two natural loops with different headers are either disjoint or nested, so
// the loops form a forest: a loop's parent is the smallest other loop whose
// body contains its header.
LoopForest find_loops(const Successors& successors, uint32_t entry = 0);

}  // namespace weft
