// The command line as a user meets it: every malformed option is one line
// on stderr and exit status 1; sizes take CLI11's units; nothing after `--`
// is read by weft; every view warns about an incomplete profile, in its
// table or, for CSV and JSON, on stderr.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/command_runner.h"

namespace {

using weft_test::CommandResult;
using weft_test::run_command;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kRing = std::string(EXAMPLES_DIR) + "/ring_pthreads.gcc.O2";

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

class CommandLine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new weft_test::TempDir("weft-test-cli");
    const CommandResult r = run_command(
        kWeft + " record -o " + profile() + " --analyses comm,crd -- " + kRing, dir_->path);
    // Runs that get past the options write here, not into the working directory.
    out_ = " -o " + (dir_->path / "scratch.db").string() + " ";
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string profile() { return (dir_->path / "ring.db").string(); }
  CommandResult run(const std::string& args) { return run_command(kWeft + " " + args, dir_->path); }

  static weft_test::TempDir* dir_;
  static std::string out_;
};
weft_test::TempDir* CommandLine::dir_ = nullptr;
std::string CommandLine::out_;

// Status 1 for the views, 125 for `weft record` (its program's statuses
// stay the program's: docs/commands.md, "Exit status").
TEST_F(CommandLine, MalformedOptionsAreOneLineWithTheCommandsFailureStatus) {
  const std::string p = profile();
  const std::pair<std::string, std::string> cases[] = {
      {"record" + out_ + "--granularity x -- " + kRing, "--granularity"},
      {"record" + out_ + "--trace-budget 12Q -- " + kRing, "--trace-budget"},
      {"record" + out_ + "--line-size 48 -- " + kRing, "--line-size 48 is not a power of two"},
      {"record" + out_ + "--crd-max-granules -1 -- " + kRing, "--crd-max-granules"},
      {"record" + out_ + "--analyses comm,,crd -- " + kRing, "unknown analysis ''"},
      {"record" + out_ + "--miss-penalties 1,2 -- " + kRing, "--miss-penalties"},
      {"comm " + p + " --kind war", "--kind"},
      {"comm " + p + " --format xml", "--format"},
      {"report " + p + " --format csv", "csv"},
      {"report " + p + " --top 0", "--top"},
      {"crd " + p + " --cache-size 12abc", "--cache-size"},
      {"crd " + p + " --cache-size 0", "--cache-size 0"},
      {"imbalance " + p + " --time seconds", "--time"},
      {"trace " + p + " --pc zz", "--pc"},
      {"comm " + p + " --no-such-option", "no-such-option"},
      {"frobnicate", "subcommand"},
      {"", "subcommand"},
  };
  for (const auto& [args, expected] : cases) {
    const CommandResult r = run(args);
    EXPECT_EQ(r.code, args.rfind("record", 0) == 0 ? 125 : 1) << args;
    EXPECT_TRUE(one_line(r.err)) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("weft: ", 0), 0u) << args << ": " << r.err;
  }
}

TEST_F(CommandLine, SizesTakeTheUsualUnits) {
  // 64K, 64KiB, 64kb are 65536 bytes (K = 1024): the max cutoff is 1024 granules.
  for (const char* size : {"65536", "64K", "64KiB", "64kb", "64k"}) {
    const CommandResult r = run("crd " + profile() + " --format json --cache-size " + size);
    ASSERT_EQ(r.code, 0) << size << ": " << r.err;
    const nlohmann::json crd = nlohmann::json::parse(r.out);
    ASSERT_FALSE(crd.empty());
    EXPECT_EQ(crd[0]["cache_bytes"], 65536) << size;
    EXPECT_EQ(crd[0]["cache_source"], "cache-size") << size;
    EXPECT_EQ(crd[0]["max_cutoff"], 1024) << size;
    EXPECT_EQ(crd[0]["kind"], "program") << size;
  }
  const CommandResult big = run("crd " + profile() + " --format json --cache-size 1G");
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(nlohmann::json::parse(big.out)[0]["cache_bytes"], 1 << 30);
  for (const char* bad : {"M", "-5", "12abc", "99999999999999999999", "17179869184G"}) {
    const CommandResult r = run("crd " + profile() + " --cache-size " + bad);
    EXPECT_EQ(r.code, 1) << bad;
    EXPECT_TRUE(one_line(r.err)) << bad << ": " << r.err;
  }
}

TEST_F(CommandLine, EverythingAfterTheSeparatorBelongsToTheProgram) {
  // /bin/echo is not built with weft: weft keeps a placeholder profile and
  // fails (125), but the program ran with exactly these arguments, whichever
  // record option (a list, a size, a flag with a value) came last before
  // the separator.
  const std::string out = (dir_->path / "echo.db").string();
  const std::string options[] = {"--analyses comm",
                                 "--analyses comm,crd,imbalance,falseshare,traces",
                                 "--backend compile",
                                 "--granularity 8",
                                 "--max-threads 16",
                                 "--crd-max-granules 100",
                                 "--cache 32K:8,1M:8,8M:16",
                                 "--miss-penalties 12,40,200",
                                 "--line-size 64",
                                 "--trace-budget 4M",
                                 "--analyses comm --line-size 64"};
  for (const std::string& option : options) {
    const CommandResult r =
        run("record -o " + out + " " + option + " -- /bin/echo -x 1 -o --help -- --analyses");
    EXPECT_EQ(r.out, "-x 1 -o --help -- --analyses\n") << option;
    EXPECT_EQ(r.code, 125) << option;
    EXPECT_NE(r.err.find("did not load weft's runtime"), std::string::npos) << option << r.err;
  }
}

TEST_F(CommandLine, EveryViewWarnsAboutAnIncompleteProfile) {
  // A placeholder (the program never loaded weft's runtime) holds the
  // communication analysis' empty tables.
  const std::string out = (dir_->path / "placeholder.db").string();
  run("record -o " + out + " -- /bin/true");
  for (const char* view : {"comm", "report"}) {
    const CommandResult json = run(std::string(view) + " " + out + " --format json");
    EXPECT_EQ(json.code, 0) << view << ": " << json.err;
    EXPECT_TRUE(one_line(json.err)) << view << ": " << json.err;
    EXPECT_NE(json.err.find("INCOMPLETE"), std::string::npos) << view << ": " << json.err;
    EXPECT_NO_THROW(nlohmann::json::parse(json.out)) << view;
    const CommandResult table = run(std::string(view) + " " + out);
    EXPECT_EQ(table.code, 0) << view << ": " << table.err;
    EXPECT_EQ(table.err, "") << view;
    EXPECT_NE(table.out.find("INCOMPLETE"), std::string::npos) << view << ": " << table.out;
  }
  // Views of analyses that did not run refuse in one line.
  for (const char* view : {"crd", "imbalance", "falseshare", "trace"}) {
    const CommandResult r = run(std::string(view) + " " + out);
    EXPECT_EQ(r.code, 1) << view;
    EXPECT_TRUE(one_line(r.err)) << view << ": " << r.err;
  }
}

}  // namespace
