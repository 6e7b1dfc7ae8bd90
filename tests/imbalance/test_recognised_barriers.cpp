// Parallel sections found without annotation at hand-written barriers
// (docs/metrics.md, "Parallel section" and "Spin waits"): SPLASH-2 style
// counter barriers (a mutex, a condition variable, a counter):
// examples/lu_counter_barrier_pthreads.c (generation loop, the main thread in
// the team) and ocean_sweep_pthreads.c (a single wait, the main thread
// joining); a sense-reversing spin barrier (md_cells_spin_barrier_pthreads.c)
// and the same barrier with neighbour spin flags inside the section
// (ssor_pipeline_flags_pthreads.c); a spin-then-block barrier
// (streamcluster_hybrid_barrier_pthreads.c, PARSEC's);
// recorded with the compile-time
// source (gcc and clang, -O1 and -O2) and the binary source (plain gcc -O1
// and clang -O2 builds). `weft imbalance --format json` must give the section at the
// line marked `weft:section` with its exact number of instances, every
// member of the team in it, and as top cause the owner test (the line
// marked `weft:top-cause`, the caller's `if`, under both sources, although
// the condition calls a non-inlined function). A mutex + condvar queue
// (queue_condvar_pthreads.c) must give no section but the create->join span,
// and `weft record` warns.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/example_source.h"
#include "support/recorded_imbalance.h"

namespace fs = std::filesystem;
using nlohmann::json;
using weft_test::run_command;
using weft_test::TempDir;

namespace {

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
using weft_test::record_imbalance;

int marker_line(const std::string& example, const std::string& marker) {
  return weft_test::marker_line(fs::path(WEFT_EXAMPLES_SOURCE_DIR) / (example + ".c"), marker);
}

struct BarrierCase {
  std::string example;
  std::string build;
  std::string backend;
  int instances;
  std::vector<int> team;  // weft thread ids, by decreasing work
  double min_imbalance;   // every worker also visits every point or block
};

std::string name_of(const BarrierCase& c) {
  return weft_test::test_name(c.example + "_" + c.build + "_" + c.backend);
}

std::vector<BarrierCase> all_cases() {
  struct Example {
    std::string name;
    int instances;
    std::vector<int> team;
    double min_imbalance;
  };
  const std::vector<Example> examples = {
      // 11 steps; processes 0..3 are weft threads 0..3 (main is process 0).
      // Updates per process: 214, 76, 146, 70 in all.
      {"lu_counter_barrier_pthreads", 11, {0, 2, 1, 3}, 0.3},
      // 10 sweeps; workers 0..3 are weft threads 1..4 (main joins).
      // Points per worker and sweep: 896, 640, 448, 320.
      {"ocean_sweep_pthreads", 10, {1, 2, 3, 4}, 0.1},
      // 12 steps, the first teaching the flag: 11. Cells owned by threads
      // 0..3: 19, 6, 13, 26.
      {"md_cells_spin_barrier_pthreads", 11, {3, 0, 2, 1}, 0.25},
      // 8 time steps, the first teaching the barrier's flag: 7; the
      // neighbour flags are point-to-point waits inside the section. Thread
      // 2 corrects 8 rows per plane, the others 2.
      {"ssor_pipeline_flags_pthreads", 7, {2, 0, 1, 3}, 0.3},
      // 10 iterations between spin-then-block barriers, the first teaching
      // the flag whether its waiters blocked or not: 9. Exact-distance points per worker and
      // iteration: 64, 384, 128,
      // 192 (workers 0..3 are weft threads 1..4).
      {"streamcluster_hybrid_barrier_pthreads", 9, {2, 4, 3, 1}, 0.3},
  };
  std::vector<BarrierCase> cases;
  for (const Example& e : examples) {
    for (const weft_test::ExampleBuild& b : weft_test::example_builds()) {
      cases.push_back({e.name, b.build, b.backend, e.instances, e.team, e.min_imbalance});
    }
  }
  return cases;
}

class RecognisedBarrier : public ::testing::TestWithParam<BarrierCase> {};

TEST_P(RecognisedBarrier, GivesTheSectionWithoutAnnotation) {
  const BarrierCase& c = GetParam();
  TempDir dir;
  const auto [profile, rec, view] = record_imbalance(
      dir, c.backend, std::string(WEFT_EXAMPLES_DIR) + "/" + c.example + "." + c.build);
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(rec.err.find("warning"), std::string::npos) << rec.err;
  ASSERT_EQ(view.code, 0) << view.err;
  const json out = json::parse(view.out);
  EXPECT_EQ(out["no_barrier_recognised"], false) << view.out;
  ASSERT_FALSE(out["sections"].empty()) << view.out;
  const std::string section =
      c.example + ".c:" + std::to_string(marker_line(c.example, "weft:section"));
  const json& top_section = out["sections"][0];
  EXPECT_EQ(top_section["location"], section) << view.out;
  EXPECT_EQ(top_section["instances"], c.instances) << view.out;
  EXPECT_GT(top_section["imbalance"].get<double>(), c.min_imbalance);
  // Every member of the team, and the most loaded one the busiest.
  const json& threads = top_section["threads"];
  ASSERT_EQ(threads.size(), c.team.size()) << view.out;
  std::vector<int> members;
  double most = 0, of_most_loaded = 0;
  for (const json& t : threads) {
    members.push_back(t["thread"].get<int>());
    most = std::max(most, t["busy"].get<double>());
    if (t["thread"] == c.team[0]) of_most_loaded = t["busy"].get<double>();
  }
  std::vector<int> team = c.team;
  std::sort(team.begin(), team.end());
  EXPECT_EQ(members, team) << view.out;
  EXPECT_EQ(of_most_loaded, most) << view.out;
  const json& causes = top_section["causes"];
  ASSERT_FALSE(causes.empty()) << view.out;
  // The owner test, at the caller's branch (not in owner()).
  EXPECT_EQ(causes[0]["line"], marker_line(c.example, "weft:top-cause")) << causes[0].dump();
  EXPECT_EQ(causes[0]["kind"], "control-flow") << causes[0].dump();
  EXPECT_EQ(fs::path(causes[0]["file"].get<std::string>()).filename(), c.example + ".c");
  // A clear cause: the runner-up explains at most half as much.
  if (causes.size() > 1) {
    EXPECT_LE(causes[1]["score"].get<double>(), 0.5 * causes[0]["score"].get<double>()) << view.out;
  }
  // No other section at the barrier's line: one section per barrier.
  int at_barrier = 0;
  for (const json& s : out["sections"]) at_barrier += s["location"] == section ? 1 : 0;
  EXPECT_EQ(at_barrier, 1);
}

INSTANTIATE_TEST_SUITE_P(Examples, RecognisedBarrier, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return name_of(info.param); });

// A bounded queue with two condition variables is no barrier: under both
// sources, no section but the create->join span, and a warning that names
// the busiest synchronization sites and how to mark a barrier.
class CondQueue : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(CondQueue, GivesNoBarrierSection) {
  const auto& [build, backend] = GetParam();
  for (const char* args : {"", " 1 1", " 3 2"}) {
    TempDir dir;
    const auto [profile, rec, view] = record_imbalance(
        dir, backend, std::string(WEFT_EXAMPLES_DIR) + "/queue_condvar_pthreads." + build + args);
    ASSERT_EQ(rec.code, 0) << rec.err;
    EXPECT_NE(rec.err.find("weft: warning: "), std::string::npos) << rec.err;
    EXPECT_NE(rec.err.find("queue_condvar_pthreads.c:"), std::string::npos) << rec.err;
    EXPECT_NE(rec.err.find("WEFT_SECTION_END"), std::string::npos) << rec.err;
    ASSERT_EQ(view.code, 0) << view.err;
    const json out = json::parse(view.out);
    for (const json& s : out["sections"]) EXPECT_EQ(s["instances"], 1) << args << ": " << view.out;
    EXPECT_LE(out["sections"].size(), 1u) << args << ": " << view.out;
    // The views say so too, and how to mark a barrier.
    EXPECT_EQ(out["no_barrier_recognised"], true) << args << ": " << view.out;
    const auto table = run_command(kWeft + " imbalance " + profile, dir.path);
    EXPECT_NE(table.out.find("no barrier weft recognises"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("WEFT_SECTION_END"), std::string::npos) << table.out;
    // Nor any communication section but the thread exits'.
    auto regions = run_command(kWeft + " comm --format json " + profile, dir.path);
    ASSERT_EQ(regions.code, 0) << regions.err;
    EXPECT_EQ(regions.out.find("section@queue_condvar_pthreads.c"), std::string::npos)
        << args << ": " << regions.out.substr(0, 2000);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Builds, CondQueue,
    ::testing::Values(std::pair<std::string, std::string>{"gcc.O1", "compile"},
                      std::pair<std::string, std::string>{"clang.O2", "compile"},
                      std::pair<std::string, std::string>{"plain.gcc.O1", "valgrind"}),
    [](const auto& info) {
      return weft_test::test_name(info.param.first + "_" + info.param.second);
    });

// Threads that never lock or wait (one thread per tile, created and joined
// in waves) have no barrier to mark: a note that each thread's work is one
// section, not the warning that names synchronization sites.
TEST(CreateJoinOnly, NotesOneSectionPerThreadWithoutWarning) {
  TempDir dir;
  const auto [profile, rec, view] = record_imbalance(
      dir, "compile", std::string(WEFT_EXAMPLES_DIR) + "/tile_tasks_pthreads.gcc.O1 2 4 16");
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(rec.err.find("warning"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("weft: note: the 5 threads synchronize only where they are created and "
                         "joined"),
            std::string::npos)
      << rec.err;
  EXPECT_EQ(rec.err.find("WEFT_SECTION_END"), std::string::npos) << rec.err;
}

// pipeline_pthreads.c steps with a pthread barrier and has no condvar:
// its sections stay those of the barrier (K + T - 1 = 19 steps by default).
TEST(CondBarrierPipeline, KeepsOnlyItsPthreadBarrier) {
  TempDir dir;
  const auto [profile, rec, view] = record_imbalance(
      dir, "compile", std::string(WEFT_EXAMPLES_DIR) + "/pipeline_pthreads.gcc.O1");
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(rec.err.find("warning"), std::string::npos) << rec.err;
  ASSERT_EQ(view.code, 0) << view.err;
  const json out = json::parse(view.out);
  EXPECT_EQ(out["no_barrier_recognised"], false) << view.out;
  // The barrier's section, and at most the create->join span besides.
  const std::string barrier =
      "pipeline_pthreads.c:" +
      std::to_string(marker_line("pipeline_pthreads", "pthread_barrier_wait(&barrier);"));
  ASSERT_LE(out["sections"].size(), 2u) << view.out;
  int barrier_sections = 0;
  for (const json& s : out["sections"]) {
    if (s["location"] == barrier) {
      ++barrier_sections;
      EXPECT_EQ(s["instances"], 19) << view.out;
    } else {
      EXPECT_EQ(s["instances"], 1) << view.out;
    }
  }
  EXPECT_EQ(barrier_sections, 1) << view.out;
}

}  // namespace
