// The placement model on synthetic machines: the shared levels hwloc's tree
// gives each PU pair, the mapping algorithms on communication graphs whose
// best placement can be worked out by hand (ring, pairs, clusters, grid,
// clique, star), the baselines, and more threads than PUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "placement/thread_mapping.h"
#include "topology/topology.h"

namespace weft {
namespace {

// Two packages x two L3 x four cores x two PUs (one NUMA node).
PuDistances two_sockets() { return Topology::synthetic("pack:2 l3:2 core:4 pu:2").pu_distances(); }

ThreadVolumes empty_volumes(size_t n) { return ThreadVolumes(n, std::vector<double>(n, 0.0)); }
void link(ThreadVolumes& v, size_t a, size_t b, double volume) { v[a][b] = v[b][a] = volume; }

double cost(const ThreadVolumes& v, const PuDistances& m, MappingAlgorithm a) {
  return mapping_cost(v, m, map_threads(a, v, m)).hop_bytes;
}

void expect_ordered(const ThreadVolumes& v, const PuDistances& m) {
  const double hierarchical = cost(v, m, MappingAlgorithm::Hierarchical);
  const double greedy = cost(v, m, MappingAlgorithm::Greedy);
  const double scatter = cost(v, m, MappingAlgorithm::Scatter);
  EXPECT_LE(hierarchical, greedy);
  EXPECT_LE(greedy, scatter);
}

TEST(PuDistances, LevelsFollowTheDeepestSharedObject) {
  const PuDistances m = two_sockets();
  ASSERT_EQ(m.size(), 32u);
  EXPECT_EQ(m.cores(), 16u);
  EXPECT_EQ(m.level(0, 0), SharedLevel::SamePu);
  EXPECT_EQ(m.level(0, 1), SharedLevel::Core);      // SMT siblings
  EXPECT_EQ(m.level(0, 2), SharedLevel::L3);        // another core under the same L3
  EXPECT_EQ(m.level(0, 8), SharedLevel::NumaNode);  // the other L3 of the package
  EXPECT_EQ(m.level(0, 16), SharedLevel::Machine);  // the other package
  EXPECT_EQ(m.level(31, 16), SharedLevel::NumaNode);
  EXPECT_DOUBLE_EQ(m.distance(0, 1), 1);
  EXPECT_DOUBLE_EQ(m.distance(0, 2), 4);
  EXPECT_DOUBLE_EQ(m.distance(0, 8), 8);
  EXPECT_DOUBLE_EQ(m.distance(0, 16), 32);
  // Two NUMA nodes per package: the nodes tell PUs of one package apart.
  const PuDistances numa = Topology::synthetic("pack:2 numa:2 l3:1 core:2 pu:1").pu_distances();
  EXPECT_EQ(numa.level(0, 1), SharedLevel::L3);
  EXPECT_EQ(numa.level(0, 2), SharedLevel::Package);
  EXPECT_EQ(numa.level(0, 4), SharedLevel::Machine);
  EXPECT_EQ(numa.numa_node, (std::vector<unsigned>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(numa.numa_nodes(), 4u);
  const PuDistances one_node = Topology::synthetic("pack:2 l3:2 core:4 pu:2").pu_distances();
  EXPECT_EQ(one_node.numa_nodes(), 1u);
  const PuDistances l2 = Topology::synthetic("pack:1 l3:1 l2:2 core:2 pu:1").pu_distances();
  EXPECT_EQ(l2.level(0, 1), SharedLevel::L2);
  EXPECT_EQ(l2.level(0, 2), SharedLevel::L3);
}

TEST(PuDistances, LevelWeightsAndAMeasuredMatrix) {
  const LevelDistances w = parse_level_distances("core=2, l3=10,machine=100");
  EXPECT_DOUBLE_EQ(w[SharedLevel::Core], 2);
  EXPECT_DOUBLE_EQ(w[SharedLevel::L2], 2);  // the default, untouched
  EXPECT_DOUBLE_EQ(w[SharedLevel::L3], 10);
  EXPECT_DOUBLE_EQ(w[SharedLevel::Machine], 100);
  EXPECT_THROW(parse_level_distances("l3"), std::invalid_argument);
  EXPECT_THROW(parse_level_distances("l4=3"), std::invalid_argument);
  EXPECT_THROW(parse_level_distances("l3=-1"), std::invalid_argument);
  EXPECT_THROW(parse_level_distances("l3=3x"), std::invalid_argument);

  PuDistances m = Topology::synthetic("pack:1 l3:2 core:2 pu:1").pu_distances(w);
  EXPECT_DOUBLE_EQ(m.distance(0, 1), 10);
  set_distance_matrix(m, "0,5,7,9\n5,0,1,2\n7,1,0,3\n9,2,3,0\n");
  EXPECT_DOUBLE_EQ(m.distance(0, 3), 9);
  EXPECT_DOUBLE_EQ(m.distance(2, 1), 1);
  EXPECT_EQ(m.level(0, 1), SharedLevel::L3);  // the levels stay hwloc's
  EXPECT_THROW(set_distance_matrix(m, "0,1\n1,0\n"), std::invalid_argument);
  EXPECT_THROW(set_distance_matrix(m, "0,5,7,9\n5,0,1,2\n7,1,0,3\n9,2,4,0\n"),
               std::invalid_argument);  // not symmetric
  EXPECT_THROW(set_distance_matrix(m, "1,5,7,9\n5,0,1,2\n7,1,0,3\n9,2,3,0\n"),
               std::invalid_argument);  // diagonal
}

// Pairs {0, 3} and {1, 2} talk, 0 and 1 a little: each pair in one L3 is
// the optimum, 2 x 50 x 4 + 1 x 8 = 408; COMPLACE's greedy finds it; scatter
// puts every pair across the L3s (101 x 8).
TEST(ThreadMapping, PairsShareAnL3AndTheBaselinesAreAsComputed) {
  const PuDistances m = Topology::synthetic("pack:1 l3:2 core:2 pu:1").pu_distances();
  ThreadVolumes v = empty_volumes(4);
  link(v, 0, 3, 50);
  link(v, 1, 2, 50);
  link(v, 0, 1, 1);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Greedy), 408);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Hierarchical), 408);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Scatter), 808);
  // Packed: 0 1 | 2 3: the pairs cross, 0 and 1 share.
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Packed), 50 * 8 + 50 * 8 + 1 * 4);
  const ThreadMapping greedy = map_threads(MappingAlgorithm::Greedy, v, m);
  EXPECT_EQ(greedy.pu, (std::vector<size_t>{0, 2, 3, 1}));
  const MappingCost c = mapping_cost(v, m, greedy);
  EXPECT_DOUBLE_EQ(c.traffic[static_cast<size_t>(SharedLevel::L3)], 100);
  EXPECT_DOUBLE_EQ(c.traffic[static_cast<size_t>(SharedLevel::NumaNode)], 1);
  // Unpinned: of the 12 ordered pairs of distinct PUs, 4 share an L3
  // (distance 4) and 8 do not (8): 101 x (16 + 64) / 12.
  const MappingCost unpinned = expected_unpinned_cost(v, m);
  EXPECT_NEAR(unpinned.hop_bytes, 101.0 * 80.0 / 12.0, 1e-9);
  EXPECT_NEAR(unpinned.traffic[static_cast<size_t>(SharedLevel::L3)], 101.0 / 3.0, 1e-9);
}

// A ring of 8 on two L3s of four cores: two arcs of four, 6 edges in an L3
// and 2 between them, 6 x 10 x 4 + 2 x 10 x 8 = 400.
TEST(ThreadMapping, RingIsCutTwice) {
  const PuDistances m = two_sockets();
  ThreadVolumes v = empty_volumes(8);
  for (size_t t = 0; t < 8; ++t) link(v, t, (t + 1) % 8, 10);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Hierarchical), 400);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Greedy), 400);
  // Scatter alternates packages: every edge crosses the machine.
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Scatter), 8 * 10 * 32);
  // One socket, eight cores with two PUs each: one thread per core, all in
  // the L3, whatever the algorithm; unpinned too (no SMT doubling while
  // cores are idle), so placement gains nothing there.
  const PuDistances smt = Topology::synthetic("pack:1 l3:1 core:8 pu:2").pu_distances();
  for (MappingAlgorithm a : kMappingAlgorithms) EXPECT_DOUBLE_EQ(cost(v, smt, a), 8 * 10 * 4);
  EXPECT_NEAR(expected_unpinned_cost(v, smt).hop_bytes, 8 * 10 * 4, 1e-9);
  // No two threads on SMT siblings while cores are free.
  std::set<unsigned> cores;
  for (size_t pu : map_threads(MappingAlgorithm::Hierarchical, v, m).pu) cores.insert(m.core[pu]);
  EXPECT_EQ(cores.size(), 8u);
  expect_ordered(v, m);
}

// Two clusters of four, numbered alternately, with one weak edge: each
// cluster in one L3 (12 x 100 x 4 + 1 x 8 = 4808).
TEST(ThreadMapping, EachClusterInOneDomain) {
  const PuDistances m = two_sockets();
  ThreadVolumes v = empty_volumes(8);
  for (size_t a = 0; a < 8; ++a)
    for (size_t b = a + 1; b < 8; ++b)
      if (a % 2 == b % 2) link(v, a, b, 100);
  link(v, 0, 1, 1);
  for (MappingAlgorithm a : {MappingAlgorithm::Hierarchical, MappingAlgorithm::Greedy}) {
    const ThreadMapping mapping = map_threads(a, v, m);
    for (size_t x = 0; x < 8; ++x)
      for (size_t y = x + 1; y < 8; ++y)
        if (x % 2 == y % 2) {
          EXPECT_EQ(m.level(mapping.pu[x], mapping.pu[y]), SharedLevel::L3);
        }
    EXPECT_DOUBLE_EQ(mapping_cost(v, m, mapping).hop_bytes, 4808) << mapping_algorithm_name(a);
  }
  // Packed puts threads 0-3 together: each cluster split in two, 2 pairs
  // in an L3 and 4 across per cluster, the weak edge inside: 2 x 100 x (2 x
  // 4 + 4 x 8) + 4.
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Packed), 8004);
  expect_ordered(v, m);
}

// A clique of 8 threads: any two groups of four cost the same, 12 edges in
// the L3s and 16 between them: 12 x 4 + 16 x 8 = 176.
TEST(ThreadMapping, CliqueFillsTwoL3s) {
  const PuDistances m = two_sockets();
  ThreadVolumes v = empty_volumes(8);
  for (size_t a = 0; a < 8; ++a)
    for (size_t b = a + 1; b < 8; ++b) link(v, a, b, 1);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Hierarchical), 176);
  EXPECT_DOUBLE_EQ(cost(v, m, MappingAlgorithm::Greedy), 176);
  expect_ordered(v, m);
}

// A 4 x 4 grid on all 16 cores and a star: the order of the costs holds.
TEST(ThreadMapping, GridAndStarKeepTheOrder) {
  const PuDistances m = two_sockets();
  ThreadVolumes grid = empty_volumes(16);
  for (size_t r = 0; r < 4; ++r) {
    for (size_t c = 0; c < 4; ++c) {
      if (c + 1 < 4) link(grid, r * 4 + c, r * 4 + c + 1, 10);
      if (r + 1 < 4) link(grid, r * 4 + c, (r + 1) * 4 + c, 10);
    }
  }
  expect_ordered(grid, m);
  // Quadrants in the L3s, side by side quadrants in one package: 16 edges
  // at 4, 4 at 8 and 4 across the packages at 32.
  EXPECT_DOUBLE_EQ(cost(grid, m, MappingAlgorithm::Hierarchical), 10.0 * (16 * 4 + 4 * 8 + 4 * 32));
  ThreadVolumes star = empty_volumes(8);
  for (size_t t = 1; t < 8; ++t) link(star, 0, t, 10);
  expect_ordered(star, m);
}

// More threads than PUs: each PU takes ceil(threads / PUs), pairs that talk
// share one.
TEST(ThreadMapping, MoreThreadsThanProcessingUnits) {
  const PuDistances m = Topology::synthetic("pack:1 l3:2 core:2 pu:1").pu_distances();
  EXPECT_EQ(placement_slots(m, 8).size(), 8u);
  ThreadVolumes v = empty_volumes(8);
  for (size_t t = 0; t < 8; t += 2) link(v, t, t + 1, 10);
  for (MappingAlgorithm a : kMappingAlgorithms) {
    const ThreadMapping mapping = map_threads(a, v, m);
    std::vector<int> per_pu(4, 0);
    for (size_t pu : mapping.pu) ++per_pu[pu];
    EXPECT_EQ(per_pu, (std::vector<int>{2, 2, 2, 2})) << mapping_algorithm_name(a);
  }
  const ThreadMapping h = map_threads(MappingAlgorithm::Hierarchical, v, m);
  for (size_t t = 0; t < 8; t += 2) EXPECT_EQ(h.pu[t], h.pu[t + 1]);
  EXPECT_DOUBLE_EQ(mapping_cost(v, m, h).hop_bytes, 0);
}

// Five threads on four PUs of two nodes: one PU takes two, none is idle,
// whatever the algorithm; the extra slot is on the first node.
TEST(ThreadMapping, ARemainderOfThreadsLeavesNoPuIdle) {
  const PuDistances m = Topology::synthetic("pack:2 numa:1 core:2 pu:1").pu_distances();
  EXPECT_EQ(placement_slots(m, 5), (std::vector<size_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(placement_slots(m, 7), (std::vector<size_t>{0, 0, 1, 1, 2, 2, 3}));
  ThreadVolumes v = empty_volumes(5);
  for (size_t t = 1; t < 5; ++t) link(v, 0, t, 100);  // main's data to every worker
  link(v, 1, 2, 10);
  link(v, 2, 3, 10);
  link(v, 3, 4, 10);
  for (MappingAlgorithm a : kMappingAlgorithms) {
    const ThreadMapping mapping = map_threads(a, v, m);
    std::vector<int> per_pu(4, 0);
    for (size_t pu : mapping.pu) ++per_pu[pu];
    EXPECT_EQ(std::count(per_pu.begin(), per_pu.end(), 0), 0) << mapping_algorithm_name(a);
  }
}

TEST(ThreadMapping, NamesRoundTrip) {
  for (MappingAlgorithm a : kMappingAlgorithms)
    EXPECT_EQ(parse_mapping_algorithm(mapping_algorithm_name(a)), a);
  EXPECT_FALSE(parse_mapping_algorithm("random").has_value());
}

}  // namespace
}  // namespace weft
