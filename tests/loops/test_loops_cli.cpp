// `weft loops` as a user meets it: a table and JSON on an unmodified
// executable and on a shared library named directly, and one-line causes
// with exit status 1 for a missing file, a non-ELF file, a stripped binary,
// an unknown CPU, an unknown function, a bad --line or --trip-count and
// CSV; a trip count's figure.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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
  EXPECT_NE(r.out.find("CPU model: skylake (LLVM 14), vectors 256 bits"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("source loop loop_kernels.c:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cycles per iteration (L1): 4.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bottleneck: execution port SKLFPDivider (divsd)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hint: divider bound: multiply by the reciprocal"), std::string::npos);
  EXPECT_NE(r.out.find("hint: scalar FP: not vectorized"), std::string::npos);
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
  expect_failure(binary + " --cpu pentium9000", "llvm-mca-14 -mcpu=help");
  expect_failure(binary + " --function nothing_here", "no function named 'nothing_here'");
  expect_failure(binary + " --line loop_kernels.c", "--line wants FILE:LINE");
  expect_failure(binary + " --line loop_kernels.c:0", "--line wants FILE:LINE");
  expect_failure(binary + " --format csv", "csv");
  expect_failure(binary + " --trip-count 0", "--trip-count wants N or HEADER=N");
  expect_failure(binary + " --trip-count 0x401000=many", "--trip-count wants N or HEADER=N");
  expect_failure(binary + " --trip-count 16777217", "--trip-count wants N or HEADER=N");
}

}  // namespace
