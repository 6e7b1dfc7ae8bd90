// Ten thousand small parallel sections: examples/jacobi_sweeps_omp.c (50
// time steps of 200 rows, each row a worksharing loop ended by a barrier, 4
// threads), recorded with the compile-time source (gcc and clang, -O1 and
// -O2) and the binary source (plain gcc -O1 and clang -O2 builds).
// `weft imbalance --format json` must give
//   - the section at the line marked `weft:section` first, with exactly
//     50 x 200 = 10,000 instances, every thread in it and thread 0 (whose
//     columns lie in the wall's boundary layer) the busiest;
//   - the rhs loop's section with exactly 50 instances (under clang, its
//     worksharing barrier is told from the region's closing one);
//   - as top cause the boundary-layer test, the caller's `if` on the line
//     marked `weft:top-cause` (needs_fixup() is not inlined), a control-flow
//     cause, the runner-up at most half its score;
// and nothing may be lost: no warning from `weft record`, no dropped event
// (meta dropped_events, dropped.imbalance, dropped_sync_events), while the
// imbalance analysis logs nearly every segment as a repeat of an earlier one
// (meta imbalance_repeated_segments).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/example_source.h"
#include "support/recorded_imbalance.h"

namespace fs = std::filesystem;
using nlohmann::json;
using weft_test::TempDir;

namespace {

const std::string kExample = "jacobi_sweeps_omp";
constexpr int kSteps = 50;
constexpr int kRows = 200;
constexpr int kThreads = 4;

int marker_line(const std::string& marker) {
  return weft_test::marker_line(fs::path(WEFT_EXAMPLES_SOURCE_DIR) / (kExample + ".c"), marker);
}

using weft_test::profile_meta;
using Build = weft_test::ExampleBuild;

class ManySections : public ::testing::TestWithParam<Build> {};

TEST_P(ManySections, AreCountedInFullAndDiagnosed) {
  const Build& b = GetParam();
  TempDir dir;
  const auto [profile, rec, view] = weft_test::record_imbalance(
      dir, b.backend, std::string(WEFT_EXAMPLES_DIR) + "/" + kExample + "." + b.build);
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(rec.err.find("warning"), std::string::npos) << rec.err;

  // Nothing dropped, and the repeats did their part: all but the first
  // segments of each kind (a few per time step at most) are repeats.
  EXPECT_EQ(profile_meta(profile, "dropped_events").value_or("<missing>"), "0");
  EXPECT_EQ(profile_meta(profile, "dropped_sync_events").value_or("<missing>"), "0");
  EXPECT_EQ(profile_meta(profile, "dropped.imbalance").value_or("0"), "0");
  const std::optional<std::string> repeats = profile_meta(profile, "imbalance_repeated_segments");
  ASSERT_TRUE(repeats.has_value());
  EXPECT_GE(std::stol(*repeats), 9 * kThreads * kSteps * kRows / 10) << *repeats;

  ASSERT_EQ(view.code, 0) << view.err;
  const json out = json::parse(view.out);
  EXPECT_EQ(out["no_barrier_recognised"], false);
  ASSERT_FALSE(out["sections"].empty()) << view.out;
  const json& section = out["sections"][0];
  EXPECT_EQ(section["location"], kExample + ".c:" + std::to_string(marker_line("weft:section")));
  EXPECT_EQ(section["instances"], kSteps * kRows);
  EXPECT_GT(section["imbalance"].get<double>(), 0.15);
  // The rhs loop's section: one instance per time step.
  int rhs_sections = 0;
  for (const json& s : out["sections"]) rhs_sections += s["instances"] == kSteps ? 1 : 0;
  EXPECT_EQ(rhs_sections, 1) << view.out;

  // Every thread, and thread 0 the busiest by far.
  const json& threads = section["threads"];
  ASSERT_EQ(threads.size(), static_cast<size_t>(kThreads)) << section.dump();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(threads[t]["thread"], t);
  double others = 0;
  for (int t = 1; t < kThreads; ++t) others = std::max(others, threads[t]["busy"].get<double>());
  EXPECT_GT(threads[0]["busy"].get<double>(), 1.3 * others) << threads.dump();

  const json& causes = section["causes"];
  ASSERT_FALSE(causes.empty()) << section.dump();
  const json& top = causes[0];
  EXPECT_EQ(top["line"], marker_line("weft:top-cause")) << top.dump();
  EXPECT_EQ(top["kind"], "control-flow") << top.dump();
  EXPECT_EQ(fs::path(top["file"].get<std::string>()).filename(), kExample + ".c");
  for (size_t i = 1; i < causes.size(); ++i)
    EXPECT_GE(causes[i - 1]["score"].get<double>(), causes[i]["score"].get<double>());
  if (causes.size() > 1) {
    EXPECT_LE(causes[1]["score"].get<double>(), 0.5 * top["score"].get<double>()) << view.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Builds, ManySections, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) {
                           return weft_test::test_name(info.param.build + "_" + info.param.backend);
                         });

}  // namespace
