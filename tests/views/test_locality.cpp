// The locality findings on hand-made profiles (cache model, CRD entries,
// report, diff) and the crd, comm, report and diff views that render them.
// The pure metrics are tested in tests/findings/test_locality_metrics.cpp.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/communication/communication_records.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/crd/crd_records.h"
#include "findings/finding_error.h"
#include "findings/locality.h"
#include "findings/suggestions.h"
#include "profile/profile_writer.h"
#include "profile/sqlite_db.h"
#include "support/communication_with_crd.h"
#include "support/hand_made_profile.h"
#include "views/comm_view.h"
#include "views/crd_view.h"
#include "views/diff_view.h"
#include "views/report_view.h"

namespace weft_crd_test {

// Returns the address of an instruction inside its loop, so that a capture
// can attribute events to a loop region nested in this function.
__attribute__((noinline)) uint64_t stage(int rounds) {
  uint64_t where = 0;
  for (int i = 0; i < rounds; ++i) {
    asm volatile("lea 0(%%rip), %0" : "=r"(where));
  }
  return where;
}
__attribute__((noinline)) int gather(const volatile int* cell) { return *cell + 2; }
__attribute__((noinline)) int extra(const volatile int* cell) { return *cell + 3; }

}  // namespace weft_crd_test

namespace weft {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Views on hand-made profiles

const uint64_t kLoopPc = weft_crd_test::stage(2);
const uint64_t kStagePc = reinterpret_cast<uint64_t>(&weft_crd_test::stage);
const uint64_t kGatherPc = reinterpret_cast<uint64_t>(&weft_crd_test::gather);
const uint64_t kExtraPc = reinterpret_cast<uint64_t>(&weft_crd_test::extra);
constexpr const char* kStage = "weft_crd_test::stage(int)";
constexpr const char* kGather = "weft_crd_test::gather(int const volatile*)";
constexpr const char* kExtra = "weft_crd_test::extra(int const volatile*)";

// Three threads, granularity 8, an 8 KiB last-level cache (1024 granules).
//   loop of stage:  pair 0->1 distances 0, 1 x2, 3, 100 x4, 2000 x2 (10), 3 unmeasured;
//                   raw[0][1] = 10, rar[0][1] = 3; 1000 private granules (min cutoff 512,
//                   half the cache: 1024 - 1000 would be 24)
//   stage itself:   pair 2->1 distance 5 x3; raw[2][1] = 3; 24 private, 10 shared
//   gather:         pair 1->2 distance 50 x6; raw/rar [1][2] = 2/20, [0][2] = 4/4, [2][0] = 5/0
RunCapture crd_capture(uint64_t far_distance = 100) {
  RunCapture capture = weft_test::capture_of_this_process(8, 3);
  capture.analyses = {AnalysisId::Communication, AnalysisId::Crd};
  capture.threads = {{.id = 0}, {.id = 1, .parent = 0}, {.id = 2, .parent = 0}};
  capture.set_records(kCommunicationCounts,
                      {
                          {.pc = kLoopPc, .thread = 1, .peer = 0, .raw = 10, .rar = 3},
                          {.pc = kStagePc, .thread = 1, .peer = 2, .raw = 3, .rar = 0},
                          {.pc = kGatherPc, .thread = 2, .peer = 1, .raw = 2, .rar = 20},
                          {.pc = kGatherPc, .thread = 2, .peer = 0, .raw = 4, .rar = 4},
                          {.pc = kGatherPc, .thread = 0, .peer = 2, .raw = 5, .rar = 0},
                      });
  capture.set_records(
      kCrdDistances,
      {
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = 0, .count = 1},
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = 1, .count = 2},
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = 3, .count = 1},
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = far_distance, .count = 4},
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = 2000, .count = 2},
          {.pc = kLoopPc, .reader = 1, .writer = 0, .distance = kUnmeasuredDistance, .count = 3},
          {.pc = kStagePc, .reader = 1, .writer = 2, .distance = 5, .count = 3},
          {.pc = kGatherPc, .reader = 2, .writer = 1, .distance = 50, .count = 6},
      });
  capture.set_records(
      kCrdFootprints,
      {
          {.pc = kLoopPc, .thread = 0, .private_granules = 1000, .shared_granules = 0},
          {.pc = kStagePc, .thread = 2, .private_granules = 24, .shared_granules = 10},
      });
  return capture;
}

RunInfo crd_info() { return weft_test::hand_made_run_info(8192); }

class LocalityViewsTest : public weft_test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/crd.weft";
    build_profile(crd_capture(), crd_info(), path_);
  }

  std::string loop_name() {
    Profile profile = Profile::open(path_);
    for (const RegionInfo& region : profile.regions()) {
      if (region.kind == "loop") return region.name;
    }
    return "";
  }

  RegionInfo region(const std::string& path, const std::string& name) {
    for (const RegionInfo& r : Profile::open(path).regions()) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no region " << name;
    return {};
  }

  std::string path_;
};

TEST_F(LocalityViewsTest, RegionsOfTheCapture) {
  const std::string loop = loop_name();
  ASSERT_EQ(loop.rfind(std::string(kStage) + ":loop@test_locality.cpp:", 0), 0u) << loop;
  EXPECT_EQ(*region(path_, loop).parent_id, region(path_, kStage).id);
}

TEST_F(LocalityViewsTest, CrdJsonPerRegion) {
  Profile profile = Profile::open(path_);
  json list = json::parse(render_crd(find_crd(profile, {}), OutputFormat::Json));
  // The whole program, then by events: the loop (10), gather (6), stage (3).
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0]["region"], "whole program");
  EXPECT_EQ(list[0]["kind"], "program");
  EXPECT_EQ(list[0]["events"], 19);
  EXPECT_EQ(list[0]["unmeasured"], 3);
  // The line visits (all but the one 0): 1 1 3 5 5 5 50 x6 100 x4 2000 x2, the 9th of 18.
  EXPECT_EQ(list[0]["median"], 50);
  EXPECT_EQ(list[0]["visits"], 18);
  EXPECT_EQ(list[0]["granule_median"], 50);
  list.erase(list.begin());
  const json& loop = list[0];
  EXPECT_EQ(loop["region"], loop_name());
  EXPECT_EQ(loop["kind"], "loop");
  EXPECT_EQ(loop["pooled"], false);
  EXPECT_EQ(loop["events"], 10);
  EXPECT_EQ(loop["unmeasured"], 3);
  EXPECT_EQ(loop["median"], 100);  // 0 1 1 3 100 | 100 100 100 2000 2000
  EXPECT_EQ(loop["histogram"], json::parse(R"([{"lo":0,"hi":0,"count":1},
      {"lo":1,"hi":1,"count":2}, {"lo":2,"hi":3,"count":1}, {"lo":64,"hi":127,"count":4},
      {"lo":1024,"hi":2047,"count":2}])"));
  EXPECT_EQ(loop["max_cutoff"], 1024);
  EXPECT_EQ(loop["min_cutoff"], 512);
  EXPECT_DOUBLE_EQ(loop["fraction_below_min"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(loop["fraction_between"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(loop["fraction_above_max"].get<double>(), 0.2);
  EXPECT_EQ(loop["pairs"], json::parse(R"([{"writer":0,"reader":1,"events":10,"median":100,
                                              "granule_median":100}])"));
  EXPECT_EQ(loop["cache_bytes"], 8192);
  EXPECT_EQ(loop["cache_source"], "profile");
  EXPECT_EQ(loop["granularity"], 8);
  EXPECT_FALSE(loop.contains("crr"));
  EXPECT_TRUE(loop["file"].get<std::string>().ends_with("test_locality.cpp"));
  EXPECT_GT(loop["first_line"].get<int>(), 0);

  EXPECT_EQ(list[1]["region"], kGather);
  EXPECT_EQ(list[1]["median"], 50);
  EXPECT_EQ(list[1]["min_cutoff"], 1024);  // no private footprint
  EXPECT_DOUBLE_EQ(list[1]["fraction_below_min"].get<double>(), 1.0);
  // CRR rows [0,0,1], [0,0,10], [0,0,0].
  EXPECT_DOUBLE_EQ(list[1]["balance"].get<double>(), (10.0 / (11.0 / 3.0) - 1.0) * 100.0);
  EXPECT_DOUBLE_EQ(list[1]["homogeneity"].get<double>(), (2.0 / 9.0 + 200.0 / 9.0) / 3.0);
  EXPECT_EQ(list[2]["region"], kStage);
  EXPECT_EQ(list[2]["events"], 3);

  // --cache-size wins over the profile's cache.
  json small = json::parse(
      render_crd(find_crd(profile, {.cache = {.cache_size = 1024}}), OutputFormat::Json));
  EXPECT_EQ(small[1]["max_cutoff"], 128);
  EXPECT_EQ(small[1]["min_cutoff"], 64);  // half of 128: the 1000 private granules exceed it
  EXPECT_EQ(small[1]["cache_source"], "cache-size");
  EXPECT_EQ(small[1]["cache_origin"], "--cache-size");
  EXPECT_DOUBLE_EQ(small[1]["fraction_below_min"].get<double>(), 0.4);  // 0, 1, 1, 3
  EXPECT_DOUBLE_EQ(small[1]["fraction_between"].get<double>(), 0.4);    // 100 x4
  EXPECT_DOUBLE_EQ(small[1]["fraction_above_max"].get<double>(), 0.2);  // 2000 x2 > 128
}

TEST_F(LocalityViewsTest, CrdRegionPoolsFirstThenEachNested) {
  Profile profile = Profile::open(path_);
  json list = json::parse(
      render_crd(find_crd(profile, {.region = std::string(kStage)}), OutputFormat::Json));
  ASSERT_EQ(list.size(), 3u);
  const json& pooled = list[0];
  EXPECT_EQ(pooled["region"], kStage);
  EXPECT_EQ(pooled["pooled"], true);
  EXPECT_EQ(pooled["kind"], "function");
  EXPECT_EQ(pooled["events"], 13);
  EXPECT_EQ(pooled["unmeasured"], 3);
  EXPECT_EQ(pooled["median"], 5);        // 0 1 1 3 5 5 | 5 100 x4 2000 x2
  EXPECT_EQ(pooled["min_cutoff"], 512);  // 1024 private granules: half the cache
  EXPECT_EQ(pooled["max_cutoff"], 1024);
  EXPECT_DOUBLE_EQ(pooled["fraction_below_min"].get<double>(), 11.0 / 13.0);
  EXPECT_DOUBLE_EQ(pooled["fraction_between"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(pooled["fraction_above_max"].get<double>(), 2.0 / 13.0);
  EXPECT_EQ(pooled["raw"], json::parse("[[0,10,0],[0,0,0],[0,3,0]]"));
  EXPECT_EQ(pooled["rar"], json::parse("[[0,3,0],[0,0,0],[0,0,0]]"));
  EXPECT_DOUBLE_EQ(pooled["crr"][0][1].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(pooled["crr"][2][1].get<double>(), 0.0);
  EXPECT_EQ(pooled["pairs"].size(), 2u);
  EXPECT_EQ(list[1]["region"], loop_name());
  EXPECT_EQ(list[1]["pooled"], false);
  EXPECT_EQ(list[2]["region"], kStage);
  EXPECT_EQ(list[2]["pooled"], false);
  EXPECT_EQ(list[2]["events"], 3);

  std::string csv =
      render_crd(find_crd(profile, {.region = std::string(kStage)}), OutputFormat::Csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n', csv.find('\n') + 1) + 1),
            "region,lo,hi,count\nweft_crd_test::stage(int),0,0,1\n")
      << csv;

  std::string table =
      render_crd(find_crd(profile, {.region = std::string(kStage)}), OutputFormat::Table);
  EXPECT_NE(table.find("pooled selection weft_crd_test::stage(int) (function"), std::string::npos)
      << table;
  EXPECT_NE(table.find("[1024,2047]"), std::string::npos) << table;
  EXPECT_NE(table.find("min cutoff 512 granules"), std::string::npos) << table;
  EXPECT_NE(table.find("no capacity miss (below min) 80.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("CRR (rar / true communications of the data read here"), std::string::npos)
      << table;
}

TEST_F(LocalityViewsTest, CommCrrUsesTheSameRatios) {
  Profile profile = Profile::open(path_);
  json crr =
      json::parse(render_comm(find_comm(profile, {.kind = CommKind::Crr}), OutputFormat::Json));
  LocalityMetrics metrics = compute_locality(profile, {}, {});
  EXPECT_EQ(crr["matrix"], json(metrics.crr));
  EXPECT_DOUBLE_EQ(crr["matrix"][1][2].get<double>(), 10.0);
}

TEST_F(LocalityViewsTest, ReportShowsLocalityAndSuggestions) {
  Profile profile = Profile::open(path_);
  // 256 bytes = 32 granules: the loop's distances of 100 and 2000 are beyond it.
  // (A hand-made profile of a few events: no minimum volume.)
  const ReportOptions options{.cache = {.cache_size = 256}, .suggestion_min_events = 0};
  std::string table = render_report(find_report(profile, options), OutputFormat::Table);
  const RegionInfo loop = region(path_, loop_name());
  ASSERT_GT(loop.last_line, loop.first_line);  // the loop spans two lines
  const std::string lines =
      "test_locality.cpp:" + std::to_string(loop.first_line) + "-" + std::to_string(loop.last_line);
  EXPECT_NE(table.find("Locality of the top regions"), std::string::npos) << table;
  EXPECT_NE(table.find("data-affinity " + loop.name + " (" + lines + ")"), std::string::npos)
      << table;
  EXPECT_NE(table.find("thread-affinity " + std::string(kGather)), std::string::npos) << table;
  EXPECT_NE(table.find("place threads {0} on cores that share a cache and threads {1, 2}"),
            std::string::npos)
      << table;

  json report = json::parse(render_report(find_report(profile, options), OutputFormat::Json));
  EXPECT_EQ(report["cache"],
            json::parse(R"({"bytes":256,"origin":"--cache-size","source":"cache-size"})"));
  ASSERT_EQ(report["regions_locality"].size(), 3u);
  const json& first = report["regions_locality"][0];  // gather: raw + rar = 35
  EXPECT_EQ(first["name"], kGather);
  EXPECT_EQ(first["median"], 50);
  EXPECT_EQ(first["events"], 6);
  EXPECT_DOUBLE_EQ(first["fraction_beyond_min"].get<double>(), 1.0);  // 50 > 32 granules
  bool data_affinity_on_loop = false, thread_affinity_on_gather = false;
  for (const json& s : report["suggestions"]) {
    if (s["kind"] == "data-affinity" && s["region"] == loop.name) {
      data_affinity_on_loop = true;
      EXPECT_EQ(s["location"], lines);
      EXPECT_EQ(s["first_line"], loop.first_line);
    }
    if (s["kind"] == "thread-affinity" && s["region"] == kGather) {
      thread_affinity_on_gather = true;
      EXPECT_EQ(s["pairs"][0], json::parse(R"({"threads":[1,2],"events":22})"));
    }
  }
  EXPECT_TRUE(data_affinity_on_loop) << report["suggestions"].dump(2);
  EXPECT_TRUE(thread_affinity_on_gather) << report["suggestions"].dump(2);

  // With the profile's 8 KiB cache (1024 granules) gather's distances of 50
  // are far below its min cutoff: no data affinity there.
  json roomy = json::parse(
      render_report(find_report(profile, {.suggestion_min_events = 0}), OutputFormat::Json));
  // With the default minimum of 1000 events none of these regions is advised.
  EXPECT_TRUE(json::parse(render_report(find_report(profile, {.cache = {.cache_size = 256}}),
                                        OutputFormat::Json))["suggestions"]
                  .empty());
  for (const json& s : roomy["suggestions"]) {
    EXPECT_FALSE(s["kind"] == "data-affinity" && s["region"] == kGather) << s.dump();
  }
}

TEST_F(LocalityViewsTest, DiffRanksTheRegionWhoseMedianGrows) {
  // B: the loop's four distances of 100 become 900 (same events), and a new function.
  RunCapture capture_b = crd_capture(900);
  capture_b.add(kCommunicationCounts,
                PcCommunication{.pc = kExtraPc, .thread = 2, .peer = 0, .raw = 7});
  capture_b.add(
      kCrdDistances,
      PcDistanceCount{.pc = kExtraPc, .reader = 2, .writer = 0, .distance = 2, .count = 7});
  const std::string path_b = dir_ + "/b.weft";
  build_profile(capture_b, crd_info(), path_b);

  Profile a = Profile::open(path_);
  Profile b = Profile::open(path_b);
  json diff = json::parse(render_diff(find_diff(a, b, {}), OutputFormat::Json));
  ASSERT_EQ(diff["regions"].size(), 3u);
  const json& worst = diff["regions"][0];
  EXPECT_EQ(worst["region"], loop_name());
  EXPECT_EQ(worst["scales_badly"], true);
  EXPECT_EQ(worst["a"]["median"], 100);
  EXPECT_EQ(worst["b"]["median"], 900);
  EXPECT_DOUBLE_EQ(worst["events_ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(worst["median_ratio"].get<double>(), 901.0 / 101.0);
  EXPECT_DOUBLE_EQ(worst["mean_log2_bin_change"].get<double>(), 4 * (10.0 - 7.0) / 10.0);
  EXPECT_EQ(diff["regions"][1]["scales_badly"], false);
  EXPECT_EQ(diff["regions"][2]["scales_badly"], false);
  EXPECT_EQ(diff["only_in_a"], json::array());
  ASSERT_EQ(diff["only_in_b"].size(), 1u);
  EXPECT_EQ(diff["only_in_b"][0]["region"], kExtra);
  EXPECT_EQ(diff["only_in_b"][0]["events"], 7);

  std::string table = render_diff(find_diff(a, b, {}), OutputFormat::Table);
  EXPECT_NE(table.find("1  " + loop_name()), std::string::npos) << table;
  EXPECT_NE(table.find("scales badly: median CRD x8.92 outgrows events x1.00"), std::string::npos)
      << table;
  EXPECT_NE(table.find("Only in B"), std::string::npos) << table;
  EXPECT_NE(table.find(kExtra), std::string::npos) << table;

  // A median crossing the min cutoff (512 granules in both) is flagged too:
  // with distances of 3 instead of 100, A's median is 3.
  const std::string path_near = dir_ + "/near.weft";
  build_profile(crd_capture(3), crd_info(), path_near);
  json crossing =
      json::parse(render_diff(find_diff(Profile::open(path_near), b, {}), OutputFormat::Json));
  EXPECT_EQ(crossing["regions"][0]["region"], loop_name());
  EXPECT_EQ(crossing["regions"][0]["a"]["median"], 3);
  EXPECT_EQ(crossing["regions"][0]["reasons"][1],
            "median CRD crosses the min cutoff (3 < 512 -> 900 >= 512)");

  EXPECT_THROW(render_diff(find_diff(a, b, {}), OutputFormat::Csv), ViewError);
}

TEST_F(LocalityViewsTest, Errors) {
  // A profile recorded without crd.
  RunCapture plain = crd_capture();
  plain.analyses = {AnalysisId::Communication};
  plain.sections.erase(kCrdDistances.tag);
  plain.sections.erase(kCrdFootprints.tag);
  const std::string plain_path = dir_ + "/plain.weft";
  build_profile(plain, crd_info(), plain_path);
  Profile without = Profile::open(plain_path);
  try {
    find_crd(without, {});
    FAIL() << "no error";
  } catch (const FindingError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("was recorded without the crd analysis"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  Profile with = Profile::open(path_);
  EXPECT_THROW(find_diff(with, without, {}), FindingError);
  // The report still works, with H and B and without CRD columns.
  json report = json::parse(render_report(find_report(without, {}), OutputFormat::Json));
  EXPECT_TRUE(report["cache"].is_null());
  EXPECT_TRUE(report["regions_locality"][0]["median"].is_null());

  EXPECT_THROW(find_crd(with, {.region = std::string("nope")}), ProfileError);
  // Malformed sizes never reach findings (the command line refuses them);
  // zero does.
  EXPECT_THROW(find_crd(with, {.cache = {.cache_size = 0}}), FindingError);
  EXPECT_THROW(find_crd(with, {.cache = {.topology = dir_ + "/missing.xml"}}), FindingError);
}

TEST_F(LocalityViewsTest, TopologyFileSetsTheCache) {
  hwloc_topology_t topology;
  ASSERT_EQ(hwloc_topology_init(&topology), 0);
  ASSERT_EQ(hwloc_topology_set_synthetic(topology, "pack:1 l3:1(size=16384) core:2 pu:1"), 0);
  ASSERT_EQ(hwloc_topology_load(topology), 0);
  const std::string xml = dir_ + "/topo.xml";
  ASSERT_EQ(hwloc_topology_export_xml(topology, xml.c_str(), 0), 0);
  hwloc_topology_destroy(topology);

  Profile profile = Profile::open(path_);
  CacheModel cache = resolve_cache(profile, {.topology = xml});
  EXPECT_EQ(cache.bytes, 16384u);
  EXPECT_EQ(cache.source, CacheSource::Topology);
  EXPECT_EQ(resolve_cache(profile, {}).source, CacheSource::Profile);
  EXPECT_EQ(resolve_cache(profile, {.cache_size = 2048, .topology = xml}).bytes, 2048u);
}

TEST_F(LocalityViewsTest, UnknownCacheSizeAsksForOne) {
  // Recorded where hwloc reported no cache: the profile's llc_bytes is 0, and
  // the machine reading the profile is not asked instead.
  RunInfo info = crd_info();
  info.llc_bytes = 0;
  const std::string path = dir_ + "/nocache.weft";
  build_profile(crd_capture(), info, path);
  Profile profile = Profile::open(path);
  try {
    resolve_cache(profile, {});
    FAIL() << "no error";
  } catch (const FindingError& error) {
    EXPECT_EQ(std::string(error.what()),
              "the cache size is unknown (the profile has no llc_bytes); pass --cache-size "
              "BYTES or --topology XML");
  }
  EXPECT_THROW(find_crd(profile, {}), FindingError);
  const CacheModel given = resolve_cache(profile, {.cache_size = 1024});
  EXPECT_EQ(given.bytes, 1024u);
  EXPECT_EQ(given.source, CacheSource::CacheSize);
}

TEST_F(LocalityViewsTest, IncompleteProfileWarns) {
  RunCapture capture = crd_capture();
  capture.complete = false;
  capture.incomplete_reason = "killed by SIGTERM";
  const std::string path = dir_ + "/partial.weft";
  build_profile(capture, crd_info(), path);
  std::string table = render_crd(find_crd(Profile::open(path), {}), OutputFormat::Table);
  EXPECT_NE(table.find("warning: INCOMPLETE profile (killed by SIGTERM)"), std::string::npos)
      << table;
}

// The CRR of a region whose data was first read in another region, from a
// hand-made event sequence through the analyzers, the profile builder and
// the findings (docs/metrics.md, "CRR"). Granularity 64, thread 0 writes
// lines 0..3 of `data`:
//   reader 1: gather reads the 4 lines (raw 4); extra reads them twice
//             (rar 8); the loop of stage reads lines 0 and 1 (rar 2); thread 0
//             writes line 0 again; extra reads it twice (raw 1, rar 1).
//   reader 2: extra reads the 4 lines twice (raw 4, rar 4).
// extra re-read 4 epochs whose true communication was in gather: pair
// (0, 1) has raw 1, rar 9, borrowed 4: CRR 9 / 5 (rar / raw would say 9).
// The loop borrows lines 0 and 1: CRR 2 / 2 (rar / raw: 0). Extra and the
// loop together borrow each of the 4 epochs once: 11 / 5.
TEST_F(LocalityViewsTest, CrrOfDataFirstReadInAnotherRegion) {
  weft_test::CommunicationWithCrd<3> setup(0);
  auto& [comm, crd, threads] = setup;
  auto *t0 = setup.thread[0], *t1 = setup.thread[1], *t2 = setup.thread[2];
  alignas(64) static char data[4 * 64];
  const auto line = [](int l) { return reinterpret_cast<uintptr_t>(data) + l * 64; };
  for (int l = 0; l < 4; ++l) comm.write(*t0, kStagePc, line(l), 8);
  for (int l = 0; l < 4; ++l) comm.read(*t1, kGatherPc, line(l), 8);
  for (int pass = 0; pass < 2; ++pass)
    for (int l = 0; l < 4; ++l) comm.read(*t1, kExtraPc, line(l), 8);
  for (int l = 0; l < 2; ++l) comm.read(*t1, kLoopPc, line(l), 8);
  comm.write(*t0, kStagePc, line(0), 8);
  for (int pass = 0; pass < 2; ++pass) comm.read(*t1, kExtraPc, line(0), 8);
  for (int pass = 0; pass < 2; ++pass)
    for (int l = 0; l < 4; ++l) comm.read(*t2, kExtraPc, line(l), 8);

  RunCapture capture = crd_capture();
  capture.granularity = 64;
  capture.sections.clear();
  std::vector<PcCommunication> counts;
  comm.settle_all();
  comm.for_each_count([&](const PcCommunication& c) { counts.push_back(c); });
  capture.set_records(kCommunicationCounts, counts);
  std::vector<ReuseSetNode> sets;
  crd.for_each_reuse_set([&](const ReuseSetNode& n) { sets.push_back(n); });
  capture.set_records(kCrdReuseSets, sets);
  const std::string path = dir_ + "/borrowed.weft";
  build_profile(capture, crd_info(), path);

  Profile profile = Profile::open(path);
  const int64_t extra = region(path, kExtra).id;
  const int64_t loop = region(path, loop_name()).id;
  const LocalityMetrics in_extra = compute_locality(profile, {extra}, {});
  EXPECT_TRUE(in_extra.borrowed_known);
  EXPECT_EQ(in_extra.raw[0], (std::vector<uint64_t>{0, 1, 4}));
  EXPECT_EQ(in_extra.rar[0], (std::vector<uint64_t>{0, 9, 4}));
  EXPECT_EQ(in_extra.borrowed[0], (std::vector<uint64_t>{0, 4, 0}));
  EXPECT_EQ(in_extra.crr[0], (std::vector<double>{0, 9.0 / 5.0, 1.0}));
  EXPECT_EQ(compute_locality(profile, {loop}, {}).crr[0], (std::vector<double>{0, 1.0, 0}));
  const json crd_extra = json::parse(
      render_crd(find_crd(profile, {.region = std::string(kExtra), .cache = {.cache_size = 1024}}),
                 OutputFormat::Json));
  EXPECT_EQ(crd_extra[0]["borrowed"][0], json::parse("[0, 4, 0]"));
  EXPECT_DOUBLE_EQ(crd_extra[0]["crr"][0][1].get<double>(), 1.8);
  EXPECT_EQ(compute_locality(profile, {extra, loop}, {}).crr[0],
            (std::vector<double>{0, 11.0 / 5.0, 1.0}));
  // The first-touch region and the whole program keep rar / raw.
  EXPECT_EQ(compute_locality(profile, {region(path, kGather).id}, {}).crr[0],
            (std::vector<double>{0, 0, 0}));
  const LocalityMetrics program = compute_locality(profile, {}, {});
  EXPECT_EQ(program.borrowed[0], (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(program.crr[0], (std::vector<double>{0, 11.0 / 5.0, 1.0}));
  // --region of a function pools its loop: stage is the loop's CRR.
  json comm_json = json::parse(
      render_comm(find_comm(profile, {.region = std::string(kStage), .kind = CommKind::Crr}),
                  OutputFormat::Json));
  EXPECT_EQ(comm_json["matrix"][0], json::parse("[0, 1.0, 0]"));
  EXPECT_EQ(comm_json["communicated"][0], json::parse("[0, 2, 0]"));
  comm_json = json::parse(
      render_comm(find_comm(profile, {.region = std::string(kExtra), .kind = CommKind::Crr}),
                  OutputFormat::Json));
  EXPECT_DOUBLE_EQ(comm_json["matrix"][0][1].get<double>(), 1.8);
  EXPECT_DOUBLE_EQ(comm_json["total"].get<double>(), 13.0 / 9.0);  // (9 + 4) / (5 + 4)

  // A profile of a weft before crr_epochs: a region's CRR is rar / raw, and
  // `comm --kind crr` says so.
  {
    sqlite::Database db(path, SQLITE_OPEN_READWRITE);
    db.exec("DROP TABLE crr_epoch_regions; DROP TABLE crr_epochs;");
  }
  Profile old = Profile::open(path);
  const LocalityMetrics old_extra = compute_locality(old, {extra}, {});
  EXPECT_FALSE(old_extra.borrowed_known);
  EXPECT_EQ(old_extra.crr[0], (std::vector<double>{0, 9.0, 1.0}));
  EXPECT_EQ(compute_locality(old, {loop}, {}).crr[0], (std::vector<double>{0, 0, 0}));
  const json crd_old = json::parse(
      render_crd(find_crd(old, {.region = std::string(kExtra), .cache = {.cache_size = 1024}}),
                 OutputFormat::Json));
  EXPECT_TRUE(crd_old[0]["borrowed"].is_null()) << crd_old[0].dump();
  EXPECT_DOUBLE_EQ(crd_old[0]["crr"][0][1].get<double>(), 9.0);
  const std::string table = render_comm(
      find_comm(old, {.region = std::string(kExtra), .kind = CommKind::Crr}), OutputFormat::Table);
  EXPECT_NE(table.find("note: this profile does not tell"), std::string::npos) << table;
}

}  // namespace
}  // namespace weft
