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
// and the sampled run must say it is sampled: exactly 11 instances with
// their memory counted (steps 0-7, then the 3 the hash selects of 8-39:
// the decisions depend on the barrier's pass count alone, so every build
// and source agrees), 4 x 29 + 4 unmeasured segments, the note in the text
// view and the rate in the report's JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
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
  EXPECT_EQ(sampled["measured_instances"], 11);
  EXPECT_EQ(sampled["analyzed_instances"], 11);
  EXPECT_NEAR(sampled["imbalance"].get<double>(), whole["imbalance"].get<double>(), 0.02);
  EXPECT_NEAR(sampled["lost"].get<double>() / whole["lost"].get<double>(), 1.0, 0.02);

  EXPECT_EQ(weft_test::profile_meta(whole_profile, "imbalance_unmeasured_segments"), "0");
  EXPECT_EQ(weft_test::profile_meta(sampled_profile, "imbalance_unmeasured_segments"),
            std::to_string(4 * 29 + 4));
  EXPECT_EQ(weft_test::profile_meta(sampled_profile, "imbalance_instance_sampling"), "8");
  const auto text = run_command(kWeft + " imbalance " + sampled_profile, dir.path);
  EXPECT_NE(text.out.find("instances 40 (memory counted in 11, analyzed 11)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the imbalance analysis' memory counts (the other instances' misses "
                          "are estimated) 1 in 8"),
            std::string::npos)
      << text.out;
  const auto whole_text = run_command(kWeft + " imbalance " + whole_profile, dir.path);
  EXPECT_NE(whole_text.out.find("instances 40 (analyzed 40)"), std::string::npos) << whole_text.out;
  const auto report = run_command(kWeft + " report --format json " + sampled_profile, dir.path);
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_EQ(json::parse(report.out)["run"]["imbalance_memory_sample_rate"], 0.125);
}

INSTANTIATE_TEST_SUITE_P(Builds, SampledImbalance, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) {
                           return weft_test::test_name(info.param.build + "_" + info.param.backend);
                         });

}  // namespace
