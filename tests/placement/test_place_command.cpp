// `weft place` end to end: a recorded ring of 8 threads mapped onto a
// synthetic two-socket machine (the algorithms' costs, the levels the
// volume stays in, the CSV), a pinned launch whose threads report exactly
// the CPUs the plan gave them, and one-line errors.
#include <gtest/gtest.h>
#include <sched.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/command_runner.h"
#include "support/example_source.h"

namespace {

using nlohmann::json;
using weft_test::CommandResult;
using weft_test::run_command;
using weft_test::TempDir;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kPthreads = WEFT_PLACEMENT_PRINT_AFFINITY_PTHREADS_GCC;
const std::string kTwoSockets = "--synthetic 'pack:2 l3:2 core:4 pu:2'";

std::string record_ring(const TempDir& dir, int threads) {
  const std::string profile = (dir.path / ("ring" + std::to_string(threads) + ".db")).string();
  const CommandResult r =
      run_command(kWeft + " record --analyses comm -o " + profile + " -- " + WEFT_EXAMPLES_DIR +
                      "/ring_pthreads.gcc.O2 " + std::to_string(threads) + " 1024 20",
                  dir.path);
  EXPECT_EQ(r.code, 0) << r.err;
  return profile;
}

// Each ring edge carries the same volume, so on two L3s of four cores the
// best mappings keep 6 of 8 edges in an L3 and cut 2 inside the package;
// scatter alternates the packages, so every edge crosses them.
TEST(PlaceCommand, RingOnTwoSocketsKeepsThreeQuartersInAnL3) {
  TempDir dir;
  const std::string profile = record_ring(dir, 8);
  const CommandResult r = run_command(
      kWeft + " place --print --format json --profile " + profile + " " + kTwoSockets, dir.path);
  ASSERT_EQ(r.code, 0) << r.err;
  const json place = json::parse(r.out);
  EXPECT_EQ(place["threads"], 8);
  EXPECT_EQ(place["chosen"], "hierarchical");
  std::map<std::string, json> by_name;
  for (const json& m : place["mappings"]) by_name[m["algorithm"]] = m;
  const json& hierarchical = by_name["hierarchical"];
  const json& greedy = by_name["greedy"];
  const json& scatter = by_name["scatter"];
  EXPECT_LE(hierarchical["hop_bytes"].get<double>(), greedy["hop_bytes"].get<double>());
  EXPECT_LE(greedy["hop_bytes"].get<double>(), scatter["hop_bytes"].get<double>());
  // The ring's edges carry 2560 events each, main's two 2561 (it also reads
  // one line from each other thread at the end: 1 more from threads 1 and 7,
  // 1 from each of 2-6): 20487 in all.
  EXPECT_EQ(place["volume"], 20487);
  // Two arcs of four, main's among them: 7682 + 7680 in the L3s and main's
  // line from the thread of its arc, 2 x 2560 between the L3s:
  // 4 x 15363 + 8 x 5120 + 8 x 4 (main's lines from the other arc).
  EXPECT_EQ(hierarchical["traffic"]["l3"], 15363);
  EXPECT_EQ(hierarchical["hop_bytes"], 102444);
  // Scatter alternates the packages: every edge crosses them but main's
  // lines from threads 2, 4 and 6 (the other L3 of its package, its L3,
  // the other L3 again): 32 x 20484 + 8 + 4 + 8.
  EXPECT_EQ(scatter["traffic"]["machine"], 20484);
  EXPECT_EQ(scatter["hop_bytes"], 655508);
  EXPECT_DOUBLE_EQ(hierarchical["reduction_vs_scatter"].get<double>(), 1.0 - 102444.0 / 655508.0);
  // One thread per core (PUs 2k and 2k + 1 are SMT siblings here).
  std::set<unsigned> cores;
  for (const json& cpu : hierarchical["cpus"]) cores.insert(cpu.get<unsigned>() / 2);
  EXPECT_EQ(cores.size(), 8u);

  const CommandResult csv = run_command(
      kWeft + " place --print --format csv --profile " + profile + " " + kTwoSockets, dir.path);
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::string expected = "thread,cpu\n";
  for (size_t t = 0; t < 8; ++t)
    expected +=
        std::to_string(t) + "," + std::to_string(hierarchical["cpus"][t].get<unsigned>()) + "\n";
  EXPECT_EQ(csv.out, expected);
}

// The launch: the program's threads, in creation order, run on the CPUs of
// the plan `weft place` announces (a machine of two cores whose PU numbers
// exist here).
TEST(PlaceCommand, LaunchPinsEachThreadToItsPlannedCpu) {
  cpu_set_t own;
  CPU_ZERO(&own);
  sched_getaffinity(0, sizeof own, &own);
  if (!CPU_ISSET(0, &own) || !CPU_ISSET(1, &own)) GTEST_SKIP() << "needs CPUs 0 and 1";
  TempDir dir;
  const std::string profile = record_ring(dir, 2);
  const CommandResult r = run_command(
      kWeft + " place --profile " + profile + " --synthetic 'core:2 pu:1' -- " + kPthreads + " 1",
      dir.path);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string announced =
      "weft place: hierarchical mapping, threads in creation order on "
      "CPUs ";
  const size_t at = r.err.find(announced);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string plan = r.err.substr(at + announced.size(), 3);  // "a;b"
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_NE(plan[0], plan[2]);
  EXPECT_EQ(r.out, std::string("thread 1 cpus ") + plan[2] + "\nthread 0 cpus " + plan[0] + "\n");
  // Another program than the profiled one: its thread 1 starts elsewhere.
  EXPECT_NE(r.err.find("weft place: thread 1 starts at print_affinity_pthreads.gcc:0x"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the profiled thread 1 at ring_pthreads.gcc.O2:0x"), std::string::npos)
      << r.err;
}

// The profiled program in another build (plain gcc -O1, not weft-cc): the
// start routine is found by name in it, so no warning.
TEST(PlaceCommand, AnotherBuildOfTheProfiledProgramStartsTheSameThreads) {
  TempDir dir;
  const std::string profile = record_ring(dir, 4);
  const CommandResult r =
      run_command(kWeft + " place --profile " + profile + " --synthetic 'core:2 pu:1' -- " +
                      WEFT_EXAMPLES_DIR + "/ring_pthreads.plain.gcc.O1 4 1024 20",
                  dir.path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("creates its threads otherwise"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("was not in the mapping"), std::string::npos) << r.err;
  // OpenMP: libgomp's workers start in libgomp, the same file in both runs.
  const std::string omp = (dir.path / "ring_omp.db").string();
  ASSERT_EQ(run_command(kWeft + " record --analyses comm -o " + omp + " -- " + WEFT_EXAMPLES_DIR +
                            "/ring_omp.gcc.O2",
                        dir.path)
                .code,
            0);
  const CommandResult o =
      run_command(kWeft + " place --profile " + omp + " --synthetic 'core:2 pu:1' -- " +
                      WEFT_EXAMPLES_DIR + "/ring_omp.plain.gcc.O1",
                  dir.path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err.find("creates its threads otherwise"), std::string::npos) << o.err;
}

// `weft topo` lists the levels two sockets' PUs share.
TEST(PlaceCommand, TopoShowsTheSharedLevels) {
  TempDir dir;
  const CommandResult r =
      run_command(kWeft + " topo --synthetic 'pack:2 l3:1 core:2 pu:2'", dir.path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("PU pairs by the deepest level they share (weft place): 4 core (distance "
                       "1), 8 l3 (distance 4), 16 machine (distance 32)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n    0       -    core      l3      l3 machine machine machine "
                       "machine\n"),
            std::string::npos)
      << r.out;
}

TEST(PlaceCommand, ErrorsAreOneLine) {
  TempDir dir;
  auto expect_error = [&](const std::string& args, const std::string& cause) {
    const CommandResult r = run_command(kWeft + " place " + args, dir.path);
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_NE(r.err.find(cause), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_error("--print --profile missing.db", "missing.db");
  const std::string profile = record_ring(dir, 2);
  expect_error("--profile " + profile, "nothing to run");
  expect_error("--print --profile " + profile + " -- /bin/true", "--print runs nothing");
  expect_error("--print --profile " + profile + " --algorithm random", "--algorithm");
  expect_error("--print --profile " + profile + " --synthetic 'pack:x'", "topology");
  expect_error("--print --profile " + profile + " --level-distances l9=1", "unknown level 'l9'");
  expect_error("--print --profile " + profile + " --topology a.xml --synthetic 'core:2'",
               "exclude each other");
}

// Data placement (docs/metrics.md): the ocean example's grids, initialised
// by the main thread, on a two-node machine. The count of misplaced pages
// is derived in the example's header: in each grid, 256 per worker off
// thread 0's node, one more when worker 4 is off it.
const std::string kOcean = std::string(WEFT_EXAMPLES_DIR) + "/ocean_first_touch_pthreads.gcc.O2";
const std::string kOceanSource =
    std::string(WEFT_EXAMPLES_SOURCE_DIR) + "/ocean_first_touch_pthreads.c";
const std::string kTwoNodes = "--synthetic 'pack:2 numa:1 core:2 pu:1'";

json ocean_data_placement(const TempDir& dir, const std::string& mode,
                          const std::string& analyses = "comm,pages",
                          const std::string& build = kOcean) {
  const std::string profile = (dir.path / ("ocean-" + mode + ".db")).string();
  const CommandResult rec = run_command(
      kWeft + " record --analyses " + analyses + " -o " + profile + " -- " + build + " " + mode,
      dir.path);
  EXPECT_EQ(rec.code, 0) << rec.err;
  const CommandResult r = run_command(
      kWeft + " place --print --format json --profile " + profile + " " + kTwoNodes, dir.path);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out)["data_placement"];
}

class DataPlacement : public ::testing::TestWithParam<std::string> {};

TEST_P(DataPlacement, GridsTheMainThreadInitialisedAreFoundOnTwoNodes) {
  TempDir dir;
  const json d = ocean_data_placement(
      dir, "serial", "comm,pages",
      std::string(WEFT_EXAMPLES_DIR) + "/ocean_first_touch_pthreads." + GetParam());
  ASSERT_TRUE(d["recorded"].get<bool>());
  EXPECT_EQ(d["numa_nodes"], 2);
  const std::vector<unsigned> node = d["thread_node"].get<std::vector<unsigned>>();
  ASSERT_EQ(node.size(), 5u);
  unsigned off_node = 0;
  for (size_t w = 1; w <= 4; ++w) off_node += node[w] != node[0];
  ASSERT_GT(off_node, 0u) << "5 threads on 4 slots of two nodes: one node cannot hold all";
  const int cur_line = weft_test::marker_line(kOceanSource, "weft:alloc-cur");
  const int next_line = weft_test::marker_line(kOceanSource, "weft:alloc-next");
  const int init_line = weft_test::marker_line(kOceanSource, "weft:serial-init");
  const int init_next_line = weft_test::marker_line(kOceanSource, "weft:serial-init-next");
  ASSERT_EQ(d["items"].size(), 2u) << d.dump(2);
  std::map<int, json> by_line;
  for (const json& item : d["items"]) {
    const std::string object = item["object"];
    EXPECT_EQ(item["kind"], "heap");
    EXPECT_EQ(item["first_writer"], 0);
    EXPECT_EQ(item["fix"].get<std::string>().rfind("initialise this allocation in parallel", 0), 0u)
        << item["fix"];
    EXPECT_GE(item["main_node_share"].get<double>(), 0.75);
    EXPECT_LT(item["writer_use_share"].get<double>(), 0.25);
    EXPECT_EQ(item["pages"], 1025);
    for (int line : {cur_line, next_line})
      if (object.find("ocean_first_touch_pthreads.c:" + std::to_string(line)) != std::string::npos)
        by_line[line] = item;
  }
  ASSERT_EQ(by_line.size(), 2u) << d.dump(2);
  EXPECT_EQ(by_line[cur_line]["first_write"].get<std::string>().rfind(
                "ocean_first_touch_pthreads.c:" + std::to_string(init_line) + " init_rows", 0),
            0u)
      << by_line[cur_line]["first_write"];
  EXPECT_EQ(by_line[next_line]["first_write"].get<std::string>().rfind(
                "ocean_first_touch_pthreads.c:" + std::to_string(init_next_line) + " init_rows", 0),
            0u)
      << by_line[next_line]["first_write"];
  for (int line : {cur_line, next_line})
    EXPECT_EQ(by_line[line]["misplaced_pages"], 256 * off_node + (node[4] != node[0])) << line;
  // The workers off thread 0's node make nearly all of their band's accesses.
  for (const json& item : d["items"]) {
    const std::vector<unsigned> users = item["users"].get<std::vector<unsigned>>();
    ASSERT_GE(users.size(), off_node);
    for (size_t i = 0; i < off_node; ++i) EXPECT_NE(node[users[i]], node[0]) << users[i];
  }
}

TEST_P(DataPlacement, GridsEachWorkerInitialisedHaveNoFinding) {
  TempDir dir;
  const json d = ocean_data_placement(
      dir, "parallel", "comm,pages",
      std::string(WEFT_EXAMPLES_DIR) + "/ocean_first_touch_pthreads." + GetParam());
  ASSERT_TRUE(d["recorded"].get<bool>());
  EXPECT_EQ(d["items"].size(), 0u) << d.dump(2);
  // Most accesses stay on their page's node; the band edges are all that
  // a better placement would fix.
  EXPECT_LT(d["remote"].get<double>(), 0.01 * d["accesses"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Builds, DataPlacement, ::testing::Values("gcc.O2", "clang.O1"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

TEST(DataPlacementViews, OneNodeAndAProfileWithoutPagesSaySo) {
  TempDir dir;
  const json none = ocean_data_placement(dir, "serial", "comm");
  EXPECT_FALSE(none["recorded"].get<bool>());
  EXPECT_EQ(none["items"].size(), 0u);
  const std::string profile = (dir.path / "ocean-serial.db").string();
  const CommandResult text =
      run_command(kWeft + " place --print --profile " + profile + " " + kTwoNodes, dir.path);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Data placement under the hierarchical mapping: not recorded"),
            std::string::npos)
      << text.out;
  const json one = ocean_data_placement(dir, "serial");
  const CommandResult single = run_command(
      kWeft + " place --print --profile " + profile + " --synthetic 'pack:1 core:4 pu:1'",
      dir.path);
  ASSERT_EQ(single.code, 0) << single.err;
  EXPECT_NE(single.out.find("one NUMA node, where pages sit does not matter"), std::string::npos)
      << single.out;
  EXPECT_EQ(one["items"].size(), 2u);
  // --explain: the same table on stderr before the program runs; stdout is
  // the program's.
  const CommandResult explained = run_command(
      kWeft + " place --explain --profile " + profile + " " + kTwoNodes + " -- /bin/echo ran",
      dir.path);
  ASSERT_EQ(explained.code, 0) << explained.err;
  EXPECT_EQ(explained.out, "ran\n");
  EXPECT_NE(explained.err.find("Thread placement of the whole program"), std::string::npos);
  EXPECT_NE(explained.err.find("initialise this allocation in parallel"), std::string::npos)
      << explained.err;
}

}  // namespace
