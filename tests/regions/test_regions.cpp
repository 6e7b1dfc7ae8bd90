// Regions and communication locality end to end, on programs built with the
// real wrappers and recorded by the real weft: loop attribution (innermost
// loop, source lines, nesting, --region selection) with gcc and clang at -O0
// and -O2, exact CRD on the examples whose distances are counted by hand,
// and the exact CRR of a loop re-reading data first read in another.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/example_source.h"

namespace {

namespace fs = std::filesystem;

using Result = weft_test::CommandResult;
using weft_test::slurp;

class RegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() / ("weft-regions-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The binary-structure cache of these runs stays in the test's directory.
    setenv("WEFT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::string& command) { return weft_test::run_command(command, dir_); }
  static std::string weft() { return std::string(WEFT_BIN_DIR) + "/weft"; }
  std::string db(const std::string& name = "p.db") const { return (dir_ / name).string(); }

  void record(const std::string& program, const std::string& options, const std::string& out) {
    const Result r = run(weft() + " record " + options + " -o " + out + " -- " + program);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  nlohmann::json json(const std::string& command) {
    const Result r = run(command);
    EXPECT_EQ(r.code, 0) << command << ": " << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }
  // Rows of a query on the profile, each as strings.
  std::vector<std::vector<std::string>> query(const std::string& profile, const std::string& sql) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(profile.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
    std::vector<std::vector<std::string>> rows;
    while (s && sqlite3_step(s) == SQLITE_ROW) {
      rows.emplace_back();
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const unsigned char* text = sqlite3_column_text(s, c);
        rows.back().push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    return rows;
  }

  // Runs a statement that changes the profile.
  void execute(const std::string& profile, const std::string& sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(profile.c_str(), &h), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(h);
  }

  fs::path dir_;
};

// --- loop attribution ------------------------------------------------------

class LoopAttribution : public RegionTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LoopAttribution, InnerLoopOwnsTheReadWithItsLines) {
  const std::string program = std::string(PROGRAMS_DIR) + "/nested_exchange." + GetParam();
  record(program, "--granularity 8", db());
  const std::string outer = "sum_rows:loop@nested_exchange.c:24";
  const std::string inner = "sum_rows:loop@nested_exchange.c:25";
  // Every region of sum_rows: the function (declared at line 22, its last
  // seen line 26), the outer loop (lines 24-26) and the inner loop (25-26)
  // nested in it.
  const auto regions = query(db(),
                             "SELECT r.name, r.kind, r.first_line, r.last_line, p.name FROM"
                             " regions r LEFT JOIN regions p ON p.id = r.parent_id"
                             " WHERE r.function = 'sum_rows' ORDER BY r.name");
  const std::vector<std::vector<std::string>> expected = {
      {"sum_rows", "function", "22", "26", "NULL"},
      {outer, "loop", "24", "26", "sum_rows"},
      {inner, "loop", "25", "26", outer}};
  EXPECT_EQ(regions, expected);

  // All 16 x 64 communicating reads are the inner loop's: nothing is left in
  // the outer loop or the function itself.
  const auto attributed = query(db(),
                                "SELECT r.name, SUM(m.count) FROM matrix_entries m JOIN regions r"
                                " ON r.id = m.region_id WHERE m.kind = 'raw' AND m.writer = 1"
                                " AND r.kind <> 'section' GROUP BY r.name");
  EXPECT_EQ(attributed, (std::vector<std::vector<std::string>>{{inner, "1024"}}));

  // --region selects a loop, a loop with its nested loop, or a function with
  // everything in it.
  for (const std::string& region : {inner, outer, std::string("sum_rows")}) {
    const nlohmann::json m =
        json(weft() + " comm " + db() + " --region '" + region + "' --kind raw --format json");
    EXPECT_EQ(m["matrix"][1][0], 1024) << region;
  }
}

INSTANTIATE_TEST_SUITE_P(Builds, LoopAttribution,
                         ::testing::Values("gcc.O0", "gcc.O2", "clang.O0", "clang.O2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name[name.find('.')] = '_';
                           return name;
                         });

// --- exact CRD on the examples ---------------------------------------------

class ExampleCrd : public RegionTest, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string example(const std::string& name) const {
    return std::string(WEFT_EXAMPLES_DIR) + "/" + name + "." + GetParam();
  }
  // The pooled object of `weft crd --region R`.
  nlohmann::json pooled_crd(const std::string& profile, const std::string& region,
                            const std::string& options = "") {
    const nlohmann::json list =
        json(weft() + " crd " + profile + " --region '" + region + "' --format json " + options);
    EXPECT_TRUE(list.is_array() && !list.empty());
    return list.is_array() && !list.empty() ? list[0] : nlohmann::json();
  }
};

// A writer fills N granules and its reader reads them twice: N distances,
// all N - 1. ring_pthreads with one round, at granularity 8 (one double per
// granule): each of the 4 pairs u -> t has N = 1024 first events and 1024
// events at distance 1023.
TEST_P(ExampleCrd, WriterFillsReaderReadsTwice) {
  record(example("ring_pthreads") + " 4 1024 1", "--granularity 8", db());
  const nlohmann::json crd = pooled_crd(db(), "worker");
  EXPECT_EQ(crd["region"], "worker");
  EXPECT_EQ(crd["events"], 4 * 1024);
  EXPECT_EQ(crd["median"], 1023);
  EXPECT_EQ(crd["unmeasured"], 0);
  EXPECT_EQ(crd["histogram"], nlohmann::json::parse(R"([{"lo": 512, "hi": 1023, "count": 4096}])"));
  ASSERT_EQ(crd["pairs"].size(), 4u);
  for (const nlohmann::json& pair : crd["pairs"]) {
    EXPECT_EQ((pair["writer"].get<int>() + 3) % 4, pair["reader"].get<int>()) << pair;
    EXPECT_EQ(pair["events"], 1024);
    EXPECT_EQ(pair["median"], 1023);
  }
}

// The blocked kernel has the lower CRD, by the counts derived in the
// examples' headers, and `weft diff` says so in both directions.
TEST_P(ExampleCrd, BlockedMomentsHaveTheLowerCrdAndDiffSaysSo) {
  const std::string unblocked = db("unblocked.db"), blocked = db("blocked.db");
  record(example("moments_unblocked_pthreads"), "", unblocked);
  record(example("moments_blocked_pthreads"), "", blocked);
  // 4 pairs x (R*K - 1) * N = 4 x 15 x 4096 events.
  // No event re-reads the record just read: every event is a line visit.
  const nlohmann::json u = pooled_crd(unblocked, "moments");
  EXPECT_EQ(u["events"], 245760);
  EXPECT_EQ(u["visits"], 245760);
  EXPECT_EQ(u["median"], 4095);
  EXPECT_EQ(u["granule_median"], 4095);
  EXPECT_EQ(u["histogram"],
            nlohmann::json::parse(R"([{"lo": 2048, "hi": 4095, "count": 245760}])"));
  // 4 pairs x (R*(K-1)*N at B-1 = 63, (R-1)*N at N-1 = 4095).
  const nlohmann::json b = pooled_crd(blocked, "moments");
  EXPECT_EQ(b["events"], 245760);
  EXPECT_EQ(b["median"], 63);
  EXPECT_EQ(b["granule_median"], 63);
  EXPECT_EQ(b["histogram"], nlohmann::json::parse(R"([{"lo": 32, "hi": 63, "count": 229376},
                                                       {"lo": 2048, "hi": 4095, "count": 16384}])"));

  auto moments_of = [](const nlohmann::json& diff) {
    for (const nlohmann::json& region : diff["regions"])
      if (region["region"] == "moments") return region;
    return nlohmann::json();
  };
  const nlohmann::json better =
      moments_of(json(weft() + " diff " + unblocked + " " + blocked + " --format json"));
  EXPECT_EQ(better["a"]["granule_median"], 4095);
  EXPECT_EQ(better["b"]["granule_median"], 63);
  EXPECT_EQ(better["a"]["median"], u["median"]);
  EXPECT_EQ(better["b"]["median"], b["median"]);
  EXPECT_EQ(better["scales_badly"], false);
  const nlohmann::json worse =
      moments_of(json(weft() + " diff " + blocked + " " + unblocked + " --format json"));
  EXPECT_EQ(worse["scales_badly"], true);

  // With a 64 KiB cache (1024 lines) the unblocked loop gets the blocking
  // advice at its source line, the blocked one none.
  std::vector<nlohmann::json> objects;
  auto data_affinity = [&](const std::string& profile) {
    std::vector<std::string> where;
    const nlohmann::json report =
        json(weft() + " report " + profile + " --cache-size 64K --format json");
    for (const nlohmann::json& s : report["suggestions"])
      if (s["kind"] == "data-affinity" && s["region"].get<std::string>().starts_with("moments:")) {
        where.push_back(s["location"]);
        objects.push_back(s["reads_object"]);
      }
    return where;
  };
  EXPECT_EQ(data_affinity(unblocked), std::vector<std::string>{"moments_unblocked_pthreads.c:21"});
  EXPECT_EQ(data_affinity(blocked), std::vector<std::string>{});
  // It names the array its communication reads: every sampled address of
  // the reading instruction is in the global `records` (MAXT x MAXN records
  // of 64 bytes).
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0]["kind"], "global") << objects[0];
  EXPECT_EQ(objects[0]["name"], "records");
  EXPECT_EQ(objects[0]["allocated_at"], nullptr);
  EXPECT_EQ(objects[0]["share"], 1.0);
  // A version 4 profile of an earlier weft, without pc_objects: the same
  // advice, naming no object.
  execute(unblocked, "DROP TABLE pc_objects");
  objects.clear();
  EXPECT_EQ(data_affinity(unblocked), std::vector<std::string>{"moments_unblocked_pthreads.c:21"});
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0], nullptr);
}

// The CRD paper's version comparisons, on this project's kernels
// (docs/metrics.md, "Median CRD of the line visits"): LU with contiguous
// blocks below non-contiguous, water-spatial below water-nsquared, in the
// median CRD weft reports, under both sources. The median of all events
// collapses to 0 for all four (most events re-read the granule just read),
// which is why the median is of the line visits.
class PaperOrderings : public RegionTest,
                       public ::testing::WithParamInterface<weft_test::ExampleBuild> {
 protected:
  // The whole program's entry of `weft crd` on PROGRAM ARG.
  nlohmann::json whole_program(const std::string& program, const std::string& arg) {
    const std::string profile = db(program + "_" + arg + ".db");
    record(std::string(WEFT_EXAMPLES_DIR) + "/" + program + "." + GetParam().build + " " + arg,
           "--backend " + GetParam().backend, profile);
    const nlohmann::json list = json(weft() + " crd " + profile + " --format json");
    EXPECT_TRUE(list.is_array() && !list.empty());
    if (!list.is_array() || list.empty()) return {};
    EXPECT_EQ(list[0]["kind"], "program");
    // The report's first locality row is the same whole program.
    const nlohmann::json report = json(weft() + " report " + profile + " --format json");
    EXPECT_EQ(report["program_locality"]["median"], list[0]["median"]);
    return list[0];
  }
};

TEST_P(PaperOrderings, ContiguousLuAndSpatialWaterHaveTheShorterCrd) {
  const nlohmann::json cb = whole_program("lu_blocks_pthreads", "contiguous");
  const nlohmann::json ncb = whole_program("lu_blocks_pthreads", "noncontiguous");
  const nlohmann::json spatial = whole_program("water_forces_pthreads", "spatial");
  const nlohmann::json nsquared = whole_program("water_forces_pthreads", "nsquared");
  for (const nlohmann::json* entry : {&cb, &ncb, &spatial, &nsquared})
    EXPECT_EQ((*entry)["granule_median"], 0) << *entry;
  // LU: a top-block line is visited again after the other lines of its block
  // (contiguous) or of all the worker's top blocks in its matrix row
  // (noncontiguous): at least 3 times as far.
  EXPECT_GE(ncb["median"].get<uint64_t>(), 3 * cb["median"].get<uint64_t>())
      << cb["median"] << " vs " << ncb["median"];
  EXPECT_GT(cb["median"].get<uint64_t>(), 0u);
  // Water: a position's line is visited again after 27 cells (spatial) or all
  // of a writer's molecules (nsquared): at least 8 times as far.
  EXPECT_GE(nsquared["median"].get<uint64_t>(), 8 * spatial["median"].get<uint64_t>())
      << spatial["median"] << " vs " << nsquared["median"];
  EXPECT_GT(spatial["median"].get<uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Builds, PaperOrderings, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) { return weft_test::test_name(info.param.build); });

// The CRD paper's Rodinia cases (its Table 2), on this project's kernels in
// the style of real code, with weft's default options but the cache, pinned
// to an 8 MiB LLC (what weft records on a machine whose caches are not
// credible), so a min cutoff of at least 65536 lines (docs/metrics.md, "The
// recorded cache"). Each kernel's header derives the values asserted here.
class RodiniaCases : public RegionTest,
                     public ::testing::WithParamInterface<weft_test::ExampleBuild> {
 protected:
  // `weft report --format json` of PROGRAM (its default arguments),
  // recorded with --exact (the values below are exact) or, with `mode`
  // empty, with weft's default (sampled CRD).
  nlohmann::json report(const std::string& program, const std::string& mode = "--exact") {
    const std::string profile = db(program + (mode.empty() ? ".sampled" : "") + ".db");
    record(std::string(WEFT_EXAMPLES_DIR) + "/" + program + "." + GetParam().build,
           "--backend " + GetParam().backend + " " + weft_test::kExampleCache + " " + mode,
           profile);
    return json(weft() + " report " + profile + " --format json");
  }
  static std::string source(const std::string& program) {
    return std::string(WEFT_EXAMPLES_SOURCE_DIR) + "/" + program + ".c";
  }
  // "program.c:LINE" of a marker.
  static std::string at(const std::string& program, const std::string& marker) {
    const int line = weft_test::marker_line(source(program), "weft:" + marker + " ");
    EXPECT_GT(line, 0) << marker;
    return program + ".c:" + std::to_string(line);
  }
  static std::vector<nlohmann::json> of_kind(const nlohmann::json& report, const char* kind) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& s : report["suggestions"])
      if (s["kind"] == kind) out.push_back(s);
    return out;
  }
  // The locality row of a top region.
  static nlohmann::json locality(const nlohmann::json& report, const nlohmann::json& region) {
    for (const nlohmann::json& r : report["regions_locality"])
      if (r["name"] == region) return r;
    ADD_FAILURE() << "no locality row for " << region;
    return {};
  }
  // The distinct source lines where the region's instructions read
  // communicated data.
  std::set<int> reading_lines(const std::string& program, const nlohmann::json& region) {
    std::set<int> lines;
    for (const auto& row :
         query(db(program + ".db"),
               "SELECT DISTINCT l.line FROM pc_communication c JOIN code_locations l ON l.pc ="
               " c.pc JOIN regions r ON r.id = l.region_id WHERE c.raw + c.rar > 0 AND r.name = '" +
                   region.get<std::string>() + "'"))
      lines.insert(std::stoi(row[0]));
    return lines;
  }
};

// particle_resample_omp: the resampling walk reads the master's cdf, a
// segment of N / 32 = 81920 lines per thread, again each step: data
// affinity naming the cdf's heap block; the master's cumulative sum reads
// the weights the same way; a broadcast, no thread affinity.
TEST_P(RodiniaCases, ResamplingWalkGetsDataAffinityOnTheCdf) {
  const std::string pf = "particle_resample_omp";
  const nlohmann::json r = report(pf);
  EXPECT_TRUE(of_kind(r, "thread-affinity").empty()) << r["suggestions"];
  const std::vector<nlohmann::json> data = of_kind(r, "data-affinity");
  ASSERT_EQ(data.size(), 2u) << r["suggestions"];
  std::map<std::string, nlohmann::json> by_line;
  for (const nlohmann::json& s : data) by_line[s["reads_at"].get<std::string>()] = s;
  const nlohmann::json walk = by_line[at(pf, "resample")];
  const nlohmann::json cdf = by_line[at(pf, "cdf")];
  ASSERT_TRUE(walk.is_object() && cdf.is_object()) << r["suggestions"];

  // The walk: its line visits come after the other 81919 lines of the
  // segment and a few more of the master's; the loop's private nx and ny
  // put its min cutoff at the floor.
  const int walk_line = std::stoi(at(pf, "resample").substr(pf.size() + 3));
  EXPECT_LE(walk["first_line"].get<int>(), walk_line);
  EXPECT_GE(walk["last_line"].get<int>(), walk_line);
  const nlohmann::json walk_crd = locality(r, walk["region"]);
  EXPECT_EQ(walk_crd["min_cutoff"], 65536);
  EXPECT_EQ(walk_crd["max_cutoff"], 131072);
  EXPECT_GE(walk_crd["median"].get<uint64_t>(), 81919u);
  EXPECT_LE(walk_crd["median"].get<uint64_t>(), 81919u + 64);
  EXPECT_EQ(walk["reads_object"]["kind"], "heap") << walk;
  EXPECT_EQ(walk["reads_object"]["allocated_at"], at(pf, "cdf-alloc"));
  EXPECT_EQ(walk["reads_object"]["bytes"], 2621440 * 8);
  EXPECT_GE(walk["reads_object"]["share"].get<double>(), 0.99);

  // The cumulative sum: exactly N / 32 - 1 from one step to the next; its
  // private data (its own segment of cdf, 81920 lines) leaves the floor.
  const nlohmann::json sum_crd = locality(r, cdf["region"]);
  EXPECT_EQ(sum_crd["median"], 81919);
  EXPECT_EQ(sum_crd["min_cutoff"], 65536);
  EXPECT_EQ(cdf["reads_object"]["allocated_at"], at(pf, "w-alloc")) << cdf;
  EXPECT_EQ(cdf["reads_object"]["bytes"], 2621440 * 8);
  EXPECT_GE(cdf["reads_object"]["share"].get<double>(), 0.99);

  // Thread 0 wrote the cdf (and the particles of step 1) the others read.
  const std::vector<nlohmann::json> broadcasts = of_kind(r, "broadcast");
  ASSERT_EQ(broadcasts.size(), 1u) << r["suggestions"];
  EXPECT_TRUE(broadcasts[0]["evidence"].get<std::string>().starts_with("thread 0 wrote"));
  std::string regions = broadcasts[0]["region"].get<std::string>();
  for (const nlohmann::json& other : broadcasts[0]["also_in"])
    regions += " " + other.get<std::string>();
  EXPECT_NE(regions.find(walk["region"].get<std::string>()), std::string::npos) << regions;
}

// srad_steps_pthreads: the update re-reads the main thread's per-pixel
// model, 122880 lines per worker and step: data affinity naming the model;
// the coefficient loop exchanges one row per neighbour: thread affinity,
// {1, 2} and {3, 4}; the initialisation is a broadcast.
TEST_P(RodiniaCases, SradUpdateGetsDataAffinityItsHaloLoopThreadAffinity) {
  const std::string srad = "srad_steps_pthreads";
  const nlohmann::json r = report(srad);
  const std::vector<nlohmann::json> data = of_kind(r, "data-affinity");
  ASSERT_EQ(data.size(), 1u) << r["suggestions"];
  EXPECT_EQ(data[0]["reads_at"], at(srad, "srad-update"));
  const nlohmann::json update = locality(r, data[0]["region"]);
  // 131072 - (61440 lines of J' - the 6 rows of 640 lines its neighbours read).
  EXPECT_EQ(update["min_cutoff"], 73472);
  EXPECT_GE(update["median"].get<uint64_t>(), 122879u);
  EXPECT_LE(update["median"].get<uint64_t>(), 122879u + 64);
  EXPECT_EQ(data[0]["reads_object"]["kind"], "heap") << data[0];
  EXPECT_EQ(data[0]["reads_object"]["allocated_at"], at(srad, "srad-alloc"));
  EXPECT_EQ(data[0]["reads_object"]["bytes"], 96 * 5120 * 64);
  // All but the south neighbours' coefficients: 3 reads of each of ROWS x
  // COLS records a step against 3 x COLS coefficients.
  EXPECT_NEAR(data[0]["reads_object"]["share"].get<double>(), 96.0 / 97.0, 1e-9);

  // The halo rows: 2 x 5120 reads per neighbour pair and step, 3 steps.
  const std::vector<nlohmann::json> threads = of_kind(r, "thread-affinity");
  ASSERT_EQ(threads.size(), 1u) << r["suggestions"];
  EXPECT_EQ(threads[0]["groups"], nlohmann::json::parse("[[1, 2], [3, 4]]"));
  EXPECT_EQ(threads[0]["pairs"], nlohmann::json::parse(R"([{"threads": [1, 2], "events": 30720},
                                                           {"threads": [2, 3], "events": 30720},
                                                           {"threads": [3, 4], "events": 30720}])"));
  const int coeff = weft_test::marker_line(source(srad), "weft:srad-coeff ");
  EXPECT_EQ(reading_lines(srad, threads[0]["region"]), (std::set<int>{coeff, coeff + 1}));

  const std::vector<nlohmann::json> broadcasts = of_kind(r, "broadcast");
  ASSERT_EQ(broadcasts.size(), 1u) << r["suggestions"];
  EXPECT_TRUE(broadcasts[0]["evidence"].get<std::string>().starts_with("thread 0 wrote"));
}

// needle_wavefront_omp: the master's substitution scores make a broadcast;
// a wavefront's reads of a line are at most one anti-diagonal of blocks
// apart, far below the cutoffs: no data affinity, no thread affinity.
TEST_P(RodiniaCases, WavefrontIsABroadcastWithShortDistances) {
  const std::string nw = "needle_wavefront_omp";
  const nlohmann::json r = report(nw);
  EXPECT_TRUE(of_kind(r, "data-affinity").empty()) << r["suggestions"];
  EXPECT_TRUE(of_kind(r, "thread-affinity").empty()) << r["suggestions"];
  const std::vector<nlohmann::json> broadcasts = of_kind(r, "broadcast");
  ASSERT_EQ(broadcasts.size(), 1u) << r["suggestions"];
  EXPECT_TRUE(broadcasts[0]["evidence"].get<std::string>().starts_with("thread 0 wrote"));
  const int cell = weft_test::marker_line(source(nw), "weft:nw-cell ");
  EXPECT_TRUE(reading_lines(nw, broadcasts[0]["region"]).contains(cell));
  const nlohmann::json cells = locality(r, broadcasts[0]["region"]);
  EXPECT_GE(cells["min_cutoff"].get<uint64_t>(), 65536u);
  EXPECT_LE(cells["median"].get<uint64_t>(), 8192u) << cells;
  EXPECT_LE(r["program_locality"]["median"].get<uint64_t>(), 8192u);
}

// The default, sampled CRD (docs/metrics.md, "Sampled CRD") against --exact
// on the programs whose readers pass the sample budget (particle_resample:
// 81,920 lines per reader; srad: 122,880): the same suggestions, and on
// every region with 1,000 events or more the median of the line visits
// within one power-of-two bin and each histogram bin's share within 2
// percentage points (issue 19's target) on particle_resample. On srad the
// target is NOT met: its stencil re-reads lines about 2,000 granules
// apart, just under the 2048 bin edge, and at the 1/8 sampling rate the
// estimate (sd about 6%) puts 0 to 2.7 points of the 4.5% exact mass in
// the next bin, depending on the address layout the hash sees
// (docs/performance.md). There each share must be matched within 2 points
// by the other histogram's mass in the same bin or its neighbours: mass
// moves at most one bin.
TEST_P(RodiniaCases, SampledCrdConcludesAsTheExactOne) {
  if (GetParam().build != "gcc.O2" && GetParam().build != "plain.gcc.O1")
    GTEST_SKIP() << "one build per source";
  auto conclusions = [](const nlohmann::json& r) {
    std::set<std::string> out;
    for (const nlohmann::json& s : r["suggestions"])
      out.insert(s["kind"].dump() + " " + s["region"].dump() + " " +
                 (s.contains("reads_at") ? s["reads_at"].dump() : ""));
    return out;
  };
  auto by_region = [&](const std::string& profile) {
    std::map<std::string, nlohmann::json> out;
    for (const nlohmann::json& e : json(weft() + " crd " + profile + " --format json"))
      out[e["region"].get<std::string>()] = e;
    return out;
  };
  auto shares = [](const nlohmann::json& entry) {
    std::map<uint64_t, double> out;
    const double events = entry["events"].get<double>();
    for (const nlohmann::json& bin : entry["histogram"])
      out[bin["hi"].get<uint64_t>()] = bin["count"].get<double>() / events;
    return out;
  };
  for (const std::string program : {"particle_resample_omp", "srad_steps_pthreads"}) {
    const nlohmann::json exact = report(program);
    const nlohmann::json sampled = report(program, "");
    EXPECT_EQ(conclusions(sampled), conclusions(exact)) << program;
    EXPECT_GT(sampled["run"]["crd_sample_rate"].get<double>(), 0.0);
    EXPECT_LT(sampled["run"]["crd_sample_rate"].get<double>(), 1.0) << program << ": not sampled";
    EXPECT_EQ(exact["run"]["crd_sample_rate"].get<double>(), 1.0);
    const auto exact_crd = by_region(db(program + ".db"));
    const auto sampled_crd = by_region(db(program + ".sampled.db"));
    for (const auto& [name, e] : exact_crd) {
      if (e["events"].get<uint64_t>() < 1000) continue;
      ASSERT_TRUE(sampled_crd.contains(name)) << program << " " << name;
      const nlohmann::json& s = sampled_crd.at(name);
      const auto a = shares(e), b = shares(s);
      const bool per_bin = program == std::string("particle_resample_omp");
      // The mass of `h` in bin `hi`, with its neighbours when mass may move a bin.
      auto around = [&](const std::map<uint64_t, double>& h, uint64_t hi) {
        double sum = h.contains(hi) ? h.at(hi) : 0.0;
        if (per_bin) return sum;
        for (uint64_t other : {hi / 2, hi * 2 + 1})
          if (other != hi && h.contains(other)) sum += h.at(other);
        return sum;
      };
      for (const auto& [hi, share] : a) {
        if (per_bin)
          EXPECT_LE(std::abs(share - around(b, hi)), 0.02)
              << program << " " << name << " bin ..." << hi;
        else
          EXPECT_LE(share - around(b, hi), 0.02) << program << " " << name << " bin ..." << hi;
      }
      for (const auto& [hi, share] : b)
        EXPECT_LE(share - around(a, hi), 0.02) << program << " " << name << " bin ..." << hi;
      if (e["median"].is_null()) continue;
      ASSERT_FALSE(s["median"].is_null()) << program << " " << name;
      const int exact_bin = std::bit_width(e["median"].get<uint64_t>());
      const int sampled_bin = std::bit_width(s["median"].get<uint64_t>());
      EXPECT_LE(std::abs(exact_bin - sampled_bin), 1) << program << " " << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Builds, RodiniaCases, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) { return weft_test::test_name(info.param.build); });

// The CRR of a loop that re-reads data whose true communication happened in
// another loop (docs/metrics.md, "CRR"; counts derived in
// examples/heat_steps_pthreads.c): the time steps of relax re-read the
// conductances each worker first read in first_touch. Their CRR divides by
// the lines read (raw + borrowed), where rar / raw gave 0 and 20479.
class HeatSteps : public RegionTest, public ::testing::WithParamInterface<weft_test::ExampleBuild> {
 protected:
  static constexpr int kW = 4, kN = 4096, kS = 10, kB = kN / kW, kL = kB / 8;

  nlohmann::json crr(const std::string& profile, const std::string& region) {
    return json(weft() + " comm " + profile + " --kind crr --region '" + region +
                "' --format json");
  }
  static void expect_row(const nlohmann::json& matrix, const std::vector<double>& row,
                         const std::string& what) {
    ASSERT_TRUE(matrix.is_array() && !matrix.empty()) << what;
    const std::vector<double> got = matrix[0].get<std::vector<double>>();
    ASSERT_EQ(got.size(), row.size()) << what;
    for (size_t i = 0; i < row.size(); ++i)
      EXPECT_DOUBLE_EQ(got[i], row[i]) << what << " [0][" << i << "]";
  }
  // Mean over the T rows of the population variance of the row, for a
  // matrix whose only non-zero row is `row`.
  static double homogeneity_of(const std::vector<double>& row) {
    double mean = 0, variance = 0;
    for (double v : row) mean += v;
    mean /= static_cast<double>(row.size());
    for (double v : row) variance += (v - mean) * (v - mean);
    return variance / static_cast<double>(row.size()) / static_cast<double>(row.size());
  }
};

TEST_P(HeatSteps, ReReadingLoopDividesByTheCommunicationsOfItsData) {
  const std::string profile = db();
  record(std::string(WEFT_EXAMPLES_DIR) + "/heat_steps_pthreads." + GetParam().build,
         "--backend " + GetParam().backend, profile);
  const double L = kL, B = kB, S = kS;
  // Pair (0, w) in relax: w = 1 raw 0, rar (2B-1)S; w = 2, 3 raw 1, rar 2BS-1;
  // w = 4 raw 1, rar (2B-1)S-1; and it re-read the L lines of its block,
  // received in first_touch.
  const std::vector<double> relax_row = {0, (2 * B - 1) * S / L, (2 * B * S - 1) / (L + 1),
                                         (2 * B * S - 1) / (L + 1),
                                         ((2 * B - 1) * S - 1) / (L + 1)};
  const nlohmann::json relax = crr(profile, "relax");
  expect_row(relax["matrix"], relax_row, "relax");
  EXPECT_EQ(relax["communicated"][0], nlohmann::json({0, kL, kL + 1, kL + 1, kL + 1}));
  const nlohmann::json raw =
      json(weft() + " comm " + profile + " --kind raw --region relax --format json");
  EXPECT_EQ(raw["matrix"][0], nlohmann::json({0, 0, 1, 1, 1}));
  // The time steps' section (all of relax's events) has the same CRR.
  const fs::path source = fs::path(WEFT_EXAMPLES_SOURCE_DIR) / "heat_steps_pthreads.c";
  const std::string steps = "section@heat_steps_pthreads.c:" +
                            std::to_string(weft_test::marker_line(source, "weft:step-barrier"));
  expect_row(crr(profile, steps)["matrix"], relax_row, steps);
  // first_touch received each line and read it 7 more times.
  const nlohmann::json first = crr(profile, "first_touch");
  expect_row(first["matrix"], {0, 7, 7, 7, 7}, "first_touch");
  EXPECT_EQ(first["communicated"][0], nlohmann::json({0, kL, kL, kL, kL}));

  // The whole program holds every true communication: it borrows nothing,
  // its CRR is (first_touch's rar + relax's) / raw.
  const nlohmann::json program = json(weft() + " comm " + profile + " --kind crr --format json");
  expect_row(program["matrix"],
             {0, (B - L + (2 * B - 1) * S) / L, (B - L + 2 * B * S - 1) / (L + 1),
              (B - L + 2 * B * S - 1) / (L + 1), (B - L + (2 * B - 1) * S - 1) / (L + 1)},
             "program");
  EXPECT_EQ(program["communicated"][0], nlohmann::json({0, kL, kL + 1, kL + 1, kL + 1}));

  // The report's locality rows of the two loops: only row 0 (the main
  // thread's conductances) has a non-zero CRR (the neighbours' halos are
  // read once per step), so B = 400% (one row of five) and H is row 0's
  // variance over 5. No advice: 4096 conductances (32 KiB) broadcast once.
  const nlohmann::json report = json(weft() + " report " + profile + " --format json");
  auto locality = [&](const std::string& prefix) {
    for (const nlohmann::json& r : report["regions_locality"])
      if (r["name"].get<std::string>().starts_with(prefix)) return r;
    ADD_FAILURE() << "no region " << prefix << " in " << report["regions_locality"].dump();
    return nlohmann::json();
  };
  const nlohmann::json loop = locality("relax:loop@");
  EXPECT_EQ(loop["raw"].get<uint64_t>() + loop["rar"].get<uint64_t>(), 81960u);
  EXPECT_NEAR(loop["homogeneity"].get<double>(), homogeneity_of(relax_row), 1e-9);
  EXPECT_DOUBLE_EQ(loop["balance"].get<double>(), 400.0);
  const nlohmann::json touch = locality("first_touch:loop@");
  EXPECT_NEAR(touch["homogeneity"].get<double>(), homogeneity_of({0, 7, 7, 7, 7}), 1e-12);
  EXPECT_TRUE(report["suggestions"].empty()) << report["suggestions"].dump(2);

  // A profile without crr_epochs (an older weft's) reads as rar / raw: the
  // values this definition replaces.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(profile.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(h, "DROP TABLE crr_epoch_regions; DROP TABLE crr_epochs;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  expect_row(crr(profile, "relax")["matrix"],
             {0, 0, 2 * B * S - 1, 2 * B * S - 1, (2 * B - 1) * S - 1}, "relax, rar / raw");
}

INSTANTIATE_TEST_SUITE_P(Builds, HeatSteps, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) { return weft_test::test_name(info.param.build); });

INSTANTIATE_TEST_SUITE_P(Builds, ExampleCrd,
                         ::testing::Values("gcc.O1", "gcc.O2", "clang.O1", "clang.O2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name[name.find('.')] = '_';
                           return name;
                         });

}  // namespace
