// Sampled section instances in the imbalance analysis (docs/metrics.md,
// "Sampled section instances"): examples/sparse_steps_pthreads.c (40 time
// steps of a sparse product behind a mutex-and-condvar barrier; worker 0's
// loads miss, the others' hit) recorded with every build and both sources,
// once whole (a short run: nothing is sampled) and once sampled from the
// first block (WEFT_SAMPLING_AFTER_BLOCKS=0). Both must conclude the same:
//   - the section at the barrier call (`weft:section`), 40 instances;
//   - the top cause the `x[col[k]]` load (`weft:top-cause`), a cache-miss
//     cause, ahead of the runner-up by at least two to one;
//   - the same imbalance and lost time within 2% (the unmeasured instances'
//     misses are estimated at the nearest measured instance's rates);
// and the sampled run must say it is sampled: exactly 13 instances with
// their memory counted (instances 0-8: the thread's first segment and the
// ones after passes 0-7, before the sample's aligned start; then one of
// each block of 8 passes, 8-15 to 32-39, the one a hash of the block
// picks, none of them the last pass's, whose segment is the thread's
// exit: the decisions depend on the barrier's pass count alone, so every
// build and source agrees), 4 x 27 + 4 unmeasured segments (4 x 24 run with
// communication alone by the compile-time hooks), the note in
// the text view and the rate in the report's JSON. Then a cause that
// changes during the run (PhaseChange, below).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/command_runner.h"
#include "support/example_source.h"
#include "support/recorded_imbalance.h"

namespace fs = std::filesystem;
using nlohmann::json;
using weft_test::run_command;
using weft_test::TempDir;

namespace {

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kExample = "sparse_steps_pthreads";

int marker_line(const std::string& marker) {
  return weft_test::marker_line(fs::path(WEFT_EXAMPLES_SOURCE_DIR) / (kExample + ".c"), marker);
}

class SampledImbalance : public ::testing::TestWithParam<weft_test::ExampleBuild> {
 protected:
  // Records the example into dir/NAME.db (with `env` before weft) and
  // returns its first section of `weft imbalance --format json`.
  json first_section(const TempDir& dir, const std::string& name, const std::string& env,
                     std::string& profile) {
    profile = (dir.path / (name + ".db")).string();
    const auto rec = run_command(env + kWeft + " record -q --backend " + GetParam().backend + " " +
                                     weft_test::kExampleCache + " -o " + profile + " -- " +
                                     WEFT_EXAMPLES_DIR + "/" + kExample + "." + GetParam().build,
                                 dir.path);
    EXPECT_EQ(rec.code, 0) << rec.err;
    const auto view = run_command(kWeft + " imbalance --format json " + profile, dir.path);
    EXPECT_EQ(view.code, 0) << view.err;
    const json out = json::parse(view.out);
    EXPECT_FALSE(out["sections"].empty()) << view.out;
    return out["sections"].empty() ? json::object() : out["sections"][0];
  }
};

TEST_P(SampledImbalance, ConcludesAsTheWholeRecordingDoes) {
  TempDir dir;
  std::string whole_profile, sampled_profile;
  const json whole = first_section(dir, "whole", "", whole_profile);
  const json sampled =
      first_section(dir, "sampled", "WEFT_SAMPLING_AFTER_BLOCKS=0 ", sampled_profile);
  const std::string section = kExample + ".c:" + std::to_string(marker_line("weft:section"));
  for (const json* s : {&whole, &sampled}) {
    EXPECT_EQ((*s)["location"], section);
    EXPECT_EQ((*s)["instances"], 40);
    ASSERT_FALSE((*s)["causes"].empty()) << s->dump();
    const json& top = (*s)["causes"][0];
    EXPECT_EQ(top["kind"], "cache-miss") << top.dump();
    EXPECT_EQ(top["line"], marker_line("weft:top-cause")) << top.dump();
    EXPECT_EQ(top["function"], "worker");
    if ((*s)["causes"].size() > 1) {
      EXPECT_LE((*s)["causes"][1]["score"].get<double>(), 0.5 * top["score"].get<double>());
    }
  }
  EXPECT_EQ(whole["measured_instances"], 40);
  EXPECT_EQ(sampled["measured_instances"], 13);
  EXPECT_EQ(sampled["analyzed_instances"], 13);
  EXPECT_NEAR(sampled["imbalance"].get<double>(), whole["imbalance"].get<double>(), 0.02);
  EXPECT_NEAR(sampled["lost"].get<double>() / whole["lost"].get<double>(), 1.0, 0.02);

  EXPECT_EQ(weft_test::profile_meta(whole_profile, "imbalance_unmeasured_segments"), "0");
  EXPECT_EQ(weft_test::profile_meta(sampled_profile, "imbalance_unmeasured_segments"),
            std::to_string(4 * 27 + 4));
  EXPECT_EQ(weft_test::profile_meta(sampled_profile, "imbalance_instance_sampling"), "8");
  // The compile-time hooks run the segments every sampled analysis skips
  // with communication alone: the workers' 24 passes of 32 that are neither
  // a block's counted pass nor its warm-up (the passes false sharing skips).
  // The Valgrind source has no such path.
  EXPECT_EQ(weft_test::profile_meta(whole_profile, "communication_alone_segments"), "0");
  EXPECT_EQ(weft_test::profile_meta(sampled_profile, "communication_alone_segments"),
            GetParam().backend == "compile" ? std::to_string(4 * 24) : "0");
  const auto text = run_command(kWeft + " imbalance " + sampled_profile, dir.path);
  EXPECT_NE(text.out.find("instances 40 (memory counted in 13, analyzed 13)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the imbalance analysis' memory counts (the other instances' misses "
                          "are estimated) 1 in 8"),
            std::string::npos)
      << text.out;
  // In JSON the note goes to stderr: the one the table shows, not the CRD's.
  const auto json_view =
      run_command(kWeft + " imbalance --format json " + sampled_profile, dir.path);
  EXPECT_NE(json_view.err.find("the imbalance analysis' memory counts (the other instances' "
                               "misses are estimated) 1 in 8"),
            std::string::npos)
      << json_view.err;
  EXPECT_EQ(json_view.err.find("CRD sampled"), std::string::npos) << json_view.err;
  const auto whole_text = run_command(kWeft + " imbalance " + whole_profile, dir.path);
  EXPECT_NE(whole_text.out.find("instances 40 (analyzed 40)"), std::string::npos) << whole_text.out;
  const auto report = run_command(kWeft + " report --format json " + sampled_profile, dir.path);
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_EQ(json::parse(report.out)["run"]["imbalance_memory_sample_rate"], 0.125);
}

// A cause that changes a third of the way through the run:
// examples/phase_change_pthreads.c (96 steps; thread 0's slow convergence, a
// control-flow cause, for the first 32; thread 1's gather through 48 MiB, a
// cache-miss cause that loses more time, for the other 64), recorded by
// default (past 2^24 blocks the instances are sampled) and with --exact.
// The default must conclude as --exact does: the miss first, the control
// flow second (at the helper's condition or the loop's test, as the build
// has it, the same line in both), each within 0.05 of its score (one
// instance of each block of 8 passes: 0.63-0.64 against 0.67-0.68 measured
// in the four builds; a coin per pass gave 0.77-0.83). Without weighting each
// diagnosed instance by the instances it stands for, the instances measured
// before the sample began (all of the first phase) outweighed the sample:
// the default named the control flow first (0.70 against 0.30).
class PhaseChange : public ::testing::TestWithParam<weft_test::ExampleBuild> {};

TEST_P(PhaseChange, TheSampleKeepsTheCauseThatLosesMostTime) {
  TempDir dir;
  const std::string program =
      std::string(WEFT_EXAMPLES_DIR) + "/phase_change_pthreads." + GetParam().build;
  const std::string source = fs::path(WEFT_EXAMPLES_SOURCE_DIR) / "phase_change_pthreads.c";
  json sections[2];
  std::set<std::string> suggestions[2];  // kind at location
  for (int exact = 0; exact < 2; ++exact) {
    const std::string profile = (dir.path / (exact ? "exact.db" : "default.db")).string();
    const auto rec = run_command(kWeft + " record -q " + (exact ? "--exact " : "") +
                                     weft_test::kExampleCache + " -o " + profile + " -- " + program,
                                 dir.path);
    ASSERT_EQ(rec.code, 0) << rec.err;
    const auto view = run_command(kWeft + " imbalance --format json " + profile, dir.path);
    ASSERT_EQ(view.code, 0) << view.err;
    sections[exact] = json::parse(view.out)["sections"][0];
    const auto report = run_command(kWeft + " report --format json " + profile, dir.path);
    ASSERT_EQ(report.code, 0) << report.err;
    const json parsed = json::parse(report.out);  // outlives the loop (C++20 range-for)
    for (const json& s : parsed["suggestions"])
      suggestions[exact].insert(s["kind"].get<std::string>() + " at " +
                                s["location"].get<std::string>());
  }
  // The gather's lines come back about 24 steps later, from before the
  // sampled instances' window: the long-reuse sample (docs/metrics.md,
  // "Long reuses") measures them, and both recordings suggest data
  // affinity for the gather loop (the default suggested the broadcast
  // alone before it).
  EXPECT_EQ(suggestions[0], suggestions[1]);
  EXPECT_TRUE(
      suggestions[1].count("data-affinity at phase_change_pthreads.c:" +
                           std::to_string(weft_test::marker_line(source, "weft:miss-cause"))))
      << ::testing::PrintToString(suggestions[1]);
  const json& sampled = sections[0];
  const json& exact = sections[1];
  EXPECT_EQ(exact["measured_instances"], 96);
  EXPECT_LT(sampled["measured_instances"].get<int>(), 48) << sampled.dump();
  for (const json* s : {&sampled, &exact}) {
    EXPECT_EQ((*s)["instances"], 96);
    ASSERT_GE((*s)["causes"].size(), 2u) << s->dump();
    EXPECT_EQ((*s)["causes"][0]["kind"], "cache-miss") << s->dump();
    EXPECT_EQ((*s)["causes"][0]["line"], weft_test::marker_line(source, "weft:miss-cause"));
    EXPECT_EQ((*s)["causes"][1]["kind"], "control-flow") << s->dump();
    const int line = (*s)["causes"][1]["line"];
    EXPECT_TRUE(line == weft_test::marker_line(source, "weft:control-cause") ||
                line == weft_test::marker_line(source, "weft:control-loop"))
        << s->dump();
  }
  EXPECT_EQ(sampled["causes"][1]["line"], exact["causes"][1]["line"]);
  for (int k = 0; k < 2; ++k)
    EXPECT_NEAR(sampled["causes"][k]["score"].get<double>(),
                exact["causes"][k]["score"].get<double>(), 0.05)
        << sampled.dump();
}

// The CRD sampled by the same instances (docs/metrics.md, "Sampled section
// instances"): sparse_steps_pthreads recorded with --exact and sampled from
// the first block. Each worker re-reads the main thread's matrix and vector
// every step: a broadcast, which both recordings must suggest alike. The
// sample measures the CRD in the instances before the sample's start (the
// thread's first and the ones after passes 0-7), then of each block of 8
// passes (8-15 to 32-39) the chosen one, counted for 8, and the one before
// it, traced uncounted: 8 of the 32, so each worker skips 24 (the chosen
// passes depend on the pass counts alone: every build and source agrees).
// Every region of 100,000 events or more (the product's loops and its
// section) keeps each histogram bin's share within 2 percentage points and
// its median within one power-of-two bin (issue 19's target), and its
// events within 5% (one instance of each block stands for its 8, all
// alike but for worker 0's SHARDS sample). Not the step loop's own 1,267
// events (32 a step: the barrier's state, the step count): which thread
// last wrote the barrier's lines changes from step to step, and 4 steps
// standing for 32 put 2-6 points of its mass in other bins
// (docs/performance.md).
class SampledCrdInstances : public ::testing::TestWithParam<weft_test::ExampleBuild> {};

TEST_P(SampledCrdInstances, ConcludeAsEveryInstanceDoes) {
  TempDir dir;
  const std::string program =
      std::string(WEFT_EXAMPLES_DIR) + "/" + kExample + "." + GetParam().build;
  std::string profiles[2];
  for (int exact = 0; exact < 2; ++exact) {
    profiles[exact] = (dir.path / (exact ? "exact.db" : "sampled.db")).string();
    const auto rec =
        run_command(std::string(exact ? "" : "WEFT_SAMPLING_AFTER_BLOCKS=0 ") + kWeft +
                        " record -q --backend " + GetParam().backend + (exact ? " --exact " : " ") +
                        weft_test::kExampleCache + " -o " + profiles[exact] + " -- " + program,
                    dir.path);
    ASSERT_EQ(rec.code, 0) << rec.err;
  }
  EXPECT_EQ(weft_test::profile_meta(profiles[0], "crd_skipped_segments"), std::to_string(4 * 24));
  EXPECT_EQ(weft_test::profile_meta(profiles[0], "crd_instance_sampling"), "8");
  EXPECT_EQ(weft_test::profile_meta(profiles[1], "crd_skipped_segments"), "0");

  json reports[2];
  for (int exact = 0; exact < 2; ++exact) {
    const auto view = run_command(kWeft + " report --format json " + profiles[exact], dir.path);
    ASSERT_EQ(view.code, 0) << view.err;
    reports[exact] = json::parse(view.out);
  }
  EXPECT_EQ(reports[0]["run"]["crd_instance_sample_rate"], 0.125);
  EXPECT_EQ(reports[1]["run"]["crd_instance_sample_rate"], 1.0);
  auto conclusions = [](const json& r) {
    std::set<std::string> out;
    for (const json& s : r["suggestions"]) out.insert(s["kind"].dump() + " " + s["region"].dump());
    return out;
  };
  EXPECT_EQ(conclusions(reports[0]), conclusions(reports[1]));
  ASSERT_EQ(reports[1]["suggestions"].size(), 1u) << reports[1]["suggestions"].dump();
  EXPECT_EQ(reports[1]["suggestions"][0]["kind"], "broadcast");

  auto by_region = [&](const std::string& profile) {
    const auto view = run_command(kWeft + " crd --format json " + profile, dir.path);
    EXPECT_EQ(view.code, 0) << view.err;
    std::map<std::string, json> out;
    for (const json& e : json::parse(view.out)) out[e["region"].get<std::string>()] = e;
    return out;
  };
  auto shares = [](const json& entry) {
    std::map<uint64_t, double> out;
    const double events = entry["events"].get<double>();
    for (const json& bin : entry["histogram"])
      out[bin["hi"].get<uint64_t>()] = bin["count"].get<double>() / events;
    return out;
  };
  const auto sampled = by_region(profiles[0]);
  const auto exact = by_region(profiles[1]);
  int compared = 0;
  for (const auto& [name, e] : exact) {
    if (e["events"].get<uint64_t>() < 100000) continue;
    ASSERT_TRUE(sampled.contains(name)) << name;
    const json& s = sampled.at(name);
    ++compared;
    EXPECT_NEAR(s["events"].get<double>() / e["events"].get<double>(), 1.0, 0.05) << name;
    const auto a = shares(e), b = shares(s);
    for (const auto& [hi, share] : a)
      EXPECT_LE(std::abs(share - (b.contains(hi) ? b.at(hi) : 0.0)), 0.02) << name << " ..." << hi;
    for (const auto& [hi, share] : b)
      EXPECT_LE(std::abs(share - (a.contains(hi) ? a.at(hi) : 0.0)), 0.02) << name << " ..." << hi;
    if (e["median"].is_null()) continue;
    ASSERT_FALSE(s["median"].is_null()) << name;
    EXPECT_LE(std::abs(static_cast<int>(std::bit_width(e["median"].get<uint64_t>())) -
                       static_cast<int>(std::bit_width(s["median"].get<uint64_t>()))),
              1)
        << name;
  }
  EXPECT_GE(compared, 3);
  const auto text = run_command(kWeft + " crd " + profiles[0], dir.path);
  EXPECT_NE(text.out.find("the CRD was measured in 1 in 8 section instances, each event "
                          "counting 8"),
            std::string::npos)
      << text.out << text.err;
}

INSTANTIATE_TEST_SUITE_P(Builds, SampledCrdInstances,
                         ::testing::Values(weft_test::ExampleBuild{"gcc.O2", "compile"},
                                           weft_test::ExampleBuild{"clang.O1", "compile"},
                                           weft_test::ExampleBuild{"plain.gcc.O1", "valgrind"}),
                         [](const auto& info) {
                           return weft_test::test_name(info.param.build + "_" + info.param.backend);
                         });

// The compile-time source only: the binary source runs the 48 MiB gathers
// ten times slower, and SampledImbalance covers it.
INSTANTIATE_TEST_SUITE_P(Builds, PhaseChange,
                         ::testing::Values(weft_test::ExampleBuild{"gcc.O1", "compile"},
                                           weft_test::ExampleBuild{"gcc.O2", "compile"},
                                           weft_test::ExampleBuild{"clang.O1", "compile"},
                                           weft_test::ExampleBuild{"clang.O2", "compile"}),
                         [](const auto& info) { return weft_test::test_name(info.param.build); });

INSTANTIATE_TEST_SUITE_P(Builds, SampledImbalance, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) {
                           return weft_test::test_name(info.param.build + "_" + info.param.backend);
                         });

}  // namespace
