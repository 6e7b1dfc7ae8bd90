// Dominators and natural loops on hand-made graphs, and against the textbook
// definitions on random graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "static/control_flow_graph.h"

namespace weft {
namespace {

using Nodes = std::vector<uint32_t>;

TEST(ControlFlowGraph, DiamondDominators) {
  // 0 -> 1, 2 -> 3
  Successors graph = {{1, 2}, {3}, {3}, {}};
  std::vector<int32_t> idom = immediate_dominators(graph);
  EXPECT_EQ(idom, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_TRUE(dominates(idom, 0, 3));
  EXPECT_FALSE(dominates(idom, 1, 3));
  EXPECT_TRUE(dominates(idom, 3, 3));
  LoopForest forest = find_loops(graph);
  EXPECT_TRUE(forest.loops.empty());
  EXPECT_TRUE(forest.back_edges.empty());
  EXPECT_EQ(forest.innermost, (std::vector<int32_t>{-1, -1, -1, -1}));
}

TEST(ControlFlowGraph, NestedLoops) {
  // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 (inner back edge)
  // 3 -> 4 -> 1 (outer back edge); 1 -> 5 (exit)
  Successors graph = {{1}, {2, 5}, {3}, {2, 4}, {1}, {}};
  LoopForest forest = find_loops(graph);
  EXPECT_EQ(forest.idom, (std::vector<int32_t>{0, 0, 1, 2, 3, 1}));
  EXPECT_EQ(forest.back_edges, (std::vector<std::pair<uint32_t, uint32_t>>{{3, 2}, {4, 1}}));
  ASSERT_EQ(forest.loops.size(), 2u);
  const NaturalLoop& outer = forest.loops[0];
  const NaturalLoop& inner = forest.loops[1];
  EXPECT_EQ(outer.header, 1u);
  EXPECT_EQ(outer.body, (Nodes{1, 2, 3, 4}));
  EXPECT_EQ(outer.latches, (Nodes{4}));
  EXPECT_EQ(outer.parent, -1);
  EXPECT_EQ(outer.depth, 1u);
  EXPECT_EQ(inner.header, 2u);
  EXPECT_EQ(inner.body, (Nodes{2, 3}));
  EXPECT_EQ(inner.latches, (Nodes{3}));
  EXPECT_EQ(inner.parent, 0);
  EXPECT_EQ(inner.depth, 2u);
  EXPECT_EQ(forest.innermost, (std::vector<int32_t>{-1, 0, 1, 1, 0, -1}));
}

TEST(ControlFlowGraph, BackEdgesToOneHeaderMakeOneLoop) {
  // 1 is the header of two back edges (2 -> 1 and 3 -> 1): one loop.
  Successors graph = {{1}, {2, 3, 4}, {1}, {1}, {}};
  LoopForest forest = find_loops(graph);
  EXPECT_EQ(forest.back_edges.size(), 2u);
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].header, 1u);
  EXPECT_EQ(forest.loops[0].latches, (Nodes{2, 3}));
  EXPECT_EQ(forest.loops[0].body, (Nodes{1, 2, 3}));
  EXPECT_EQ(forest.loops[0].depth, 1u);
}

TEST(ControlFlowGraph, IrreducibleCycleIsNoLoop) {
  // 1 <-> 2 entered at both 1 and 2: neither dominates the other.
  Successors graph = {{1, 2}, {2}, {1, 3}, {}};
  LoopForest forest = find_loops(graph);
  EXPECT_EQ(forest.idom, (std::vector<int32_t>{0, 0, 0, 2}));
  EXPECT_TRUE(forest.back_edges.empty());
  EXPECT_TRUE(forest.loops.empty());
}

TEST(ControlFlowGraph, IrreducibleCycleInsideALoop) {
  // An outer loop 1..4 whose body holds an irreducible cycle 2 <-> 3.
  Successors graph = {{1}, {2, 3}, {3, 4}, {2, 4}, {1, 5}, {}};
  LoopForest forest = find_loops(graph);
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].header, 1u);
  EXPECT_EQ(forest.loops[0].body, (Nodes{1, 2, 3, 4}));
}

TEST(ControlFlowGraph, SelfLoop) {
  Successors graph = {{1}, {1, 2}, {}};
  LoopForest forest = find_loops(graph);
  EXPECT_EQ(forest.back_edges, (std::vector<std::pair<uint32_t, uint32_t>>{{1, 1}}));
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].header, 1u);
  EXPECT_EQ(forest.loops[0].latches, (Nodes{1}));
  EXPECT_EQ(forest.loops[0].body, (Nodes{1}));
}

TEST(ControlFlowGraph, SelfLoopOnTheEntry) {
  Successors graph = {{0, 1}, {}};
  LoopForest forest = find_loops(graph);
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].header, 0u);
  EXPECT_EQ(forest.loops[0].body, (Nodes{0}));
}

TEST(ControlFlowGraph, UnreachableBlocksAreInNoLoop) {
  // 1 <-> 2 is a loop; 3 <-> 4 is an unreachable cycle, and 3 also jumps
  // into the loop (padding after a noreturn call looks like this).
  Successors graph = {{1}, {2}, {1, 5}, {4, 1}, {3}, {}};
  LoopForest forest = find_loops(graph);
  EXPECT_EQ(forest.idom, (std::vector<int32_t>{0, 0, 1, -1, -1, 2}));
  EXPECT_FALSE(dominates(forest.idom, 0, 3));
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].body, (Nodes{1, 2}));
  EXPECT_EQ(forest.innermost[3], -1);
  EXPECT_EQ(forest.innermost[4], -1);
}

TEST(ControlFlowGraph, SiblingsInPreOrderAfterTheirParent) {
  // Outer loop 1..6 holding two inner loops (2 <-> 3, then 4 <-> 5), then a
  // separate top-level loop at 7.
  Successors graph = {{1}, {2}, {3}, {2, 4}, {5}, {4, 6}, {1, 7}, {7, 8}, {}};
  LoopForest forest = find_loops(graph);
  ASSERT_EQ(forest.loops.size(), 4u);
  EXPECT_EQ(forest.loops[0].header, 1u);
  EXPECT_EQ(forest.loops[1].header, 2u);
  EXPECT_EQ(forest.loops[2].header, 4u);
  EXPECT_EQ(forest.loops[3].header, 7u);
  EXPECT_EQ(forest.loops[1].parent, 0);
  EXPECT_EQ(forest.loops[2].parent, 0);
  EXPECT_EQ(forest.loops[3].parent, -1);
  EXPECT_EQ(forest.loops[2].depth, 2u);
  EXPECT_EQ(forest.loops[3].depth, 1u);
  EXPECT_EQ(forest.loops[0].body, (Nodes{1, 2, 3, 4, 5, 6}));
}

TEST(ControlFlowGraph, TripleNestingDepths) {
  Successors graph = {{1}, {2}, {3}, {3, 4}, {2, 5}, {1, 6}, {}};
  LoopForest forest = find_loops(graph);
  ASSERT_EQ(forest.loops.size(), 3u);
  EXPECT_EQ(forest.loops[0].depth, 1u);
  EXPECT_EQ(forest.loops[1].depth, 2u);
  EXPECT_EQ(forest.loops[2].depth, 3u);
  EXPECT_EQ(forest.loops[2].parent, 1);
  EXPECT_EQ(forest.loops[2].body, (Nodes{3}));
  EXPECT_EQ(forest.innermost, (std::vector<int32_t>{-1, 0, 1, 2, 1, 0, -1}));
}

TEST(ControlFlowGraph, IgnoresDuplicateAndOutOfRangeEdges) {
  Successors graph = {{1, 1, 9}, {0, 0, 2}, {}};
  LoopForest forest = find_loops(graph);
  ASSERT_EQ(forest.loops.size(), 1u);
  EXPECT_EQ(forest.loops[0].header, 0u);
  EXPECT_EQ(forest.loops[0].body, (Nodes{0, 1}));
  EXPECT_TRUE(find_loops({}).loops.empty());
}

// Dominator sets by the textbook data-flow equations.
std::vector<std::set<uint32_t>> dominator_sets(const Successors& graph) {
  const uint32_t n = static_cast<uint32_t>(graph.size());
  std::vector<bool> reachable(n, false);
  std::vector<uint32_t> work = {0};
  reachable[0] = true;
  while (!work.empty()) {
    uint32_t node = work.back();
    work.pop_back();
    for (uint32_t next : graph[node]) {
      if (!reachable[next]) {
        reachable[next] = true;
        work.push_back(next);
      }
    }
  }
  std::set<uint32_t> all;
  for (uint32_t node = 0; node < n; ++node) {
    if (reachable[node]) all.insert(node);
  }
  std::vector<std::set<uint32_t>> dom(n);
  for (uint32_t node = 0; node < n; ++node)
    dom[node] = reachable[node] ? all : std::set<uint32_t>{};
  dom[0] = {0};
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t node = 1; node < n; ++node) {
      if (!reachable[node]) continue;
      std::set<uint32_t> next = all;
      for (uint32_t pred = 0; pred < n; ++pred) {
        if (!reachable[pred] ||
            std::find(graph[pred].begin(), graph[pred].end(), node) == graph[pred].end()) {
          continue;
        }
        std::set<uint32_t> kept;
        std::set_intersection(next.begin(), next.end(), dom[pred].begin(), dom[pred].end(),
                              std::inserter(kept, kept.begin()));
        next = std::move(kept);
      }
      next.insert(node);
      if (next != dom[node]) {
        dom[node] = std::move(next);
        changed = true;
      }
    }
  }
  return dom;
}

TEST(ControlFlowGraph, MatchesTheDefinitionsOnRandomGraphs) {
  std::mt19937 random(12345);
  for (int round = 0; round < 300; ++round) {
    const uint32_t n = 2 + random() % 11;
    Successors graph(n);
    for (uint32_t node = 0; node < n; ++node) {
      uint32_t edges = random() % 3;
      for (uint32_t e = 0; e < edges; ++e) graph[node].push_back(random() % n);
    }
    std::vector<std::set<uint32_t>> dom = dominator_sets(graph);
    LoopForest forest = find_loops(graph);
    for (uint32_t a = 0; a < n; ++a) {
      for (uint32_t b = 0; b < n; ++b) {
        ASSERT_EQ(dominates(forest.idom, a, b), dom[b].count(a) == 1)
            << "round " << round << " a " << a << " b " << b;
      }
    }
    // Every loop: its header dominates its body; the body is closed under
    // predecessors (except at the header); loops are nested or disjoint.
    std::set<uint32_t> headers;
    for (const NaturalLoop& loop : forest.loops) {
      EXPECT_TRUE(headers.insert(loop.header).second);
      for (uint32_t node : loop.body) EXPECT_TRUE(dom[node].count(loop.header));
      for (uint32_t node : loop.body) {
        if (node == loop.header) continue;
        for (uint32_t pred = 0; pred < n; ++pred) {
          bool edge = std::find(graph[pred].begin(), graph[pred].end(), node) != graph[pred].end();
          if (edge && !dom[pred].empty()) {
            EXPECT_TRUE(std::binary_search(loop.body.begin(), loop.body.end(), pred));
          }
        }
      }
      if (loop.parent >= 0) {
        const NaturalLoop& parent = forest.loops[static_cast<size_t>(loop.parent)];
        EXPECT_TRUE(std::includes(parent.body.begin(), parent.body.end(), loop.body.begin(),
                                  loop.body.end()));
        EXPECT_EQ(loop.depth, parent.depth + 1);
        EXPECT_LT(loop.parent, &loop - forest.loops.data());
      }
    }
  }
}

}  // namespace
}  // namespace weft
