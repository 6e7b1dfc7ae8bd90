// The report's hot loops (findings/hot_loops.h): loops ranked by the
// instructions the imbalance analysis counted, each with its static
// analysis — in place for a plain binary under the Valgrind source, in the
// plain build given with --binary for a weft-cc build, and a one-line
// reason without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/command_runner.h"

namespace {

using nlohmann::json;
using weft_test::CommandResult;
using weft_test::run_command;
using weft_test::TempDir;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kExamples = WEFT_EXAMPLES_DIR;

std::string fmt_two(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

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
  // The table says that reason once, above the loops, when they all share it.
  const CommandResult unanalyzed = run_command(kWeft + " report " + profile, dir.path);
  ASSERT_EQ(unanalyzed.code, 0) << unanalyzed.err;
  const std::string once = "  (no static analysis of these loops: " +
                           without["loops"][0]["not_analyzed"].get<std::string>() + ")\n";
  ASSERT_GE(without["loops"].size(), 2u);
  const size_t at = unanalyzed.out.find(once);
  EXPECT_NE(at, std::string::npos) << unanalyzed.out;
  EXPECT_EQ(unanalyzed.out.find("no static analysis", at + once.size()), std::string::npos)
      << unanalyzed.out;
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

// tests/loops/programs/joined_loops.c under the Valgrind source, exact
// (CRD unsampled), reported with the fixed calibration and a small cache.
class JoinedLoops : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::string(WEFT_LOOPS_JOINED_LOOPS).empty()) return;  // no gcc
    dir_ = new TempDir();
    profile_ = (dir_->path / "joined.db").string();
    const CommandResult r = run_command(kWeft + " record --backend valgrind --exact -o " +
                                            profile_ + " -- " + WEFT_LOOPS_JOINED_LOOPS,
                                        dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
    report_ = new json(
        hot_loops(*dir_, profile_,
                  std::string("--cache-size 16384 --calibration ") + WEFT_LOOPS_FIXED_CALIBRATION));
  }
  void SetUp() override {
    if (std::string(WEFT_LOOPS_JOINED_LOOPS).empty()) GTEST_SKIP() << "gcc is missing";
  }
  static void TearDownTestSuite() {
    delete report_;
    delete dir_;
  }
  static const json& loop(const std::string& region) {
    for (const json& l : (*report_)["loops"])
      if (l["region"] == region) return l;
    static const json none;
    ADD_FAILURE() << region << " is not a hot loop: " << report_->dump(2);
    return none;
  }
  // `weft loops` on the same binary: the static analysis without the run.
  static json static_loop(const std::string& line) {
    const CommandResult r = run_command(
        kWeft + " loops --cpu skylake --format json --calibration " + WEFT_LOOPS_FIXED_CALIBRATION +
            " --line " + line + " " + WEFT_LOOPS_JOINED_LOOPS,
        dir_->path);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out)["source_loops"][0]["versions"][0];
  }
  static TempDir* dir_;
  static std::string profile_;
  static json* report_;
};
TempDir* JoinedLoops::dir_ = nullptr;
std::string JoinedLoops::profile_;
json* JoinedLoops::report_ = nullptr;

// The column sweep's load moves by a register (n * 8): the addressing says
// "unknown stride", counted as its 8 bytes (as if stride 1); the traces
// recorded 4096 bytes per iteration, so every load brings a line: 64 bytes
// from L2 at 8 B/cycle = 8 cycles, from RAM at 2 B/cycle = 32.
TEST_F(JoinedLoops, TheRecordedStrideReplacesTheUnknownOne) {
  const json& sweep = loop("column_sums:loop@joined_loops.c:29");
  ASSERT_FALSE(sweep.is_null());
  ASSERT_FALSE(sweep["static"].is_null()) << sweep.dump(2);
  const json& s = sweep["static"];
  ASSERT_EQ(s["memory_accesses"].size(), 1u) << s["memory_accesses"].dump();
  const json& access = s["memory_accesses"][0];
  EXPECT_EQ(access["kind"], "load");
  EXPECT_EQ(access["pattern"], "unknown_stride");
  ASSERT_TRUE(access.contains("recorded")) << access.dump();
  EXPECT_EQ(access["recorded"]["pattern"], "strided");
  EXPECT_EQ(access["recorded"]["stride"], 4096);
  EXPECT_EQ(access["recorded"]["irregular_share"], 0.0);
  EXPECT_EQ(access["recorded"]["accesses"], 512 * 512);
  EXPECT_EQ(sweep["recorded_strides"], 1);
  const json& l2 = s["memory_levels"]["L2"];
  EXPECT_EQ(l2["load_bytes"], 64.0);
  EXPECT_EQ(l2["store_bytes"], 0.0);
  EXPECT_EQ(l2["recorded_strides"], 1);
  EXPECT_DOUBLE_EQ(l2["bandwidth_cycles"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(l2["cycles_per_iteration"].get<double>(), 8.0);
  EXPECT_EQ(l2["bottleneck"], "L2 bandwidth");
  const json& ram = s["memory_levels"]["RAM"];
  EXPECT_DOUBLE_EQ(ram["cycles_per_iteration"].get<double>(), 32.0);
  EXPECT_EQ(ram["bottleneck"], "RAM bandwidth");

  // weft loops, with the same calibration, has only the addressing: 8
  // bytes per iteration, under the addsd chain's 4 cycles.
  const json alone = static_loop("joined_loops.c:29");
  EXPECT_EQ(alone["memory_accesses"][0]["pattern"], "unknown_stride");
  EXPECT_FALSE(alone["memory_accesses"][0].contains("recorded"));
  EXPECT_EQ(alone["memory_levels"]["L2"]["load_bytes"], 8.0);
  EXPECT_EQ(alone["memory_levels"]["L2"]["recorded_strides"], 0);
  EXPECT_EQ(alone["memory_levels"]["L2"]["bottleneck"], "core (L1)");
  EXPECT_DOUBLE_EQ(alone["memory_levels"]["L2"]["cycles_per_iteration"].get<double>(),
                   alone["cycles_per_iteration"].get<double>());
  EXPECT_DOUBLE_EQ(alone["cycles_per_iteration"].get<double>(),
                   s["cycles_per_iteration"].get<double>());

  // weft loops --profile joins the same run: the report's figures.
  const json joined = static_loop("joined_loops.c:29 --profile " + profile_);
  ASSERT_TRUE(joined["memory_accesses"][0].contains("recorded")) << joined.dump(2);
  EXPECT_EQ(joined["memory_accesses"][0]["recorded"]["stride"], 4096);
  EXPECT_EQ(joined["memory_levels"]["L2"]["recorded_strides"], 1);
  EXPECT_DOUBLE_EQ(joined["memory_levels"]["L2"]["cycles_per_iteration"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(joined["memory_levels"]["RAM"]["cycles_per_iteration"].get<double>(), 32.0);
}

// The column sweep is nested in the loop over columns: its header runs 512
// times per entry (N rows), which the profile's block counts tell, so the
// report simulates it with that trip count, entries overlapping.
TEST_F(JoinedLoops, ANestedLoopGetsItsTripCountFromTheRun) {
  const json& sweep = loop("column_sums:loop@joined_loops.c:29");
  ASSERT_FALSE(sweep["static"].is_null()) << sweep.dump(2);
  const json& trip = sweep["static"]["with_trip_count"];
  ASSERT_FALSE(trip.is_null()) << sweep["static"].dump(2);
  EXPECT_EQ(trip["trip_count"], 512);
  EXPECT_EQ(trip["simulated"], true);
  // weft loops with the same trip count gives the same figure.
  const json alone = static_loop("joined_loops.c:29 --trip-count 512");
  ASSERT_FALSE(alone["with_trip_count"].is_null());
  EXPECT_DOUBLE_EQ(alone["with_trip_count"]["cycles_per_iteration"].get<double>(),
                   trip["cycles_per_iteration"].get<double>());
  // A loop nested in none has none.
  EXPECT_TRUE(loop("clamp_rare:loop@joined_loops.c:35")["static"]["with_trip_count"].is_null());
}

// Thread 1 reads the columns 256-511 of the matrix thread 0 wrote: its
// first read of each line (512 rows x 32 lines) is a true communication,
// the 7 other reads of the line are reuses, one column later, after the
// other 511 rows' lines: CRD 511 each, above the 256-granule cache.
TEST_F(JoinedLoops, TheLoopsCrdIsThatOfItsReads) {
  const json& sweep = loop("column_sums:loop@joined_loops.c:29");
  ASSERT_FALSE(sweep.is_null());
  EXPECT_EQ(sweep["raw"], 512 * 32);
  EXPECT_EQ(sweep["rar"], 512 * 256 - 512 * 32);
  ASSERT_FALSE(sweep["crd"].is_null()) << sweep.dump(2);
  EXPECT_EQ(sweep["crd"]["events"], 512 * 256 - 512 * 32);
  EXPECT_EQ(sweep["crd"]["median"], 511);
  EXPECT_EQ(sweep["crd"]["fraction_above_max"], 1.0);
  EXPECT_EQ(sweep["crd"]["fraction_beyond_min"], 1.0);
  // The table says it on the loop's line.
  const CommandResult table =
      run_command(kWeft + " report --cpu skylake --cache-size 16384 --calibration " +
                      WEFT_LOOPS_FIXED_CALIBRATION + " " + profile_,
                  dir_->path);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("column_sums:loop@joined_loops.c:29  raw 16384 rar 114688  crd median "
                           "511 (100.0% beyond min, 100.0% above max)"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("operands in L2 8.00 (L2 bandwidth), RAM 32.00 (RAM bandwidth); "
                           "strides from the run"),
            std::string::npos)
      << table.out;
}

// One element in 64 takes the branch with the division: the hot path is
// the header (load, compare, branch) and the latch (double, store, count),
// 8 instructions; every block adds the rare one's 8 (a load of c[i] and the
// division among them), which bounds the all-blocks simulation on the
// divider and adds 8 bytes per iteration to its L2 estimate.
TEST_F(JoinedLoops, AMultiPathLoopIsSimulatedOnItsHotPath) {
  const json& clamp = loop("clamp_rare:loop@joined_loops.c:35");
  ASSERT_FALSE(clamp.is_null());
  ASSERT_FALSE(clamp["static"].is_null()) << clamp.dump(2);
  const json& s = clamp["static"];
  EXPECT_TRUE(s["several_paths"].get<bool>());
  EXPECT_EQ(s["blocks"], 3);
  EXPECT_EQ(clamp["hot_path_blocks"], 2);
  EXPECT_EQ(s["mix"]["instructions"], 8);
  EXPECT_EQ(s["mix"]["fp_div"], 0);
  EXPECT_EQ(s["mix"]["loads"], 1);
  EXPECT_EQ(s["mix"]["stores"], 1);
  EXPECT_EQ(s["mix"]["fp_add_sub"], 1);
  const json every = static_loop("joined_loops.c:36");
  EXPECT_EQ(every["blocks"], 3);
  EXPECT_EQ(every["mix"]["instructions"], 16);
  EXPECT_EQ(every["mix"]["loads"], 2);
  EXPECT_EQ(every["mix"]["fp_div"], 1);
  EXPECT_DOUBLE_EQ(clamp["all_paths_cycles"].get<double>(),
                   every["cycles_per_iteration"].get<double>());
  EXPECT_EQ(every["bounds"]["port_resource"], "SKLFPDivider");
  EXPECT_LT(s["cycles_per_iteration"].get<double>(), every["cycles_per_iteration"].get<double>());
  EXPECT_NE(s["bounds"]["port_resource"], "SKLFPDivider");
  // L2: 8 B loaded / 8 + 8 B stored / 4 = 3 cycles on the hot path; 16 B
  // loaded, 4 cycles, with the rare block's load.
  EXPECT_EQ(s["memory_levels"]["L2"]["load_bytes"], 8.0);
  EXPECT_DOUBLE_EQ(s["memory_levels"]["L2"]["cycles_per_iteration"].get<double>(), 3.0);
  EXPECT_EQ(every["memory_levels"]["L2"]["load_bytes"], 16.0);
  EXPECT_DOUBLE_EQ(every["memory_levels"]["L2"]["cycles_per_iteration"].get<double>(), 4.0);
  const CommandResult table = run_command(kWeft + " report --cpu skylake --calibration " +
                                              WEFT_LOOPS_FIXED_CALIBRATION + " " + profile_,
                                          dir_->path);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(
      table.out.find("simulated on its hot path: 2 of 3 blocks, those run in at least half "
                     "of its iterations (every block: L1 " +
                     fmt_two(every["cycles_per_iteration"].get<double>()) + " cycles/iteration)"),
      std::string::npos)
      << table.out;
  // Its strides came from the run too, and agree with the addressing.
  EXPECT_EQ(clamp["recorded_strides"], 2);
  for (const json& access : s["memory_accesses"]) {
    EXPECT_EQ(access["stride"], 8);
    EXPECT_EQ(access["recorded"]["stride"], 8);
  }
}

// The weft-cc build, analyzed in the plain build: its traced instructions
// are paired with the plain build's accesses by source line, kind and
// size (and a loop inlined from another function on its accesses' lines,
// not its region's). The sweep's load gets 4096 bytes again. clamp_rare keeps every
// block (the profile's blocks are the instrumented build's), and its load
// of c[i], run once in 64 iterations at 512 bytes from the last, weighs
// 1/64 of a line per iteration: 8 + 64/64 = 9 bytes loaded, 8 stored, L2
// bandwidth 9/8 + 8/4 = 3.125 cycles.
TEST_F(JoinedLoops, AWeftCcProfileGivesThePlainBuildItsStrides) {
  if (std::string(WEFT_LOOPS_JOINED_LOOPS_CC).empty()) GTEST_SKIP() << "no weft-cc build";
  const std::string profile = (dir_->path / "cc.db").string();
  const CommandResult r = run_command(
      kWeft + " record --exact -o " + profile + " -- " + WEFT_LOOPS_JOINED_LOOPS_CC, dir_->path);
  ASSERT_EQ(r.code, 0) << r.err;
  const json h = hot_loops(*dir_, profile,
                           std::string("--calibration ") + WEFT_LOOPS_FIXED_CALIBRATION +
                               " --binary " + WEFT_LOOPS_JOINED_LOOPS);
  const json* sweep = nullptr;
  const json* clamp = nullptr;
  for (const json& l : h["loops"]) {
    if (l["region"] == "column_sums:loop@joined_loops.c:29") sweep = &l;
    if (l["region"] == "clamp_rare:loop@joined_loops.c:35") clamp = &l;
  }
  ASSERT_TRUE(sweep && clamp) << h.dump(2);
  ASSERT_FALSE((*sweep)["static"].is_null()) << sweep->dump(2);
  EXPECT_EQ((*sweep)["analyzed_in"], WEFT_LOOPS_JOINED_LOOPS);
  EXPECT_EQ((*sweep)["recorded_strides"], 1);
  EXPECT_EQ((*sweep)["static"]["memory_accesses"][0]["recorded"]["stride"], 4096);
  EXPECT_DOUBLE_EQ((*sweep)["static"]["memory_levels"]["L2"]["cycles_per_iteration"].get<double>(),
                   8.0);

  ASSERT_FALSE((*clamp)["static"].is_null()) << clamp->dump(2);
  const json& s = (*clamp)["static"];
  EXPECT_TRUE((*clamp)["hot_path_blocks"].is_null());
  EXPECT_EQ(s["mix"]["instructions"], 16);
  EXPECT_EQ((*clamp)["recorded_strides"], 3);
  for (const json& access : s["memory_accesses"]) {
    const bool rare = access["recorded"]["stride"] == 512;
    EXPECT_DOUBLE_EQ(access["recorded"]["per_iteration"].get<double>(), rare ? 1.0 / 64 : 1.0)
        << access.dump();
  }
  EXPECT_DOUBLE_EQ(s["memory_levels"]["L2"]["load_bytes"].get<double>(), 9.0);
  EXPECT_DOUBLE_EQ(s["memory_levels"]["L2"]["store_bytes"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(s["memory_levels"]["L2"]["bandwidth_cycles"].get<double>(), 3.125);

  // gather_sum, inlined into work(): its region is work's loop at the call
  // (line 60), its instructions on gather_sum's line, where both builds'
  // accesses are paired. index_of[i] moves by 4 bytes, a[index_of[i]] by
  // 7 doubles: 4 + 56 bytes per iteration, 60/8 = 7.5 cycles from L2, and
  // a line nearly every iteration from RAM (its bandwidth, not the latency
  // of an access the addressing calls irregular).
  const json* gather = nullptr;
  for (const json& l : h["loops"])
    if (l["region"] == "work:loop@joined_loops.c:60") gather = &l;
  ASSERT_TRUE(gather) << h.dump(2);
  ASSERT_FALSE((*gather)["static"].is_null()) << gather->dump(2);
  EXPECT_EQ((*gather)["recorded_strides"], 2);
  std::vector<int64_t> strides;
  for (const json& access : (*gather)["static"]["memory_accesses"])
    strides.push_back(access["recorded"]["stride"].get<int64_t>());
  EXPECT_EQ(strides, (std::vector<int64_t>{4, 56}));
  const json& levels = (*gather)["static"]["memory_levels"];
  EXPECT_DOUBLE_EQ(levels["L2"]["cycles_per_iteration"].get<double>(), 7.5);
  EXPECT_EQ(levels["RAM"]["bottleneck"], "RAM bandwidth");
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
