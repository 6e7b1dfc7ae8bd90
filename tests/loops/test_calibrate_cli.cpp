// `weft calibrate` on this machine (integration: it measures the live
// machine, so only sanity is asserted, never values): it writes the
// calibration where docs/commands.md says, a second run reuses it (fast),
// --force measures again, L1 is faster than RAM both ways, and `weft loops`
// then uses it without being told.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/command_runner.h"

namespace {

using weft_test::CommandResult;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";

class CalibrateCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::make_unique<weft_test::TempDir>("weft-test-calibrate"); }
  // The command's result and its wall time in seconds.
  std::pair<CommandResult, double> run(const std::string& command) {
    const auto start = std::chrono::steady_clock::now();
    CommandResult result = weft_test::run_command(
        "WEFT_CACHE_DIR=" + (dir_->path / "cache").string() + " " + kWeft + " " + command,
        dir_->path);
    return {result,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  }
  std::unique_ptr<weft_test::TempDir> dir_;
};

TEST_F(CalibrateCommand, MeasuresOnceStoresReusesAndForces) {
  const auto [first, first_seconds] = run("calibrate --format json");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_LE(first_seconds, 20.0);
  const std::filesystem::path stored = dir_->path / "cache" / "calibration.json";
  ASSERT_TRUE(std::filesystem::exists(stored));
  const nlohmann::json measured = nlohmann::json::parse(first.out);
  EXPECT_EQ(measured["reused"], false);
  EXPECT_EQ(measured["reason"], "no calibration file");
  EXPECT_EQ(measured["path"], stored.string());
  EXPECT_GT(measured["tsc_hz"].get<double>(), 1e8);
  // The core clock the TSC-per-core-cycle ratio implies is one an x86 core
  // runs at (an add chain, which Golden Cove cores fold in the renamer, gave
  // 17.5 GHz on a Sapphire Rapids VM).
  ASSERT_TRUE(measured["tsc_ticks_per_core_cycle"].is_number()) << first.out;
  const double core_hz =
      measured["tsc_hz"].get<double>() / measured["tsc_ticks_per_core_cycle"].get<double>();
  EXPECT_GT(core_hz, 0.4e9) << first.out;
  EXPECT_LT(core_hz, 6.5e9) << first.out;

  // Sane numbers: every figure positive, L1 faster than RAM both ways.
  std::map<std::string, nlohmann::json> levels;
  for (const nlohmann::json& level : measured["levels"]) {
    EXPECT_GT(level["load_bytes_per_cycle"].get<double>(), 0) << level;
    EXPECT_GT(level["store_bytes_per_cycle"].get<double>(), 0) << level;
    EXPECT_GT(level["latency_cycles"].get<double>(), 0) << level;
    levels[level["level"].get<std::string>()] = level;
  }
  ASSERT_TRUE(levels.count("L1") && levels.count("L2") && levels.count("RAM")) << first.out;
  EXPECT_GT(levels["L1"]["load_bytes_per_cycle"].get<double>(),
            levels["RAM"]["load_bytes_per_cycle"].get<double>());
  EXPECT_GT(levels["L1"]["store_bytes_per_cycle"].get<double>(),
            levels["RAM"]["store_bytes_per_cycle"].get<double>());
  EXPECT_GT(levels["RAM"]["latency_cycles"].get<double>(),
            levels["L1"]["latency_cycles"].get<double>());
  EXPECT_GT(levels["RAM"]["latency_cycles"].get<double>(),
            levels["L2"]["latency_cycles"].get<double>());
  // Every mix of 0-4 load and 0-2 store streams for L2 and RAM, the levels
  // `weft loops` estimates; none for the others.
  for (const char* name : {"L2", "RAM"}) {
    ASSERT_TRUE(levels[name].contains("stream_mixes")) << name;
    std::set<std::pair<unsigned, unsigned>> mixes;
    for (const nlohmann::json& mix : levels[name]["stream_mixes"]) {
      EXPECT_GT(mix["bytes_per_cycle"].get<double>(), 0) << name << mix;
      mixes.insert({mix["loads"].get<unsigned>(), mix["stores"].get<unsigned>()});
    }
    EXPECT_EQ(mixes.size(), 14u) << name;
    EXPECT_EQ(mixes.count({4, 2}), 1u) << name;
    EXPECT_EQ(mixes.count({0, 0}), 0u) << name;
  }
  EXPECT_FALSE(levels["L1"].contains("stream_mixes"));

  // Reused: the same figures, no measurement.
  const auto [second, second_seconds] = run("calibrate --format json");
  ASSERT_EQ(second.code, 0) << second.err;
  const nlohmann::json reused = nlohmann::json::parse(second.out);
  EXPECT_EQ(reused["reused"], true);
  EXPECT_EQ(reused["levels"], measured["levels"]);
  EXPECT_LT(second_seconds, 2.0);
  EXPECT_LT(second_seconds, first_seconds);

  // The table says where the file is and that it was reused.
  const auto [table, table_seconds] = run("calibrate");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("calibration: " + stored.string() + " (measured "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("--force measures again"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("latency cycles"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("RAM stream mixes"), std::string::npos) << table.out;

  // A file written before weft measured the stream mixes is measured again.
  {
    nlohmann::json old = nlohmann::json::parse(weft_test::slurp(stored));
    for (nlohmann::json& level : old["levels"]) level.erase("stream_mixes");
    std::ofstream(stored) << old.dump(2);
  }
  const auto [stale, stale_seconds] = run("calibrate --format json");
  ASSERT_EQ(stale.code, 0) << stale.err;
  const nlohmann::json refreshed = nlohmann::json::parse(stale.out);
  EXPECT_EQ(refreshed["reused"], false);
  EXPECT_EQ(refreshed["reason"], "the stored calibration has no mixed load/store streams");
  EXPECT_TRUE(weft_test::slurp(stored).find("stream_mixes") != std::string::npos);

  // --force measures again.
  const auto [forced, forced_seconds] = run("calibrate --force --format json");
  ASSERT_EQ(forced.code, 0) << forced.err;
  const nlohmann::json remeasured = nlohmann::json::parse(forced.out);
  EXPECT_EQ(remeasured["reused"], false);
  EXPECT_EQ(remeasured["reason"], "--force");
  EXPECT_LE(forced_seconds, 20.0);

  // `weft loops` finds it in the cache directory.
  if (std::string(WEFT_LOOPS_MEMORY_STREAMS).empty()) return;
  const auto [loops, loops_seconds] =
      run("loops " + std::string(WEFT_LOOPS_MEMORY_STREAMS) + " --function triad --format json");
  ASSERT_EQ(loops.code, 0) << loops.err;
  const nlohmann::json out = nlohmann::json::parse(loops.out);
  EXPECT_EQ(out["calibration"]["used"], true);
  EXPECT_EQ(out["calibration"]["path"], stored.string());
  EXPECT_FALSE(out["source_loops"][0]["versions"][0]["memory_levels"].is_null());
}

TEST_F(CalibrateCommand, CsvIsRefused) {
  const auto [r, seconds] = run("calibrate --format csv");
  EXPECT_NE(r.code, 0);
}

}  // namespace
