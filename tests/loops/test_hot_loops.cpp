// The report's hot loops (findings/hot_loops.h): loops ranked by the
// instructions the imbalance analysis counted, each with its static
// analysis — in place for a plain binary under the Valgrind source, in the
// plain build given with --binary for a weft-cc build, and a one-line
// reason without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "support/command_runner.h"

namespace {

using nlohmann::json;
using weft_test::CommandResult;
using weft_test::run_command;
using weft_test::TempDir;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kExamples = WEFT_EXAMPLES_DIR;

json hot_loops(const TempDir& dir, const std::string& profile, const std::string& extra = "") {
  const CommandResult r =
      run_command(kWeft + " report --format json --cpu skylake " + profile + " " + extra, dir.path);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out)["hot_loops"];
}

// The stencil sweep (stencil_omp.c:84, 4 loads, 3 adds and a multiply per
// point, scalar at -O1) holds most of the run's instructions.
void expect_stencil_sweep_first(const json& h, const std::string& analyzed_in) {
  ASSERT_FALSE(h.is_null());
  EXPECT_EQ(h["cpu"], "skylake");
  ASSERT_GE(h["loops"].size(), 1u);
  const json& top = h["loops"][0];
  EXPECT_EQ(top["region"], "main._omp_fn.0:loop@stencil_omp.c:84");
  EXPECT_GT(top["share"].get<double>(), 0.5);
  EXPECT_EQ(top["function"], "main._omp_fn.0");
  EXPECT_EQ(top["analyzed_in"], analyzed_in);
  ASSERT_FALSE(top["static"].is_null()) << top.dump(2);
  const json& s = top["static"];
  EXPECT_EQ(s["first_line"], 84);
  // gcc -O1 does not vectorize: every FP add is scalar.
  EXPECT_EQ(s["vectorization"]["add_sub"]["scalar_ratio"], 1.0) << s["vectorization"].dump();
  EXPECT_GT(s["cycles_per_iteration"].get<double>(), 0.0);
  // The busiest thread over the mean of those that ran the loop.
  uint64_t busiest = 0, sum = 0, running = 0;
  for (const json& n : top["thread_instructions"]) {
    busiest = std::max(busiest, n.get<uint64_t>());
    sum += n.get<uint64_t>();
    running += n.get<uint64_t>() > 0;
  }
  EXPECT_EQ(sum, top["instructions"].get<uint64_t>());
  EXPECT_DOUBLE_EQ(
      top["thread_spread"].get<double>(),
      static_cast<double>(busiest) * static_cast<double>(running) / static_cast<double>(sum));
  EXPECT_GE(top["thread_spread"].get<double>(), 1.0);
  // Shares are of every executed instruction, so they add up to at most 1.
  double shares = 0;
  for (const json& loop : h["loops"]) shares += loop["share"].get<double>();
  EXPECT_LE(shares, 1.0 + 1e-9);
}

TEST(HotLoops, APlainBinaryIsAnalyzedInPlace) {
  TempDir dir;
  const std::string binary = kExamples + "/stencil_omp.plain.gcc.O1";
  const std::string profile = (dir.path / "vg.db").string();
  ASSERT_EQ(
      run_command(kWeft + " record --backend valgrind -o " + profile + " -- " + binary, dir.path)
          .code,
      0);
  expect_stencil_sweep_first(hot_loops(dir, profile), binary);
}

TEST(HotLoops, AWeftCcBuildIsAnalyzedInThePlainBuildGiven) {
  TempDir dir;
  const std::string profile = (dir.path / "cc.db").string();
  ASSERT_EQ(
      run_command(kWeft + " record -o " + profile + " -- " + kExamples + "/stencil_omp.gcc.O2",
                  dir.path)
          .code,
      0);
  // Without a plain build: ranked, not analyzed, and the reason says what to give.
  const json without = hot_loops(dir, profile);
  ASSERT_GE(without["loops"].size(), 1u);
  EXPECT_EQ(without["loops"][0]["region"], "main._omp_fn.0:loop@stencil_omp.c:84");
  EXPECT_TRUE(without["loops"][0]["static"].is_null());
  EXPECT_NE(without["loops"][0]["not_analyzed"].get<std::string>().find(
                "is a weft-cc build, whose loops call the instrumentation: give --binary"),
            std::string::npos);
  const std::string plain = kExamples + "/stencil_omp.plain.gcc.O1";
  expect_stencil_sweep_first(hot_loops(dir, profile, "--binary " + plain), plain);
  // The table says it in one line per loop.
  const CommandResult table =
      run_command(kWeft + " report --cpu skylake " + profile + " --binary " + plain, dir.path);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("Hot loops:"), std::string::npos);
  EXPECT_NE(table.out.find("main._omp_fn.0:loop@stencil_omp.c:84"), std::string::npos);
  // An unknown CPU is the command's one-line error.
  const CommandResult bad =
      run_command(kWeft + " report --cpu nosuchcpu " + profile + " --binary " + plain, dir.path);
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("nosuchcpu"), std::string::npos) << bad.err;
}

// With this machine's calibration (weft calibrate, into a cache dir of the
// test's own) the hot loops get weft loops' L2 and RAM estimates; without,
// one note says how to get them.
TEST(HotLoops, TheMachinesCalibrationGivesL2AndRamEstimates) {
  TempDir dir;
  const std::string binary = kExamples + "/stencil_omp.plain.gcc.O1";
  const std::string profile = (dir.path / "vg.db").string();
  ASSERT_EQ(
      run_command(kWeft + " record --backend valgrind -o " + profile + " -- " + binary, dir.path)
          .code,
      0);
  const std::string cache = "WEFT_CACHE_DIR=" + (dir.path / "cache").string() + " ";
  auto report = [&] {
    const CommandResult r =
        run_command(cache + kWeft + " report --format json " + profile, dir.path);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out)["hot_loops"];
  };
  const json before = report();
  EXPECT_NE(before["calibration_note"].get<std::string>().find("run `weft calibrate`"),
            std::string::npos);
  ASSERT_FALSE(before["loops"][0]["static"].is_null());
  EXPECT_TRUE(before["loops"][0]["static"]["memory_levels"].empty());

  ASSERT_EQ(run_command(cache + kWeft + " calibrate", dir.path).code, 0);
  const json after = report();
  EXPECT_TRUE(after["calibration_note"].is_null());
  const json& top = after["loops"][0]["static"];
  ASSERT_EQ(top["memory_levels"].size(), 2u) << top.dump(2);
  ASSERT_TRUE(top["memory_levels"].contains("L2"));
  ASSERT_TRUE(top["memory_levels"].contains("RAM"));
  // Never faster than with every operand in L1; RAM never faster than L2.
  const double l1 = top["cycles_per_iteration"].get<double>();
  const double l2 = top["memory_levels"]["L2"]["cycles_per_iteration"].get<double>();
  const double ram = top["memory_levels"]["RAM"]["cycles_per_iteration"].get<double>();
  EXPECT_GE(l2, l1);
  EXPECT_GE(ram, l2);
}

TEST(HotLoops, AProfileWithoutBlockCountsHasNone) {
  TempDir dir;
  const std::string profile = (dir.path / "comm.db").string();
  ASSERT_EQ(run_command(kWeft + " record --analyses comm -o " + profile + " -- " + kExamples +
                            "/stencil_omp.gcc.O2",
                        dir.path)
                .code,
            0);
  EXPECT_TRUE(hot_loops(dir, profile).is_null());
}

}  // namespace
