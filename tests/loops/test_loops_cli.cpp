// `weft loops` as a user meets it: a table and JSON on an unmodified
// executable and on a shared library named directly, and one-line causes
// with exit status 1 for a missing file, a non-ELF file, a stripped binary,
// an unknown CPU, an unknown function, a bad --line or --trip-count and
// CSV; a trip count's figure.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/command_runner.h"

namespace {

using weft_test::CommandResult;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";

class LoopsCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::make_unique<weft_test::TempDir>("weft-test-loops-cli"); }
  CommandResult run(const std::string& args) {
    return weft_test::run_command(
        "WEFT_CACHE_DIR=" + dir_->path.string() + " " + kWeft + " loops " + args, dir_->path);
  }
  // Exit 1, nothing on stdout, one line on stderr holding `cause`.
  void expect_failure(const std::string& args, const std::string& cause) {
    const CommandResult r = run(args);
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(cause), std::string::npos) << r.err;
  }
  std::unique_ptr<weft_test::TempDir> dir_;
};

#define REQUIRE_PROGRAM(path) \
  if (std::string(path).empty()) GTEST_SKIP() << "compiler missing"

TEST_F(LoopsCommand, TableNamesTheDividerOfADivisionLoop) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  const CommandResult r =
      run(std::string(WEFT_LOOPS_GCC_SCALAR) + " --function divide_arrays --cpu skylake");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU model: skylake (LLVM 19), vectors 256 bits"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("source loop loop_kernels.c:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cycles per iteration (L1): 4.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bottleneck: execution port SKLFPDivider (divsd)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hint: divider bound: multiply by the reciprocal"), std::string::npos);
  EXPECT_NE(r.out.find("hint: scalar FP: not vectorized"), std::string::npos);
  EXPECT_EQ(r.out.find("model caveat"), std::string::npos) << r.out;

  // A model without a divider says so under the model's line, and in JSON.
  const CommandResult spr =
      run(std::string(WEFT_LOOPS_GCC_SCALAR) + " --function divide_arrays --cpu sapphirerapids");
  ASSERT_EQ(spr.code, 0) << spr.err;
  EXPECT_NE(spr.out.find("(LLVM 19), vectors 512 bits, dispatch 6 micro-ops per cycle\nmodel "
                         "caveat: LLVM 19's sapphirerapids tables have no FP divider"),
            std::string::npos)
      << spr.out;
  const CommandResult json_out =
      run(std::string(WEFT_LOOPS_GCC_SCALAR) +
          " --function divide_arrays --cpu sapphirerapids --format json");
  ASSERT_EQ(json_out.code, 0) << json_out.err;
  const nlohmann::json caveats = nlohmann::json::parse(json_out.out)["cpu"]["caveats"];
  ASSERT_EQ(caveats.size(), 1u) << caveats.dump();
  EXPECT_NE(caveats[0].get<std::string>().find("no FP divider"), std::string::npos);
}

TEST_F(LoopsCommand, JsonOnASharedLibraryNamedDirectly) {
  REQUIRE_PROGRAM(WEFT_LOOPS_LIBLOOP_KERNELS_SO);
  const CommandResult r =
      run(std::string(WEFT_LOOPS_LIBLOOP_KERNELS_SO) + " --cpu haswell --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["cpu"]["name"], "haswell");
  EXPECT_EQ(out["cpu"]["host"], false);
  EXPECT_EQ(out["cpu"]["vector_width_bits"], 256);
  bool found = false;
  for (const nlohmann::json& loop : out["source_loops"]) {
    if (loop["function"] != "sum_array") continue;
    found = true;
    ASSERT_EQ(loop["versions"].size(), 1u);
    const nlohmann::json& version = loop["versions"][0];
    EXPECT_EQ(version["bounds"]["latency"], 3.0);
    EXPECT_EQ(version["bottleneck"]["kind"], "dependence_chain");
    EXPECT_TRUE(version["bottleneck"]["port"].is_null());
    EXPECT_EQ(version["vectorization"]["add_sub"]["scalar_ratio"], 1.0);
    EXPECT_TRUE(version["vectorization"]["mul"]["scalar_ratio"].is_null());
    EXPECT_EQ(version["projection"]["elements_per_vector"], 4);
  }
  EXPECT_TRUE(found) << r.out;
}

TEST_F(LoopsCommand, TheHostCpuByDefault) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  const CommandResult r =
      run(std::string(WEFT_LOOPS_GCC_SCALAR) + " --function sum_array --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["cpu"]["host"], true);
  EXPECT_FALSE(out["cpu"]["name"].get<std::string>().empty());
}

TEST_F(LoopsCommand, CalibrationGivesL2AndRamEstimates) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const std::string args = std::string(WEFT_LOOPS_MEMORY_STREAMS) +
                           " --function copy_column --cpu skylake --calibration " +
                           WEFT_LOOPS_FIXED_CALIBRATION;
  const CommandResult table = run(args);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("calibration: " + std::string(WEFT_LOOPS_FIXED_CALIBRATION)),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("memory accesses: load [rax] 8 B, stride 4096; store [rdi - 8] 8 B, "
                           "stride 8"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("cycles per iteration (L2): 10.00 (64 B loaded, 8 B stored"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("bound: L2 bandwidth"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("cycles per iteration (RAM): 40.00"), std::string::npos) << table.out;

  const CommandResult json = run(args + " --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json out = nlohmann::json::parse(json.out);
  EXPECT_EQ(out["calibration"]["used"], true);
  EXPECT_EQ(out["calibration"]["levels"]["RAM"]["load_bytes_per_cycle"], 2.0);
  const nlohmann::json& version = out["source_loops"][0]["versions"][0];
  EXPECT_EQ(version["memory_accesses"][0]["pattern"], "strided");
  EXPECT_EQ(version["memory_accesses"][0]["stride"], 4096);
  EXPECT_EQ(version["memory_levels"]["L2"]["cycles_per_iteration"], 10.0);
  EXPECT_EQ(version["memory_levels"]["RAM"]["cycles_per_iteration"], 40.0);
  EXPECT_EQ(version["memory_levels"]["RAM"]["bottleneck"], "RAM bandwidth");
}

// row_sums with 4 iterations per row (test_loops derives the 6.5 cycles
// per row on Skylake): the table's line and the JSON's with_trip_count.
TEST_F(LoopsCommand, TripCountGivesTheOverlappedRowFigure) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const std::string args = std::string(WEFT_LOOPS_MEMORY_STREAMS) +
                           " --function row_sums --cpu skylake --trip-count 4 --calibration " +
                           WEFT_LOOPS_FIXED_CALIBRATION;
  const CommandResult table = run(args);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("cycles per iteration (L1, 4 iterations per entry): 1.62 (the "
                           "enclosing loop's iteration simulated, its 14 own instructions "
                           "included)"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("TSC ticks: the file has no TSC ticks per core cycle"),
            std::string::npos)
      << table.out;
  const CommandResult json = run(args + " --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json out = nlohmann::json::parse(json.out);
  EXPECT_TRUE(out["calibration"]["tsc_ticks_per_core_cycle"].is_null());
  const nlohmann::json& version = out["source_loops"][0]["versions"][0];
  EXPECT_TRUE(version["enclosing_loop_header"].is_number());
  EXPECT_EQ(version["cycles_per_iteration"], 4.0);
  EXPECT_EQ(version["with_trip_count"]["trip_count"], 4);
  EXPECT_EQ(version["with_trip_count"]["simulated"], true);
  EXPECT_EQ(version["with_trip_count"]["inner_loops"], 1);
  EXPECT_EQ(version["with_trip_count"]["enclosing_instructions"], 14);
  EXPECT_EQ(version["with_trip_count"]["cycles_per_iteration"], 1.625);
  EXPECT_EQ(version["memory_levels"]["L2"]["cycles_per_iteration"], 1.625);
  // Without a trip count: null.
  const CommandResult plain = run(std::string(WEFT_LOOPS_MEMORY_STREAMS) +
                                  " --function row_sums --cpu skylake --format json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(nlohmann::json::parse(plain.out)["source_loops"][0]["versions"][0]["with_trip_count"]
                  .is_null());
}

TEST_F(LoopsCommand, WithoutCalibrationSaysOnceHowToGetOne) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const CommandResult r = run(std::string(WEFT_LOOPS_MEMORY_STREAMS) + " --cpu skylake");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string note =
      "note: no calibration of this machine: run `weft calibrate` for the L2 and RAM estimates";
  const size_t at = r.out.find(note);
  EXPECT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(note, at + 1), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(L2)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(RAM)"), std::string::npos) << r.out;
  const CommandResult json =
      run(std::string(WEFT_LOOPS_MEMORY_STREAMS) + " --cpu skylake --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json out = nlohmann::json::parse(json.out);
  EXPECT_EQ(out["calibration"]["used"], false);
  EXPECT_TRUE(out["calibration"]["levels"].is_null());
  EXPECT_TRUE(out["source_loops"][0]["versions"][0]["memory_levels"].is_null());
  expect_failure(std::string(WEFT_LOOPS_MEMORY_STREAMS) + " --calibration /nonexistent.json",
                 "cannot open calibration '/nonexistent.json'");
}

TEST_F(LoopsCommand, BadInputsAreOneLineCauses) {
  expect_failure("/nonexistent/program", "cannot open '/nonexistent/program': no such file");
  expect_failure(WEFT_LOOP_KERNELS_SOURCE, "is not an ELF file");
  if (!std::string(WEFT_LOOPS_STRIPPED).empty())
    expect_failure(WEFT_LOOPS_STRIPPED, "has no function symbols");
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  const std::string binary = WEFT_LOOPS_GCC_SCALAR;
  expect_failure(binary + " --cpu pentium9000", "llvm-mca-19 -mcpu=help");
  expect_failure(binary + " --function nothing_here", "no function named 'nothing_here'");
  expect_failure(binary + " --line loop_kernels.c", "--line wants FILE:LINE");
  expect_failure(binary + " --line loop_kernels.c:0", "--line wants FILE:LINE");
  expect_failure(binary + " --format csv", "csv");
  expect_failure(binary + " --trip-count 0", "--trip-count wants N or HEADER=N");
  expect_failure(binary + " --trip-count 0x401000=many", "--trip-count wants N or HEADER=N");
  expect_failure(binary + " --trip-count 16777217", "--trip-count wants N or HEADER=N");
}

// tests/loops/programs/table_lookups.c recorded under the Valgrind source
// (memory traces only) and analyzed with its profile and the fixed
// calibration (L1 32 KiB, L2 512 KiB and 20 cycles, RAM 2 B/cycle and 200
// cycles): each irregular table access gets the footprint the run touched
// and pays the latency of the nearest cache whose half holds it.
class TableLookups : public LoopsCommand {
 protected:
  void SetUp() override {
    LoopsCommand::SetUp();
    if (std::string(WEFT_LOOPS_TABLE_LOOKUPS).empty()) GTEST_SKIP() << "gcc is missing";
    profile_ = (dir_->path / "lookups.db").string();
    const CommandResult r =
        weft_test::run_command(kWeft + " record --backend valgrind --analyses traces -o " +
                                   profile_ + " -- " + WEFT_LOOPS_TABLE_LOOKUPS,
                               dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  // The one version of the source loop at table_lookups.c:LINE.
  nlohmann::json version(int line, bool with_profile) {
    const CommandResult r =
        run(std::string(WEFT_LOOPS_TABLE_LOOKUPS) + " --cpu skylake --format json --calibration " +
            WEFT_LOOPS_FIXED_CALIBRATION + " --line table_lookups.c:" + std::to_string(line) +
            (with_profile ? " --profile " + profile_ : ""));
    EXPECT_EQ(r.code, 0) << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out);
    EXPECT_EQ(out["source_loops"].size(), 1u) << r.out;
    EXPECT_EQ(out["source_loops"][0]["versions"].size(), 1u) << r.out;
    return out["source_loops"][0]["versions"][0];
  }
  // The version's irregular accesses.
  static std::vector<nlohmann::json> irregular(const nlohmann::json& v) {
    std::vector<nlohmann::json> found;
    for (const nlohmann::json& a : v["memory_accesses"])
      if (a["pattern"] == "irregular") found.push_back(a);
    return found;
  }
  std::string profile_;
};

// h[idx[i] % 256] += 1: one read-modify-write of 1 KiB of bins (17 lines:
// the array is not line-aligned), within half of the L1: no latency at
// either level; the idx stream brings 4 bytes per iteration (4/8 and 4/2
// cycles). Without the run, both accesses pay each level's latency.
TEST_F(TableLookups, ATableThatStaysInL1PaysNoLatency) {
  const nlohmann::json v = version(25, true);
  const std::vector<nlohmann::json> table = irregular(v);
  ASSERT_EQ(table.size(), 2u) << v["memory_accesses"].dump();
  for (const nlohmann::json& a : table) {
    ASSERT_TRUE(a.contains("recorded")) << a.dump();
    EXPECT_EQ(a["recorded"]["pattern"], "irregular");
    EXPECT_EQ(a["recorded"]["footprint_bytes"], 17 * 64) << a.dump();
    EXPECT_EQ(a["recorded"]["accesses"], 65536);
    EXPECT_EQ(a["recorded"]["per_iteration"], 1.0);
  }
  for (const char* level : {"L2", "RAM"}) {
    const nlohmann::json& m = v["memory_levels"][level];
    EXPECT_EQ(m["irregular_accesses"], 2) << level;
    EXPECT_EQ(m["cached_irregular_accesses"], 2) << level;
    EXPECT_EQ(m["latency_cycles"], 0.0) << level;
    EXPECT_EQ(m["load_bytes"], 4.0) << level;
  }
  EXPECT_DOUBLE_EQ(v["memory_levels"]["RAM"]["bandwidth_cycles"].get<double>(), 2.0);

  const nlohmann::json alone = version(25, false);
  EXPECT_EQ(alone["memory_levels"]["RAM"]["cached_irregular_accesses"], 0);
  EXPECT_DOUBLE_EQ(alone["memory_levels"]["RAM"]["latency_cycles"].get<double>(), 2 * 200 / 10.0);
  EXPECT_EQ(alone["memory_levels"]["RAM"]["bottleneck"], "RAM latency");
}

// A 128 KiB table (2,049 lines touched: malloc's block is not
// line-aligned): beyond half the L1, within half the L2, so L2's latency at
// both levels (20 / 10). A 4 MiB table: RAM's (200 / 10), the bound.
TEST_F(TableLookups, LargerTablesPayTheLatencyOfTheCacheThatHoldsThem) {
  const nlohmann::json small = version(31, true);
  ASSERT_EQ(irregular(small).size(), 1u) << small["memory_accesses"].dump();
  // Every line of the table and one more (the block starts 16 bytes into
  // a page): beyond half the L1 (16 KiB), within half the L2 (256 KiB).
  EXPECT_EQ(irregular(small)[0]["recorded"]["footprint_bytes"], 2049 * 64);
  // At the L2 level that is the level's own latency; at RAM, a nearer
  // cache's.
  EXPECT_EQ(small["memory_levels"]["L2"]["cached_irregular_accesses"], 0);
  EXPECT_EQ(small["memory_levels"]["RAM"]["cached_irregular_accesses"], 1);
  for (const char* level : {"L2", "RAM"})
    EXPECT_DOUBLE_EQ(small["memory_levels"][level]["latency_cycles"].get<double>(), 2.0) << level;

  const nlohmann::json large = version(38, true);
  ASSERT_EQ(irregular(large).size(), 1u) << large["memory_accesses"].dump();
  // 41,551 of its 65,537 lines drawn (the fixed sequence): beyond half the
  // L2.
  EXPECT_EQ(irregular(large)[0]["recorded"]["footprint_bytes"], 41551 * 64);
  EXPECT_EQ(large["memory_levels"]["RAM"]["cached_irregular_accesses"], 0);
  EXPECT_DOUBLE_EQ(large["memory_levels"]["RAM"]["latency_cycles"].get<double>(), 20.0);
  EXPECT_EQ(large["memory_levels"]["RAM"]["bottleneck"], "RAM latency");
  // At the L2 level it is an L2 access like any other.
  EXPECT_DOUBLE_EQ(large["memory_levels"]["L2"]["latency_cycles"].get<double>(), 2.0);

  // The table names the profile and each access's recorded pattern.
  const CommandResult table =
      run(std::string(WEFT_LOOPS_TABLE_LOOKUPS) + " --cpu skylake --calibration " +
          WEFT_LOOPS_FIXED_CALIBRATION + " --line table_lookups.c:25 --profile " + profile_);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("profile: " + profile_ + " ("), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("4 B, irregular (run: irregular over 1088 B)"), std::string::npos)
      << table.out;
}

TEST_F(TableLookups, AProfileThatCannotServeIsAOneLineCause) {
  const std::string binary = WEFT_LOOPS_TABLE_LOOKUPS;
  expect_failure(binary + " --profile " + (dir_->path / "missing.db").string(), "missing.db");
  const std::string comm_only = (dir_->path / "comm.db").string();
  const CommandResult r = weft_test::run_command(
      kWeft + " record --backend valgrind --analyses comm -o " + comm_only + " -- " + binary,
      dir_->path);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_failure(binary + " --profile " + comm_only,
                 "has no memory traces: record it with the traces analysis");
}

}  // namespace
