// `weft predict` end to end: a small program recorded with the reuse
// analysis at three problem sizes, predicted and scored; and every bad
// input (no size, a profile without one, a missing file, a profile without
// the reuse analysis) is one line on stderr and exit status 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/command_runner.h"

namespace {

using weft_test::CommandResult;
using weft_test::run_command;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kWeftCc = std::string(WEFT_BIN_DIR) + "/weft-cc";
// 1-D heat conduction: the workers re-read, every step, conductances the
// main thread wrote (remote granules), at distances that grow with N.
const std::string kSource = std::string(WEFT_EXAMPLES_SOURCE_DIR) + "/heat_steps_pthreads.c";
// A rod split over T threads, each reading its neighbours' edge cells:
// end ranks differ from the middle ones (docs in the source).
const std::string kRod = std::string(WEFT_EXAMPLES_SOURCE_DIR) + "/rod_halo_pthreads.c";

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

class PredictCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new weft_test::TempDir("weft-test-predict");
    const std::string program = path("heat");
    CommandResult r =
        run_command(kWeftCc + " -O1 -pthread -std=gnu11 -I" + std::string(WEFT_INCLUDE_DIR) +
                        " -o " + program + " " + kSource,
                    dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* n : {"1024", "2048", "4096"}) {
      r = run_command(kWeft + " record --analyses reuse --problem-size " + n + " -o " +
                          path(std::string("n") + n + ".weft") + " -- " + program + " 4 " + n +
                          " 3",
                      dir_->path);
      ASSERT_EQ(r.code, 0) << r.err;
    }
    r = run_command(kWeftCc + " -O1 -pthread -std=gnu11 -o " + path("rod") + " " + kRod,
                    dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* t : {"4", "6", "10"}) {
      r = run_command(kWeft + " record --analyses reuse --problem-size 64 -o " +
                          path(std::string("rod") + t + ".weft") + " -- " + path("rod") + " " + t +
                          " 5",
                      dir_->path);
      ASSERT_EQ(r.code, 0) << r.err;
    }
    r = run_command(kWeft + " record --analyses reuse -o " + path("nosize.weft") + " -- " +
                        program + " 4 1024 3",
                    dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
    r = run_command(kWeft + " record --analyses comm --problem-size 1024 -o " + path("comm.weft") +
                        " -- " + program + " 4 1024 3",
                    dir_->path);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string path(const std::string& name) { return (dir_->path / name).string(); }
  CommandResult predict(const std::string& args) {
    return run_command(kWeft + " predict " + args, dir_->path);
  }
  static weft_test::TempDir* dir_;
};
weft_test::TempDir* PredictCommand::dir_ = nullptr;

TEST_F(PredictCommand, WithoutASizeOrAReferenceIsAOneLineError) {
  const CommandResult r = predict(path("n1024.weft") + " " + path("n2048.weft"));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(PredictCommand, AProfileWithoutProblemSizeNamesTheOption) {
  CommandResult r = predict(path("nosize.weft") + " " + path("n2048.weft") + " --size 4096");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("no problem size"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--test-size"), std::string::npos) << r.err;
  // Given on the command line, it is enough.
  r = predict(path("nosize.weft") + " " + path("n2048.weft") + " --size 4096 --test-size 1024");
  EXPECT_EQ(r.code, 0) << r.err;
  // The reference's size, with --against.
  r = predict(path("n1024.weft") + " " + path("n2048.weft") + " --against " + path("nosize.weft"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
}

TEST_F(PredictCommand, MissingFilesAndProfilesWithoutReuseAreOneLineErrors) {
  CommandResult r = predict(path("absent.weft") + " " + path("n2048.weft") + " --size 4096");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  r = predict(path("comm.weft") + " " + path("n2048.weft") + " --size 4096");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("reuse"), std::string::npos) << r.err;
  r = predict(path("n1024.weft") + " " + path("n2048.weft") + " --size 4096 --format csv");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
}

TEST_F(PredictCommand, ARunPredictedFromItselfIsCoveredAndCorrect) {
  const std::string run = path("n2048.weft");
  const CommandResult r = predict(run + " " + run + " --against " + run + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pattern_function"], "identity");
  EXPECT_GT(j["overall"]["operations"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(j["overall"]["accuracy"].get<double>(), 1);
  EXPECT_FALSE(j["instructions"].empty());
  EXPECT_FALSE(j["threads"].empty());
}

TEST_F(PredictCommand, PredictsALargerRunAndScoresIt) {
  CommandResult r = predict(path("n1024.weft") + " " + path("n2048.weft") +
                            " --size 4096 --cache 32K,1M --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reference"]["size"], 4096);
  EXPECT_EQ(j["reference"]["threads"], 5);  // TRAIN's: 4 workers and the main thread
  EXPECT_EQ(j["test"]["size"], 1024);
  ASSERT_EQ(j["miss_ratios"].size(), 2u);
  // Every predicted reuse is closer than 32 KiB (512 granules): both caches
  // miss only the first accesses, the same share.
  EXPECT_GT(j["miss_ratios"][0].get<double>(), 0);
  EXPECT_LT(j["miss_ratios"][0].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j["miss_ratios"][0].get<double>(), j["miss_ratios"][1].get<double>());
  EXPECT_FALSE(j["instructions"].empty());

  r = predict(path("n1024.weft") + " " + path("n2048.weft") + " --against " + path("n4096.weft") +
              " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  // Every remote reuse of the 4096 run is predicted, and predicted right.
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"].get<double>(), 1) << r.out;
  EXPECT_DOUBLE_EQ(j["overall"]["accuracy"].get<double>(), 1) << r.out;

  r = predict(path("n1024.weft") + " " + path("n2048.weft") + " --against " + path("n4096.weft"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("overall: coverage"), std::string::npos) << r.out;
}

TEST_F(PredictCommand, ThreadScalingOfTheRodMapsEndsAndMiddles) {
  const CommandResult r = predict(path("rod4.weft") + " " + path("rod6.weft") + " --against " +
                                  path("rod10.weft") + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reference"]["threads"], 10);
  EXPECT_EQ(j["test"]["threads"], 4);
  ASSERT_EQ(j["threads"].size(), 10u);  // every rank reads a neighbour
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"].get<double>(), 1) << r.out;
  EXPECT_DOUBLE_EQ(j["overall"]["accuracy"].get<double>(), 1) << r.out;
}

}  // namespace
