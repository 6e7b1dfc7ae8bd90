// The set-up of a test that writes a hand-made profile: a RunCapture of
// this test process (its memory map, so that the pcs of its own functions
// symbolize and fall in regions), a RunInfo, and a temporary directory.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "profile/profile_writer.h"

namespace weft_test {

// Complete, with this process's maps; the caller sets the analyses, threads
// and records.
inline weft::RunCapture capture_of_this_process(unsigned granularity, unsigned max_threads) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  weft::RunCapture capture;
  capture.complete = true;
  capture.granularity = granularity;
  capture.max_threads = max_threads;
  capture.process_maps = text.str();
  return capture;
}

// "./app", exited 0, with a last-level cache of `llc_bytes`.
inline weft::RunInfo hand_made_run_info(uint64_t llc_bytes) {
  weft::RunInfo info;
  info.command = "./app";
  info.start_time = std::chrono::system_clock::from_time_t(1700000000);
  info.exit_status = 0;
  info.llc_bytes = llc_bytes;
  return info;
}

// A fixture with a fresh directory, removed after the test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/weft-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

}  // namespace weft_test
