// The imbalance analysis' repeated segments in the profile: a capture in
// which segments with the counts of an earlier segment of their thread are
// logged as SegmentRepeat records gives exactly the profile tables (instances,
// per-thread busy measures, edges, memory instructions, blocks) of the same
// capture with every segment logged in full.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../support/command_runner.h"
#include "analyzers/imbalance/imbalance_records.h"
#include "analyzers/imbalance/imbalance_tables.h"
#include "profile/profile.h"
#include "profile/profile_writer.h"

namespace weft {
namespace {

constexpr uint64_t kBarrier = 0xb0;
constexpr uint64_t kBarrierPc = 0x5000;
constexpr uint64_t kJoinPc = 0x5100;
constexpr int kRounds = 8;

// Threads 1 and 2 meet kRounds times at one barrier and exit; main (0)
// creates and joins them. Segments 0..kRounds-1 of a worker end at the
// barrier, segment kRounds at its exit.
std::vector<SyncRecord> sync_log() {
  std::vector<SyncRecord> log;
  auto add = [&](uint32_t thread, SyncKind kind, uint64_t time, uint64_t pc = 0,
                 uint64_t object = 0, int64_t arg0 = 0) {
    log.push_back({.thread = thread,
                   .kind = kind,
                   .time_ns = time,
                   .pc = pc,
                   .object = object,
                   .arg0 = arg0});
  };
  add(0, SyncKind::ThreadStart, 0);
  add(0, SyncKind::ThreadCreate, 1, 0x4000, 0, 1);
  add(0, SyncKind::ThreadCreate, 2, 0x4000, 0, 2);
  add(0, SyncKind::ThreadJoin, 1000, kJoinPc, 0, 1);
  add(0, SyncKind::ThreadJoin, 1001, kJoinPc, 0, 2);
  for (uint32_t t : {1u, 2u}) {
    add(t, SyncKind::ThreadStart, 10 + t);
    for (int r = 0; r < kRounds; ++r) {
      const uint64_t time = 100 * static_cast<uint64_t>(r + 1);
      add(t, SyncKind::BarrierEnter, time + 10 * t, kBarrierPc, kBarrier);
      add(t, SyncKind::BarrierLeave, time + 50, kBarrierPc, kBarrier);
    }
    add(t, SyncKind::ThreadExit, 990 + t);
  }
  return log;
}

// The counts of a segment of kind `k`: a loop of k + 1 iterations, and a
// load that misses k times in L1.
void add_segment(uint32_t thread, uint32_t segment, int k, std::vector<SegmentEdge>& edges,
                 std::vector<SegmentInstruction>& instructions) {
  const uint64_t n = static_cast<uint64_t>(k) + 1;
  edges.push_back({thread, segment, 0, 0x1000, 1, 3});
  edges.push_back({thread, segment, 0x1000, 0x1010, n, 5});
  edges.push_back({thread, segment, 0x1010, 0x1000, n - 1, 3});
  edges.push_back({thread, segment, 0x1010, 0x1020 + 16 * thread, 1, 2});
  instructions.push_back({thread, segment, 0x1004, n, static_cast<uint64_t>(k), 1, 0});
  instructions.push_back({thread, segment, 0x1014, 2 * n, 0, 0, 0});
}

// Each worker's segment kinds, by segment: thread 1 repeats its first two
// kinds, thread 2 is the same in every round.
const std::map<uint32_t, std::vector<int>> kKinds = {
    {1, {0, 1, 0, 1, 1, 0, 0, 1, 2}},
    {2, {3, 3, 3, 3, 3, 3, 3, 3, 3}},
};

// `weights`: the memory weight of some (thread, segment) (0: not counted,
// its instruction records left out). `kind_1_branches`: a kind-1 segment
// also runs block 0x1018 once (one instruction), so that its code differs
// from a kind-0 one's.
RunCapture capture(bool with_repeats,
                   const std::map<std::pair<uint32_t, uint32_t>, uint32_t>& weights = {},
                   bool kind_1_branches = false) {
  RunCapture c;
  c.complete = true;
  c.max_threads = 3;
  c.analyses = {AnalysisId::Communication, AnalysisId::Imbalance};
  c.threads = {{.id = 0, .parent = -1}, {.id = 1, .parent = 0}, {.id = 2, .parent = 0}};
  c.sync = sync_log();
  std::vector<SegmentEdge> edges;
  std::vector<SegmentInstruction> instructions;
  std::vector<SegmentRepeat> repeats;
  // Thread 2 first: the builder must not rely on the logs' order.
  for (uint32_t thread : {2u, 1u}) {
    std::map<int, uint32_t> first_of_kind;
    const std::vector<int>& kinds = kKinds.at(thread);
    for (uint32_t segment = 0; segment < kinds.size(); ++segment) {
      auto [first, fresh] = first_of_kind.try_emplace(kinds[segment], segment);
      if (with_repeats && !fresh)
        repeats.insert(repeats.begin(), SegmentRepeat{thread, segment, first->second});
      else
        add_segment(thread, segment, kinds[segment], edges, instructions);
      if (kind_1_branches && kinds[segment] == 1)
        edges.push_back({thread, segment, 0x1010, 0x1018, 1, 1});
    }
  }
  std::vector<SegmentMemoryWeight> weight_records;
  for (const auto& [at, weight] : weights) {
    const auto [thread, segment] = at;
    if (weight == 0)
      std::erase_if(instructions, [&](const SegmentInstruction& r) {
        return r.thread == thread && r.segment == segment;
      });
    weight_records.push_back({thread, segment, weight});
  }
  if (!weights.empty()) c.set_records(kSegmentMemoryWeights, weight_records);
  c.set_records(kSegmentEdges, edges);
  c.set_records(kSegmentInstructions, instructions);
  if (with_repeats) c.set_records(kSegmentRepeats, repeats);
  return c;
}

using ThreadRow = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, double>;
using InstanceRow = std::tuple<int64_t, int64_t, int64_t, double, std::vector<ThreadRow>>;
using EdgeRow = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>;
using InstructionRow = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>;

// Everything the imbalance findings read from a profile.
struct ImbalanceTables {
  std::vector<InstanceRow> instances;
  std::map<int64_t, std::vector<EdgeRow>> edges;
  std::map<int64_t, std::vector<InstructionRow>> instructions;
  std::map<uint64_t, uint64_t> decisions;
};

ImbalanceTables read_tables(const std::string& path) {
  const Profile profile = Profile::open(path);
  ImbalanceTables out;
  for (const SectionInstanceInfo& i : section_instances(profile)) {
    std::vector<ThreadRow> threads;
    for (const InstanceThreadBusy& t : i.threads)
      threads.emplace_back(t.thread, t.start_ns, t.end_ns, t.wall_ns, t.instructions, t.l1_misses,
                           t.l2_misses, t.llc_misses, t.modeled_cycles);
    out.instances.emplace_back(i.id, i.region_id, i.instance, i.imbalance, threads);
    for (const InstanceEdgeCount& e : instance_edges(profile, i.id))
      out.edges[i.id].emplace_back(e.thread, e.from, e.to, e.count);
    for (const InstanceInstructionCount& r : instance_instructions(profile, i.id))
      out.instructions[i.id].emplace_back(r.thread, r.pc, r.executions, r.l1_misses, r.l2_misses,
                                          r.llc_misses);
  }
  out.decisions = block_decisions(profile);
  return out;
}

TEST(ImbalanceRepeats, GiveTheTablesOfFullSegments) {
  weft_test::TempDir dir("weft-test-repeats");
  RunInfo info;
  info.command = "/bin/app";
  const std::string full = dir.path / "full.weft", repeated = dir.path / "repeated.weft";
  build_profile(capture(false), info, full);
  build_profile(capture(true), info, repeated);
  const ImbalanceTables expected = read_tables(full);
  const ImbalanceTables got = read_tables(repeated);

  // kRounds barrier instances and the joined exits.
  ASSERT_EQ(expected.instances.size(), static_cast<size_t>(kRounds) + 1);
  EXPECT_EQ(got.instances, expected.instances);
  EXPECT_EQ(got.edges, expected.edges);
  EXPECT_EQ(got.instructions, expected.instructions);
  EXPECT_EQ(got.decisions, expected.decisions);

  // Instance 5 (round 4): thread 1's segment 4 repeats segment 1 (kind 1),
  // thread 2's repeats segment 0 (kind 3): each has its own full counts.
  const std::vector<EdgeRow> round4 = got.edges.at(5);
  EXPECT_EQ(round4, (std::vector<EdgeRow>{{1, 0, 0x1000, 1},
                                          {2, 0, 0x1000, 1},
                                          {1, 0x1000, 0x1010, 2},
                                          {2, 0x1000, 0x1010, 4},
                                          {1, 0x1010, 0x1000, 1},
                                          {2, 0x1010, 0x1000, 3},
                                          {1, 0x1010, 0x1030, 1},
                                          {2, 0x1010, 0x1040, 1}}));
  const std::vector<ThreadRow>& busy = std::get<4>(got.instances[4]);
  ASSERT_EQ(busy.size(), 2u);
  // Instructions: 1 * 3 + n * 5 + (n - 1) * 3 + 1 * 2 = 8n + 2, n = k + 1.
  EXPECT_EQ(std::get<4>(busy[0]), 8u * 2 + 2);
  EXPECT_EQ(std::get<4>(busy[1]), 8u * 4 + 2);
  EXPECT_EQ(std::get<5>(busy[0]), 1u);  // L1 misses: k
  EXPECT_EQ(std::get<5>(busy[1]), 3u);
}

// Sampled section instances: an instance with a segment whose memory
// instructions were not counted has memory weight 0; one the sample selected
// stands for N. An unmeasured instance's edges and instructions are exact, it
// has no instance_instructions, and its threads' misses are their
// instructions at the thread's miss rates in the section's nearest measured
// instance that ran the same blocks, before it when there is one; the
// control-flow totals (hot loops' block counts) come from the measured
// instances alone.
TEST(ImbalanceRepeats, UnmeasuredInstancesTakeTheMissRatesOfTheNearestOneRunningTheSameCode) {
  weft_test::TempDir dir("weft-test-unmeasured");
  RunInfo info;
  info.command = "/bin/app";
  const std::string full = dir.path / "full.weft", sampled = dir.path / "sampled.weft";
  build_profile(capture(false, {}, true), info, full);
  // Rounds 0, 4 and 5 of both workers (instances 1, 5, 6) and round 6 of
  // thread 2 only (instance 7) are not counted; round 3 (instance 4) stands
  // for 8.
  build_profile(capture(false,
                        {{{1, 0}, 0},
                         {{2, 0}, 0},
                         {{1, 4}, 0},
                         {{2, 4}, 0},
                         {{1, 5}, 0},
                         {{2, 5}, 0},
                         {{2, 6}, 0},
                         {{1, 3}, 8},
                         {{2, 3}, 8}},
                        true),
                info, sampled);
  const ImbalanceTables exact = read_tables(full);
  const ImbalanceTables got = read_tables(sampled);
  const Profile profile = Profile::open(sampled);
  std::vector<uint32_t> weights;
  for (const SectionInstanceInfo& i : section_instances(profile))
    weights.push_back(i.memory_weight);
  EXPECT_EQ(weights, (std::vector<uint32_t>{0, 1, 1, 8, 0, 0, 0, 1, 1}));

  EXPECT_EQ(got.edges, exact.edges);
  for (int64_t id : {1, 5, 6, 7}) EXPECT_FALSE(got.instructions.contains(id)) << id;
  for (int64_t id : {2, 3, 4, 8, 9}) EXPECT_EQ(got.instructions.at(id), exact.instructions.at(id));

  // Thread 1's rounds are of kinds 0, 1, 0, 1, 1, 0, 0, 1; kind 0 runs 10
  // instructions with 0 L1 and 1 L2 miss, kind 1 19 (with block 0x1018)
  // with 1 and 1. Round 2 is the nearest measured kind-0 round of rounds 0
  // (after it), 5 and 6 (before them), round 3 the nearest kind-1 round
  // before round 4: every estimate is the true count. At the rates of the
  // nearest measured round whatever its code, round 5 would take round 3's
  // (10 / 19 = 0.53 -> 1 L1 miss, against the true 0). Thread 2 is of kind
  // 3 in every round (34 instructions, 3 L1, 1 L2).
  auto thread_row = [&](size_t instance, size_t k) {
    return std::get<4>(got.instances[instance])[k];
  };
  auto expect_row = [&](const ThreadRow& row, uint32_t thread, uint64_t instructions, uint64_t l1,
                        uint64_t l2) {
    EXPECT_EQ(std::get<0>(row), thread);
    EXPECT_EQ(std::get<4>(row), instructions);
    EXPECT_EQ(std::get<5>(row), l1);
    EXPECT_EQ(std::get<6>(row), l2);
    EXPECT_EQ(std::get<7>(row), 0u);
    EXPECT_DOUBLE_EQ(std::get<8>(row), static_cast<double>(instructions) +
                                           info.miss_penalties[0] * static_cast<double>(l1) +
                                           info.miss_penalties[1] * static_cast<double>(l2));
  };
  expect_row(thread_row(0, 0), 1, 10, 0, 1);
  expect_row(thread_row(0, 1), 2, 34, 3, 1);
  expect_row(thread_row(4, 0), 1, 19, 1, 1);
  expect_row(thread_row(5, 0), 1, 10, 0, 1);
  expect_row(thread_row(6, 0), 1, 10, 0, 1);
  expect_row(thread_row(6, 1), 2, 34, 3, 1);
  // A measured instance keeps its counts.
  EXPECT_EQ(got.instances[2], exact.instances[2]);

  // Control-flow totals: the measured instances' edges and executions only.
  // Edge 0x1010 -> 0x1000 runs k times per segment: instances 1 (k = 0 and
  // 3), 5 (1, 3), 6 (0, 3) and 7 (0, 3) are left out; instruction 0x1004
  // runs k + 1 times.
  auto loop_back = [](const Profile& p) {
    for (const EdgeTotal& e : edge_totals(p))
      if (e.from == 0x1010 && e.to == 0x1000) return e.count;
    return uint64_t{0};
  };
  const Profile all = Profile::open(full);
  EXPECT_EQ(loop_back(profile), loop_back(all) - 13);
  EXPECT_EQ(instruction_executions(profile).at(0x1004),
            instruction_executions(all).at(0x1004) - 21);
}

}  // namespace
}  // namespace weft
