// The comm and report views on profiles written by the profile writer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzers/communication/communication_records.h"
#include "profile/profile_writer.h"
#include "support/hand_made_profile.h"
#include "views/comm_view.h"
#include "views/report_view.h"

namespace weft_views_test {

__attribute__((noinline)) int stencil(const volatile int* cell) { return *cell + 1; }
__attribute__((noinline)) void reduce(volatile int* cell) { *cell = 1; }

}  // namespace weft_views_test

namespace weft {
namespace {

const uint64_t kStencilPc = reinterpret_cast<uint64_t>(&weft_views_test::stencil);
const uint64_t kReducePc = reinterpret_cast<uint64_t>(&weft_views_test::reduce);
constexpr const char* kStencil = "weft_views_test::stencil(int const volatile*)";

// Three threads.
//   raw: [0][1] = 4 (stencil), [1][2] = 3 (stencil), [2][0] = 10 (reduce)
//   rar: [0][1] = 6 (stencil), [1][2] = 1 (stencil), [2][1] = 5 (reduce, raw there is 0)
RunCapture sample_capture() {
  RunCapture capture = weft_test::capture_of_this_process(64, 3);
  capture.threads = {{.id = 0}, {.id = 1, .parent = 0}, {.id = 2, .parent = 0}};
  capture.set_records(
      kCommunicationCounts,
      {
          {.pc = kStencilPc, .thread = 1, .peer = 0, .raw = 4, .rar = 6},
          {.pc = kStencilPc, .thread = 2, .peer = 1, .raw = 3, .rar = 1},
          {.pc = kReducePc, .thread = 0, .peer = 2, .raw = 10, .rar = 0, .inval = 2},
          {.pc = kReducePc, .thread = 1, .peer = 2, .raw = 0, .rar = 5},
      });
  return capture;
}

RunInfo sample_info() {
  RunInfo info;
  info.command = "./stencil";
  info.args = {"-n", "100", "two words"};
  info.start_time = std::chrono::system_clock::from_time_t(1700000000);
  info.duration_s = 2.25;
  info.exit_status = 0;
  info.topology = "1 package, 4 cores";
  info.hostname = "bench-host";
  return info;
}

class ViewsTest : public weft_test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/run.weft";
    build_profile(sample_capture(), sample_info(), path_);
  }

  std::string comm(CommKind kind, OutputFormat format,
                   std::optional<std::string> region = std::nullopt) {
    Profile profile = Profile::open(path_);
    return render_comm(find_comm(profile, {.region = region, .kind = kind}), format);
  }

  std::string path_;
};

TEST_F(ViewsTest, CommCsvHeaderAndRows) {
  EXPECT_EQ(comm(CommKind::Raw, OutputFormat::Csv),
            "writer\\reader,t0,t1,t2\n"
            "t0,0,4,0\n"
            "t1,0,0,3\n"
            "t2,10,0,0\n");
  EXPECT_EQ(comm(CommKind::Rar, OutputFormat::Csv, kStencil),
            "writer\\reader,t0,t1,t2\n"
            "t0,0,6,0\n"
            "t1,0,0,1\n"
            "t2,0,0,0\n");
  EXPECT_EQ(comm(CommKind::Inval, OutputFormat::Csv),
            "writer\\reader,t0,t1,t2\n"
            "t0,0,0,2\n"
            "t1,0,0,0\n"
            "t2,0,0,0\n");
}

TEST_F(ViewsTest, CrrDividesReuseByCommunication) {
  // 6/4 = 1.50, 1/3 = 0.33, and 0 where raw is 0 even though rar[2][1] = 5.
  EXPECT_EQ(comm(CommKind::Crr, OutputFormat::Csv),
            "writer\\reader,t0,t1,t2\n"
            "t0,0.00,1.50,0.00\n"
            "t1,0.00,0.00,0.33\n"
            "t2,0.00,0.00,0.00\n");

  auto json = nlohmann::json::parse(comm(CommKind::Crr, OutputFormat::Json));
  EXPECT_EQ(json["kind"], "crr");
  EXPECT_DOUBLE_EQ(json["matrix"][0][1].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(json["matrix"][1][2].get<double>(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(json["matrix"][2][1].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(json["total"].get<double>(), 12.0 / 17.0);  // all rar / all raw
}

TEST_F(ViewsTest, CommJsonFields) {
  auto whole = nlohmann::json::parse(comm(CommKind::Raw, OutputFormat::Json));
  EXPECT_TRUE(whole["region"].is_null());
  EXPECT_EQ(whole["kind"], "raw");
  EXPECT_EQ(whole["threads"], nlohmann::json({0, 1, 2}));
  EXPECT_EQ(whole["matrix"], nlohmann::json({{0, 4, 0}, {0, 0, 3}, {10, 0, 0}}));
  EXPECT_EQ(whole["total"], 17);

  auto region = nlohmann::json::parse(comm(CommKind::Raw, OutputFormat::Json, kStencil));
  EXPECT_EQ(region["region"], kStencil);
  EXPECT_EQ(region["matrix"], nlohmann::json({{0, 4, 0}, {0, 0, 3}, {0, 0, 0}}));
  EXPECT_EQ(region["total"], 7);

  // A function's base name selects it too.
  auto by_base_name = nlohmann::json::parse(
      comm(CommKind::Raw, OutputFormat::Json, std::string("weft_views_test::stencil")));
  EXPECT_EQ(by_base_name["total"], 7);
}

TEST_F(ViewsTest, CommTableHasCornerHeadersAndTotals) {
  std::string table = comm(CommKind::Raw, OutputFormat::Table);
  EXPECT_NE(table.find("\n"
                       "w\\r     0  1  2  total\n"
                       "0       0  4  0      4\n"
                       "1       0  0  3      3\n"
                       "2      10  0  0     10\n"
                       "total  10  4  3     17\n"),
            std::string::npos)
      << table;

  std::string crr = comm(CommKind::Crr, OutputFormat::Table);
  EXPECT_NE(crr.find("1.50"), std::string::npos) << crr;
  EXPECT_NE(crr.find("0.71"), std::string::npos) << crr;  // 12 / 17
}

TEST_F(ViewsTest, CommUnknownRegionFails) {
  EXPECT_THROW(comm(CommKind::Raw, OutputFormat::Csv, std::string("nope")), ProfileError);
}

TEST_F(ViewsTest, ReportTable) {
  Profile profile = Profile::open(path_);
  std::string report = render_report(find_report(profile, {}), OutputFormat::Table);
  EXPECT_NE(report.find("./stencil -n 100 'two words'"), std::string::npos) << report;
  EXPECT_NE(report.find("complete"), std::string::npos);
  EXPECT_NE(report.find("status 0"), std::string::npos);
  EXPECT_NE(report.find("1 package, 4 cores"), std::string::npos);
  // reduce (raw 10 + rar 5) ranks above stencil (raw 7 + rar 7).
  size_t reduce = report.find("weft_views_test::reduce(int volatile*)");
  size_t stencil = report.find(kStencil);
  ASSERT_NE(reduce, std::string::npos) << report;
  ASSERT_NE(stencil, std::string::npos) << report;
  EXPECT_LT(reduce, stencil);
  EXPECT_NE(report.find("test_views.cpp:"), std::string::npos);
  EXPECT_NE(report.find("Whole-program raw communication"), std::string::npos);
  EXPECT_NE(report.find("|@  |"), std::string::npos) << report;  // writer 2 -> reader 0 = max
}

TEST_F(ViewsTest, ReportJson) {
  Profile profile = Profile::open(path_);
  auto report = nlohmann::json::parse(render_report(find_report(profile, {}), OutputFormat::Json));
  EXPECT_EQ(report["run"]["command"], "./stencil");
  EXPECT_EQ(report["run"]["args"], nlohmann::json({"-n", "100", "two words"}));
  EXPECT_EQ(report["run"]["exit_status"], 0);
  EXPECT_TRUE(report["run"]["exit_signal"].is_null());
  EXPECT_EQ(report["run"]["complete"], true);
  EXPECT_EQ(report["run"]["threads"], 3);
  EXPECT_DOUBLE_EQ(report["run"]["duration_s"].get<double>(), 2.25);
  ASSERT_EQ(report["top_regions"].size(), 2u);
  EXPECT_EQ(report["top_regions"][0]["name"], "weft_views_test::reduce(int volatile*)");
  EXPECT_EQ(report["top_regions"][0]["raw"], 10);
  EXPECT_EQ(report["top_regions"][0]["rar"], 5);
  EXPECT_EQ(report["top_regions"][1]["kind"], "function");
  ASSERT_EQ(report["top_pairs"].size(), 4u);  // the four non-zero writer->reader pairs
  EXPECT_EQ(report["top_pairs"][0],
            nlohmann::json({{"writer", 0}, {"reader", 1}, {"raw", 4}, {"rar", 6}}));
  EXPECT_EQ(report["heatmap"]["max"], 10);
  EXPECT_EQ(report["heatmap"]["rows"][2], "@  ");

  EXPECT_THROW(render_report(find_report(profile, {}), OutputFormat::Csv), ViewError);
}

TEST_F(ViewsTest, ReportOfPlaceholderSaysIncomplete) {
  const std::string path = dir_ + "/dead.weft";
  RunInfo info = sample_info();
  info.exit_status.reset();
  info.exit_signal = "SIGSEGV";
  write_placeholder_profile(path, info, "compile", 64, "the program crashed before saving");
  Profile profile = Profile::open(path);
  std::string report = render_report(find_report(profile, {}), OutputFormat::Table);
  EXPECT_NE(report.find("INCOMPLETE: the program crashed before saving"), std::string::npos)
      << report;
  EXPECT_NE(report.find("killed by SIGSEGV"), std::string::npos);
  EXPECT_NE(report.find("no communication recorded"), std::string::npos);

  EXPECT_EQ(render_comm(find_comm(profile, {}), OutputFormat::Csv), "writer\\reader\n");
  auto json = nlohmann::json::parse(render_comm(find_comm(profile, {}), OutputFormat::Json));
  EXPECT_EQ(json["matrix"], nlohmann::json::array());
  EXPECT_EQ(json["total"], 0);
}

TEST(Heatmap, RampAndScaling) {
  Heatmap heatmap = make_heatmap({{0, 100, 1}, {50, 0, 0}, {0, 0, 0}});
  EXPECT_EQ(heatmap.bucket, 1u);
  EXPECT_EQ(heatmap.max, 100u);
  ASSERT_EQ(heatmap.rows.size(), 3u);
  EXPECT_EQ(heatmap.rows[0], " @.");  // any non-zero cell is visible
  EXPECT_EQ(heatmap.rows[1], "+  ");  // 50% of the max: step ceil(4.5) = 5 of 9
  EXPECT_EQ(heatmap.rows[2], "   ");
}

TEST(Heatmap, BucketsManyThreadsIntoSixtyFourColumns) {
  const size_t threads = 130;
  CommunicationMatrix matrix(threads, std::vector<uint64_t>(threads, 0));
  matrix[0][129] = 7;
  matrix[1][128] = 3;
  Heatmap heatmap = make_heatmap(matrix);
  EXPECT_EQ(heatmap.bucket, 3u);
  ASSERT_EQ(heatmap.rows.size(), 44u);
  EXPECT_EQ(heatmap.rows[0].size(), 44u);
  EXPECT_EQ(heatmap.cells[0][43], 7u);  // threads 129..131 -> column 43
  EXPECT_EQ(heatmap.cells[0][42], 3u);  // threads 126..128 -> column 42
  EXPECT_EQ(heatmap.rows[0].substr(41), " =@");
}

}  // namespace
}  // namespace weft
