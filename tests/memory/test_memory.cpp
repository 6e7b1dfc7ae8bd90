// End-to-end tests of the false-sharing and traces analyses (MAQAO section 3)
// on examples whose behaviour is known by construction, recorded with the
// compile-time source (gcc and clang, -O1 and -O2) and the binary source
// (plain gcc -O1 and clang -O2 builds):
//   - false_sharing_pairs_pthreads: adjacent counters handed over between
//     every ordered pair of threads: exactly R false-sharing events per pair
//     at the increment line, each thread on its own 8 bytes, no true
//     sharing, and no communication at all at 8-byte granularity; padded:
//     nothing; with few turns, an item below the --min-events threshold,
//     counted but not listed;
//   - tally_race_omp: per-thread counters packed in a heap block, ranked as
//     one item of exactly B / 2 lines named by the allocation line; a racy
//     `total +=` reported as unsynchronised sharing (a possible data race)
//     with a reduction/lock fix, never as false sharing, while an update in
//     an `omp critical` section is not one; a read-only global next to
//     per-thread slots, whose fix moves the written neighbour;
//   - dgemm_schedule_omp: false sharing on C only with schedule(dynamic)
//     (MAQAO's Fig. 13), at the update line, C named by its allocation line,
//     and a warning on the dynamic loop's schedule;
//   - schedules_omp: static, static 4, dynamic 16 and guided recognised with
//     their chunk sizes; the static loop's traces are one loop per thread
//     whose expansion is exactly the thread's block of the array;
//   - memory_patterns_pthreads: each kernel is its finding, at its line (a
//     loop that uses every field of its records none);
//   - stencil_pthreads, stencil_omp, smoothing_steps_pthreads: reuse across
//     time steps is no finding, reuse within one is; a stride finding needs
//     256 accesses in the stream it is read from.
//   - polynomial_steps_pthreads: the lines where threads' blocks of an array
//     meet are an item too small to act on (no fix, not in the report); a
//     cyclic split of the same array is the report's first finding;
//   - flame_steps_omp: four parallel loops with their own schedules (static,
//     static 8, dynamic 4, guided 8), each run once per time step: every
//     one recognised in each of its executions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/example_source.h"

namespace fs = std::filesystem;
using nlohmann::json;
using weft_test::run_command;
using weft_test::TempDir;

namespace {

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";

using Build = weft_test::ExampleBuild;

std::string name_of(const Build& b) { return weft_test::test_name(b.build + "_" + b.backend); }

int marker(const std::string& example, const std::string& name) {
  return weft_test::marker_line(fs::path(WEFT_EXAMPLES_SOURCE_DIR) / example, name);
}

// The fix of a false-sharing item whose threads' elements (8-byte, in a
// line-aligned heap block allocated in main at `file:line`) interleave
// through `lines` shared lines (docs/metrics.md, "False sharing").
std::string interleaved_fix(const std::string& file, int line, const std::string& lines) {
  return "the threads' elements of the heap block allocated at " + file + ":" +
         std::to_string(line) + " main interleave in each of its " + lines +
         " shared lines: give each thread a contiguous part, so that only the lines where two "
         "parts meet are shared, wherever the elements are dealt out: a loop split in blocks "
         "rather than cyclically (OpenMP schedule(static) without a chunk size, or chunks of at "
         "least 8 elements (a 64-byte line)), per-thread data indexed [thread][element] rather "
         "than [element][thread] (padding each element to 64 bytes would also do, at 8 times "
         "the memory)";
}

std::string program(const std::string& example, const Build& b) {
  return std::string(WEFT_EXAMPLES_DIR) + "/" + example + "." + b.build;
}

// Records `command` into dir/NAME.db and returns the profile's path.
std::string record(const TempDir& dir, const Build& b, const std::string& options,
                   const std::string& command, const std::string& name = "p") {
  const std::string profile = (dir.path / (name + ".db")).string();
  auto rec = run_command(kWeft + " record --backend " + b.backend + " " + options + " -o " +
                             profile + " -- " + command,
                         dir.path);
  EXPECT_EQ(rec.code, 0) << rec.err;
  return profile;
}

json view(const TempDir& dir, const std::string& args) {
  auto out = run_command(kWeft + " " + args, dir.path);
  EXPECT_EQ(out.code, 0) << out.err;
  return out.code == 0 ? json::parse(out.out) : json();
}

// The addresses of a `weft trace --format json` trace, in order: a loop is
// {"for": COUNT, "body": [...]}, a value {"val": BASE, "coefficients": [...]}
// with address = BASE + sum c_k * i_k (i_0 the outermost loop).
void expand_into(const json& node, std::vector<int64_t>& indices, std::vector<uint64_t>& out) {
  if (node.contains("for")) {
    for (int64_t i = 0; i < node["for"].get<int64_t>(); ++i) {
      indices.push_back(i);
      for (const json& child : node["body"]) expand_into(child, indices, out);
      indices.pop_back();
    }
    return;
  }
  uint64_t address = node["val"].get<uint64_t>();
  const json& c = node["coefficients"];
  for (size_t k = 0; k < c.size(); ++k)
    address += static_cast<uint64_t>(c[k].get<int64_t>() * indices[k]);
  out.push_back(address);
}

std::vector<uint64_t> expand(const json& elements) {
  std::vector<uint64_t> out;
  std::vector<int64_t> indices;
  for (const json& e : elements) expand_into(e, indices, out);
  return out;
}

class MemoryAnalyses : public ::testing::TestWithParam<Build> {};

TEST_P(MemoryAnalyses, EveryOrderedPairSharesTheCounterLineFalsely) {
  const Build& b = GetParam();
  TempDir dir;
  constexpr int T = 4, R = 9;  // 108 events: above the 100 of a finding
  const std::string prog = program("false_sharing_pairs_pthreads", b);
  const std::string profile = record(dir, b, "--analyses comm,falseshare", prog + " packed 4 9 20");
  const json lines = view(dir, "falseshare --format json " + profile);
  ASSERT_EQ(lines.size(), 1u) << lines.dump();
  const json& line = lines[0];
  EXPECT_EQ(line["kind"], "false-sharing");
  EXPECT_EQ(line["events"], T * (T - 1) * R);
  EXPECT_EQ(line["lines"], 1);
  EXPECT_EQ(line["symbol"], "packed");
  EXPECT_EQ(line["object_kind"], "global");
  EXPECT_EQ(line["address"].get<uint64_t>() % 64, 0u);
  EXPECT_FALSE(line["read_only"].get<bool>());
  EXPECT_NE(line["fix"].get<std::string>().find("pad each element to 64 bytes"), std::string::npos)
      << line["fix"];

  // Every ordered pair, R events each.
  std::map<std::pair<int, int>, int> pairs;
  for (const json& p : line["pairs"]) pairs[{p["writer"], p["reader"]}] = p["events"];
  ASSERT_EQ(pairs.size(), static_cast<size_t>(T * (T - 1))) << line.dump();
  for (const auto& [pair, events] : pairs) {
    EXPECT_NE(pair.first, pair.second);
    EXPECT_EQ(events, R) << pair.first << " -> " << pair.second;
  }
  // Each thread used exactly its own counter's 8 bytes.
  ASSERT_EQ(line["threads"].size(), static_cast<size_t>(T));
  for (const json& t : line["threads"]) {
    const int id = t["thread"];
    EXPECT_EQ(t["offsets"], json::array({json::array({8 * id, 8 * id + 7})})) << t.dump();
  }
  // All at the increment line, (T-1) * R events as reader per thread.
  const int increment = marker("false_sharing_pairs_pthreads.c", "weft:false-sharing");
  std::map<int, int> per_thread;
  for (const json& s : line["sites"]) {
    EXPECT_EQ(s["line"], increment) << s.dump();
    EXPECT_EQ(fs::path(s["file"].get<std::string>()).filename(), "false_sharing_pairs_pthreads.c");
    // worker, or main where the compiler inlined main's own call of it
    EXPECT_TRUE(s["function"] == "worker" || s["function"] == "main") << s.dump();
    per_thread[s["thread"]] += s["events"].get<int>();
  }
  ASSERT_EQ(per_thread.size(), static_cast<size_t>(T));
  for (const auto& [thread, events] : per_thread) EXPECT_EQ(events, (T - 1) * R) << thread;

  // The report names it first, with its fix.
  const json report = view(dir, "report --format json " + profile);
  ASSERT_FALSE(report["memory_findings"].empty()) << report.dump();
  EXPECT_EQ(report["memory_findings"][0]["kind"], "false-sharing");
  EXPECT_EQ(report["memory_findings"][0]["line"], increment);

  // At word granularity the counters are not communication: the packed
  // run's matrix is exactly the padded run's (the start-up data the threads
  // read, main's reads of the counters at the end). At line granularity
  // the packed run has exactly the R handovers of each ordered pair on top,
  // except that main's final read of each counter, communication in the
  // padded run, is local in the packed one (main wrote the line last).
  auto matrix = [&](const std::string& mode, const std::string& granularity) {
    const std::string db = record(dir, b, "--analyses comm --granularity " + granularity,
                                  prog + " " + mode + " 4 9 20", mode + granularity);
    return view(dir, "comm --format json " + db)["matrix"];
  };
  EXPECT_EQ(matrix("packed", "8"), matrix("padded", "8"));
  const json packed = matrix("packed", "64"), padded = matrix("padded", "64");
  for (int writer = 0; writer < T; ++writer) {
    for (int reader = 0; reader < T; ++reader) {
      const int handovers = writer == reader ? 0 : reader == 0 ? R - 1 : R;
      EXPECT_EQ(packed[writer][reader].get<int>() - padded[writer][reader].get<int>(), handovers)
          << "writer " << writer << ", reader " << reader << ": " << packed.dump() << " vs "
          << padded.dump();
    }
  }
}

// Three turns per pair: 36 transfers, an item below the threshold of a
// finding (kMinFalseSharingEvents, 100): counted, not listed, unless asked.
TEST_P(MemoryAnalyses, SmallItemsAreCountedNotListed) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile = record(dir, b, "--analyses comm,falseshare",
                                     program("false_sharing_pairs_pthreads", b) + " packed 4 3 20");
  EXPECT_EQ(view(dir, "falseshare --format json " + profile), json::array());
  const json all = view(dir, "falseshare --format json --min-events 1 " + profile);
  ASSERT_EQ(all.size(), 1u) << all.dump();
  EXPECT_EQ(all[0]["events"], 36);
  auto table = run_command(kWeft + " falseshare " + profile, dir.path);
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("1 smaller false-sharing item (36 transfers in all) below --min-events "
                           "100 not listed"),
            std::string::npos)
      << table.out;
  const json report = view(dir, "report --format json " + profile);
  for (const json& f : report["memory_findings"]) EXPECT_NE(f["kind"], "false-sharing") << f.dump();
}

// polynomial_steps_pthreads (see its header), the same update split two
// ways among 4 threads. In blocks, y's 3 lines where two threads' parts meet
// move about twice a step: a listed item (100 transfers or more) that costs
// a few hundredths of a percent of the threads' time, whose fix says none is
// needed and which the report leaves out. Cyclically, every line of y moves
// at each thread's write: the item is most of the threads' time, with a
// fix, and the report's first finding.
TEST_P(MemoryAnalyses, AnItemTooSmallToActOnSaysSo) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string source = "polynomial_steps_pthreads.c";
  const std::string prog = program("polynomial_steps_pthreads", b);
  auto y_item = [&](const json& items) -> json {
    for (const json& item : items)
      if (item.contains("allocated_at") &&
          item["allocated_at"]["line"] == marker(source, "weft:alloc-y"))
        return item;
    return json();
  };

  const std::string blocks = record(dir, b, "--analyses comm,falseshare --falseshare-sampling 1",
                                    prog + " block 4 64", "blocks");
  const json items = view(dir, "falseshare --format json " + blocks);
  const json boundary = y_item(items);
  ASSERT_FALSE(boundary.is_null()) << items.dump();
  EXPECT_EQ(boundary["kind"], "false-sharing");
  EXPECT_EQ(boundary["lines"], 3);
  EXPECT_GE(boundary["events"], 100);
  EXPECT_EQ(boundary["source_lines"][0]["line"], marker(source, "weft:boundary"));
  EXPECT_TRUE(boundary["negligible"].get<bool>()) << boundary.dump();
  EXPECT_LT(boundary["time_share"].get<double>(), 0.001) << boundary.dump();
  EXPECT_EQ(boundary["fix"].get<std::string>().rfind("none needed: its ", 0), 0u)
      << boundary["fix"];
  for (const json& item : items) {
    if (item["kind"] == "false-sharing") {
      EXPECT_TRUE(item["negligible"].get<bool>()) << item.dump();
    }
  }
  auto table = run_command(kWeft + " falseshare " + blocks, dir.path);
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("   fix: none needed: its "), std::string::npos) << table.out;
  const json quiet = view(dir, "report --format json " + blocks);
  for (const json& f : quiet["memory_findings"]) EXPECT_NE(f["kind"], "false-sharing") << f.dump();

  const std::string cyclic = record(dir, b, "--analyses comm,falseshare --falseshare-sampling 1",
                                    prog + " cyclic 4 64", "cyclic");
  const json every_line = y_item(view(dir, "falseshare --format json " + cyclic));
  ASSERT_FALSE(every_line.is_null());
  EXPECT_EQ(every_line["lines"], 16385);  // 131076 doubles from a line's start
  EXPECT_FALSE(every_line["negligible"].get<bool>()) << every_line.dump();
  EXPECT_GT(every_line["time_share"].get<double>(), 0.1) << every_line.dump();
  // Every line of a 1 MiB array: padding each element is not the fix (8x the
  // memory); contiguous parts are, in chunks of at least a line's 8 doubles.
  // The array is already aligned_alloc'ed: not told to align it.
  EXPECT_EQ(every_line["fix"], interleaved_fix(source, marker(source, "weft:alloc-y"), "16,385"));
  table = run_command(kWeft + " falseshare " + cyclic, dir.path);
  EXPECT_NE(table.out.find("   cost: about "), std::string::npos) << table.out;
  const json loud = view(dir, "report --format json " + cyclic);
  ASSERT_FALSE(loud["memory_findings"].empty()) << loud.dump();
  EXPECT_EQ(loud["memory_findings"][0]["kind"], "false-sharing");
  EXPECT_EQ(loud["memory_findings"][0]["line"], marker(source, "weft:cyclic"));
}

// points_assign_pthreads (see its header): main wrote every point's
// coordinates, and each worker's first access to each line of its block is
// the write of a point's cluster, bytes main did not write: one
// false-sharing transfer from thread 0 a line, N / 8 - 1 or N / 8 per
// worker. No line goes back and forth: a hand-over, whose fix is no
// layout change (the parts are contiguous already), with no cost line and
// no memory finding in the report.
TEST_P(MemoryAnalyses, AHandOverOfInitialisedDataIsNoLayoutProblem) {
  const Build& b = GetParam();
  TempDir dir;
  constexpr int64_t kPoints = 131072, kLinesPerWorker = kPoints / 8;
  const std::string source = "points_assign_pthreads.c";
  const std::string profile = record(dir, b, "--analyses comm,falseshare --falseshare-sampling 1",
                                     program("points_assign_pthreads", b));
  const json items = view(dir, "falseshare --format json " + profile);
  ASSERT_FALSE(items.empty());
  const json& item = items[0];
  ASSERT_TRUE(item.contains("allocated_at")) << item.dump();
  EXPECT_EQ(item["allocated_at"]["line"], marker(source, "weft:alloc"));
  EXPECT_TRUE(item["hand_over"].get<bool>()) << item.dump();
  int64_t from_main = 0;
  for (const json& pair : item["pairs"]) {
    if (pair["writer"] != 0) {
      EXPECT_EQ(pair["events"], 1) << pair.dump();  // where two blocks meet
      continue;
    }
    EXPECT_GE(pair["events"].get<int64_t>(), kLinesPerWorker - 1) << pair.dump();
    EXPECT_LE(pair["events"].get<int64_t>(), kLinesPerWorker) << pair.dump();
    from_main += pair["events"].get<int64_t>();
  }
  EXPECT_GE(from_main, 3 * (kLinesPerWorker - 1));
  const int64_t lines = item["lines"].get<int64_t>(), events = item["events"].get<int64_t>();
  EXPECT_LE(events, lines);  // once each at most
  auto digits = [](int64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
      s.insert(static_cast<size_t>(i), ",");
    return s;
  };
  EXPECT_EQ(item["fix"],
            "none by layout: each of its " + digits(lines) + " lines moved about once (" +
                digits(events) +
                " transfers), from thread 0, which wrote the data before the others used it: a "
                "hand-over, not lines going back and forth. Once the receiving thread reads what "
                "thread 0 wrote in a line (as a thread using data another initialised does), the "
                "line moves whatever the layout, so padding or another split saves nothing; if "
                "the heap block allocated at points_assign_pthreads.c:" +
                std::to_string(marker(source, "weft:alloc")) +
                " main is used many times, let each thread initialise the part it uses (first "
                "touch)");
  auto table = run_command(kWeft + " falseshare " + profile, dir.path);
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out.find("   cost: "), std::string::npos) << table.out;
  const json report = view(dir, "report --format json " + profile);
  for (const json& f : report["memory_findings"]) EXPECT_NE(f["kind"], "false-sharing") << f.dump();
}

// md_cells_spin_barrier_pthreads (see its header): 64 cells of 24
// 48-byte molecules, 1,152 bytes (18 lines) each, dealt to 4 threads by
// cell_owner(c) = (3 c^2 mod 10) mod 4, whose period of 10 cells
// (0 3 2 3 0 1 0 3 2 3) gives neighbours different owners everywhere.
// Where the linker puts `cells` on a line, no line holds two cells and
// nothing is false-shared; where it does not (16 or 32 bytes into a line
// in these builds), each of the 63 lines where two cells meet is, and the
// fix is to align the array, not to pad molecules.
TEST_P(MemoryAnalyses, AnUnalignedArrayIsToldToAlignNotToPad) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile = record(dir, b, "--analyses comm,falseshare --falseshare-sampling 1",
                                     program("md_cells_spin_barrier_pthreads", b));
  const json items = view(dir, "falseshare --format json " + profile);
  const json* cells = nullptr;
  for (const json& item : items)
    if (item["kind"] == "false-sharing" && item["symbol"] == "cells") cells = &item;
  if (cells == nullptr) {
    // Aligned in this build: check it is, through the symbol table.
    auto nm = run_command("nm " + program("md_cells_spin_barrier_pthreads", b), dir.path);
    ASSERT_EQ(nm.code, 0) << nm.err;
    const size_t at = nm.out.find(" cells\n");
    ASSERT_NE(at, std::string::npos) << nm.out;
    const size_t begin = nm.out.rfind('\n', at) + 1;
    EXPECT_EQ(std::stoull(nm.out.substr(begin, 16), nullptr, 16) % 64, 0u) << nm.out;
    return;
  }
  const uint64_t start = (*cells)["object_address"].get<uint64_t>() % 64;
  ASSERT_NE(start, 0u) << cells->dump();
  EXPECT_EQ((*cells)["lines"], 63);
  EXPECT_EQ((*cells)["fix"],
            "'cells' starts " + std::to_string(start) +
                " bytes into a 64-byte line, and in each of its 63 shared lines the threads' "
                "parts meet where one of its own lines would begin: "
                "declare it alignas(64) (C11 _Alignas(64), or __attribute__((aligned(64))), and "
                "every part starts a line of its own (no padding needed)");
}

// tally_race_omp (see its header): the race first, then the counters' heap
// block as one item of B / 2 = 256 lines, and the read-only limit whose fix
// moves its written neighbour (`finished` with gcc's layout, `progress` with
// clang's).
TEST_P(MemoryAnalyses, SharingIsRankedByObjectAndRacesAreNotFalseSharing) {
  const Build& b = GetParam();
  TempDir dir;
  constexpr int kThreads = 4, kLines = 256, kRounds = 40;
  const std::string profile =
      record(dir, b, "--analyses comm,falseshare", program("tally_race_omp", b) + " 16384 512 40");
  const json items = view(dir, "falseshare --format json " + profile);
  const auto line_of = [](const char* name) { return marker("tally_race_omp.c", name); };
  ASSERT_GE(items.size(), 3u) << items.dump();

  // The race: one item, the global total, from the += line only.
  const json& race = items[0];
  EXPECT_EQ(race["kind"], "race") << race.dump();
  EXPECT_EQ(race["symbol"], "total");
  EXPECT_EQ(race["object_kind"], "global");
  EXPECT_EQ(race["lines"], 1);
  EXPECT_GE(race["events"], kThreads - 1);
  ASSERT_EQ(race["source_lines"].size(), 1u) << race.dump();
  EXPECT_EQ(race["source_lines"][0]["line"], line_of("weft:race"));
  for (const json& s : race["sites"]) EXPECT_EQ(s["line"], line_of("weft:race")) << s.dump();
  for (const json& t : race["threads"])
    EXPECT_EQ(t["offsets"], json::array({json::array({0, 7})})) << t.dump();
  const std::string race_fix = race["fix"];
  EXPECT_NE(race_fix.find("reduction(+:total)"), std::string::npos) << race_fix;
  EXPECT_NE(race_fix.find("lock or make it atomic"), std::string::npos) << race_fix;
  EXPECT_EQ(race_fix.find("pad"), std::string::npos) << race_fix;
  int races = 0;
  for (const json& item : items) {
    races += item["kind"] == "race";
    // total is a race, never false sharing
    if (item["kind"] == "false-sharing") {
      EXPECT_NE(item["symbol"], "total") << item.dump();
    } else {
      // updated under `omp critical`: ordered
      EXPECT_NE(item["symbol"], "heaviest") << item.dump();
    }
  }
  EXPECT_EQ(races, 1) << items.dump();

  // The counters: one item over the whole block, its top source line the
  // increment (at least 2 transfers per line: each line changes writer at
  // least 3 times, the first change may leave main's memset, true sharing);
  // main's sum of the counters (at most one per line) may add its line.
  const json& counts = items[1];
  EXPECT_EQ(counts["kind"], "false-sharing") << counts.dump();
  EXPECT_EQ(counts["object_kind"], "heap");
  EXPECT_EQ(counts["allocated_at"]["line"], line_of("weft:alloc"));
  EXPECT_EQ(counts["object_size"], kLines * 64);
  EXPECT_EQ(counts["blocks"], 1);
  EXPECT_EQ(counts["lines"], kLines);
  EXPECT_GE(counts["events"], 2 * kLines);
  EXPECT_EQ(counts["source_lines"][0]["line"], line_of("weft:count"));
  for (const json& s : counts["source_lines"])
    EXPECT_TRUE(s["line"] == line_of("weft:count") || s["line"] == line_of("weft:sum")) << s.dump();
  EXPECT_FALSE(counts["read_only"].get<bool>());
  // Each line holds 2 bins x 4 threads: per-thread counters indexed
  // [bin][thread], which [thread][bin] (each thread's contiguous) mends; the
  // block is aligned_alloc'ed already.
  EXPECT_EQ(counts["fix"], interleaved_fix("tally_race_omp.c", line_of("weft:alloc"), "256"));

  // limit: read only, next to the slots the rounds write.
  const bool gcc_layout = b.build.find("gcc") != std::string::npos;
  const json* limit = nullptr;
  for (const json& item : items)
    if (item["symbol"] == "limit") limit = &item;
  ASSERT_NE(limit, nullptr) << items.dump();
  EXPECT_EQ((*limit)["kind"], "false-sharing");
  EXPECT_EQ((*limit)["lines"], 1);
  // (main's initialization of limit makes round 0's first reads true sharing)
  EXPECT_GE((*limit)["events"], (kThreads - 1) * (kRounds - 1));
  EXPECT_EQ((*limit)["source_lines"][0]["line"], line_of("weft:read-limit"));
  EXPECT_TRUE((*limit)["read_only"].get<bool>()) << limit->dump();
  EXPECT_EQ((*limit)["neighbours"], json::array({gcc_layout ? "'finished'" : "'progress'"}))
      << limit->dump();
  const std::string limit_fix = (*limit)["fix"];
  EXPECT_NE(limit_fix.find("move or align the written neighbour"), std::string::npos) << limit_fix;
  EXPECT_EQ(limit_fix.find("pad each element"), std::string::npos) << limit_fix;

  // The table: the items by object, with their line counts.
  auto table = run_command(kWeft + " falseshare " + profile, dir.path);
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("Unsynchronised sharing (possible data races)\n\n1. "),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("unsynchronised write"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" on 1 line of 'total' (global, 8 bytes), from tally_race_omp.c:" +
                           std::to_string(line_of("weft:race")) + "\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("false-sharing transfers on 256 lines of heap block of 16384 bytes "
                           "allocated at tally_race_omp.c:" +
                           std::to_string(line_of("weft:alloc")) +
                           " main, from tally_race_omp.c:" + std::to_string(line_of("weft:count"))),
            std::string::npos)
      << table.out;

  // The report: the race first, then the counters, limit with its fix.
  const json report = view(dir, "report --format json " + profile);
  const json& findings = report["memory_findings"];
  ASSERT_GE(findings.size(), 3u) << findings.dump();
  EXPECT_EQ(findings[0]["kind"], "race");
  EXPECT_EQ(findings[0]["line"], line_of("weft:race"));
  EXPECT_NE(findings[0]["evidence"].get<std::string>().find("possible data race"),
            std::string::npos);
  EXPECT_EQ(findings[1]["kind"], "false-sharing");
  EXPECT_EQ(findings[1]["line"], line_of("weft:count"));
  bool limit_found = false;
  for (const json& f : findings) {
    if (f["line"] != line_of("weft:read-limit")) continue;
    limit_found = true;
    EXPECT_NE(f["suggestion"].get<std::string>().find("move or align the written neighbour"),
              std::string::npos)
        << f.dump();
  }
  EXPECT_TRUE(limit_found) << findings.dump();
  // The tally loop's communication is the race and the false sharing (their
  // lines read 98% of it): fixing them is the action, not a thread mapping
  // (an even split {0, 3} {1, 2} was advised before, docs/metrics.md).
  for (const json& s : report["suggestions"]) EXPECT_NE(s["kind"], "thread-affinity") << s.dump();
}

TEST_P(MemoryAnalyses, PaddedCountersShareNothing) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile = record(dir, b, "--analyses comm,falseshare",
                                     program("false_sharing_pairs_pthreads", b) + " padded 4 3 20");
  EXPECT_EQ(view(dir, "falseshare --format json " + profile), json::array());
}

TEST_P(MemoryAnalyses, DgemmSharesLinesOnlyUnderDynamicSchedule) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string prog = program("dgemm_schedule_omp", b);
  const std::string options = "--analyses comm,falseshare,traces";
  // Every item, whatever its volume (a serialized run may hand most chunks
  // to one thread).
  const std::string fixed = record(dir, b, options, prog + " static 128 8", "static");
  EXPECT_EQ(view(dir, "falseshare --format json --min-events 1 " + fixed), json::array());

  const std::string dynamic = record(dir, b, options, prog + " dynamic 128 8", "dynamic");
  const json lines = view(dir, "falseshare --format json --min-events 1 " + dynamic);
  ASSERT_FALSE(lines.empty());
  const int update = marker("dgemm_schedule_omp.c", "weft:c-update-dynamic");
  const int allocation = marker("dgemm_schedule_omp.c", "weft:c-alloc");
  // Inside the parallel loop every site is the update of C. (After the
  // loop, main's first read of a line last written by a thread that wrote
  // other bytes of it is a false-sharing event too, by definition.)
  for (const json& line : lines) {
    EXPECT_EQ(line["object_kind"], "heap") << line.dump();
    EXPECT_EQ(line["allocated_at"]["line"], allocation) << line.dump();
    // Every event is one pair's and one site's.
    int pair_events = 0, site_events = 0;
    for (const json& p : line["pairs"]) pair_events += p["events"].get<int>();
    for (const json& s : line["sites"]) site_events += s["events"].get<int>();
    EXPECT_EQ(pair_events, line["events"].get<int>()) << line.dump();
    EXPECT_EQ(site_events, line["events"].get<int>()) << line.dump();
    for (const json& s : line["sites"]) {
      if (s["function"] != "main") {
        EXPECT_EQ(s["line"], update) << s.dump();
      }
    }
  }
  bool at_update = false;
  for (const json& s : lines[0]["sites"]) at_update = at_update || s["line"] == update;
  EXPECT_TRUE(at_update) << lines[0].dump();
  // The dynamic loop's schedule, from the runtime's chunks, with a warning.
  const json report = view(dir, "report --format json " + dynamic);
  bool found = false;
  for (const json& s : report["schedules"]) {
    if (s["schedule"] != "dynamic,1") continue;
    found = true;
    EXPECT_EQ(s["source"], "runtime");
    EXPECT_TRUE(s["warning"].is_string()) << s.dump();
    EXPECT_EQ(s["iterations"], 128);
  }
  EXPECT_TRUE(found) << report["schedules"].dump();
}

TEST_P(MemoryAnalyses, SchedulesAreRecognisedWithTheirChunks) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile =
      record(dir, b, "--analyses comm,traces", program("schedules_omp", b) + " 4096 4");
  const json report = view(dir, "report --format json " + profile);
  const json& schedules = report["schedules"];
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"weft:schedule-static", "static"},
      {"weft:schedule-static4", "static,4"},
      {"weft:schedule-dynamic16", "dynamic,16"},
      {"weft:schedule-guided", "guided,1"}};
  for (const auto& [name, schedule] : expected) {
    const int line = marker("schedules_omp.c", name + " ");
    bool found = false;
    for (const json& s : schedules) {
      const int at = s["line"];
      if (at != line && at != line + 1) continue;  // the pragma or its `for`
      EXPECT_EQ(s["schedule"], schedule) << s.dump();
      EXPECT_EQ(s["iterations"], 4096) << s.dump();
      // Static schedules give every thread its part; with dynamic ones a
      // thread that starts late may find no chunk left.
      if (schedule.rfind("static", 0) == 0) {
        EXPECT_EQ(s["threads"], 4) << s.dump();
      } else {
        EXPECT_GE(s["threads"], 1) << s.dump();
        EXPECT_LE(s["threads"], 4) << s.dump();
      }
      found = true;
    }
    EXPECT_TRUE(found) << name << " at line " << line << " in " << schedules.dump();
  }

  // The static loop's stores: in each thread, the expansion of its store
  // traces (one instruction, or several when the compiler unrolled or
  // vectorized the loop) is exactly its block of 1024 elements, each byte
  // once, the four blocks one after the other; a store's trace is a single
  // loop. (Stores of the loop's set-up to the stack, one each, are not the
  // array's.)
  const int store = marker("schedules_omp.c", "weft:schedule-static ") + 1;
  const json traces = view(
      dir, "trace --format json --line schedules_omp.c:" + std::to_string(store) + " " + profile);
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> stored;  // thread -> (address, size)
  for (const json& t : traces) {
    if (t["kind"] != "write" || t["accesses"] == 1) continue;
    EXPECT_TRUE(t["lossless"].get<bool>());
    EXPECT_EQ(t["recorded"], t["accesses"]);
    ASSERT_EQ(t["trace"].size(), 1u) << t.dump();
    EXPECT_TRUE(t["trace"][0].contains("for")) << t.dump();
    for (uint64_t address : expand(t["trace"]))
      stored[t["thread"]].emplace_back(address, t["access_size"].get<uint64_t>());
  }
  ASSERT_EQ(stored.size(), 4u) << traces.dump();
  std::vector<uint64_t> starts;
  for (auto& [thread, accesses] : stored) {
    std::sort(accesses.begin(), accesses.end());
    uint64_t next = accesses.front().first;
    for (const auto& [address, size] : accesses) {
      EXPECT_EQ(address, next) << "thread " << thread;
      next = address + size;
    }
    EXPECT_EQ(next - accesses.front().first, 1024u * 8) << "thread " << thread;
    starts.push_back(accesses.front().first);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_EQ(starts[i] - starts[i - 1], 1024u * 8);
}

// Loops run every time step (issue 18): each is recovered per execution and
// every execution agrees, whether the chunks come from the runtime or, for
// the static schedules gcc inlines, from the traces (whose written array
// alternates from step to step).
TEST_P(MemoryAnalyses, SchedulesOfLoopsRunEveryTimeStep) {
  const Build& b = GetParam();
  TempDir dir;
  constexpr int kSteps = 12;
  const std::string profile = record(dir, b, "--analyses comm,traces",
                                     program("flame_steps_omp", b) + " " + std::to_string(kSteps));
  const json report = view(dir, "report --format json " + profile);
  const json& schedules = report["schedules"];
  struct Expected {
    std::string marker, schedule;
    int chunk;
  };
  const std::vector<Expected> expected = {{"weft:flame-diffusion", "static", 0},
                                          {"weft:flame-flux", "static,8", 8},
                                          {"weft:flame-chemistry", "dynamic,4", 4},
                                          {"weft:flame-update", "guided,8", 8}};
  size_t in_example = 0;
  for (const json& s : schedules)
    if (fs::path(s["file"].get<std::string>()).filename() == "flame_steps_omp.c") ++in_example;
  EXPECT_EQ(in_example, expected.size()) << schedules.dump();
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.marker);
    const int line = marker("flame_steps_omp.c", e.marker + " ");
    int found = 0;
    for (const json& s : schedules) {
      const int at = s["line"];
      if (at != line && at != line + 1) continue;  // the pragma or its `for`
      ++found;
      EXPECT_EQ(s["schedule"], e.schedule) << s.dump();
      EXPECT_EQ(s["chunk"], e.chunk) << s.dump();
      EXPECT_EQ(s["executions"], kSteps) << s.dump();
      EXPECT_EQ(s["agreeing_executions"], kSteps) << s.dump();
      EXPECT_EQ(s["other_schedules"], json::array()) << s.dump();
      EXPECT_EQ(s["iterations"], 4096) << s.dump();
      EXPECT_EQ(s["source"],
                b.build.find("gcc") != std::string::npos && e.schedule.rfind("static", 0) == 0
                    ? "traces"
                    : "runtime")
          << s.dump();
      if (e.schedule.rfind("static", 0) == 0) {
        EXPECT_EQ(s["threads"], 4) << s.dump();
      } else {
        EXPECT_GE(s["threads"], 1) << s.dump();
        EXPECT_LE(s["threads"], 4) << s.dump();
      }
    }
    EXPECT_EQ(found, 1) << "line " << line << " in " << schedules.dump();
  }
  // The text says it too.
  auto text = run_command(kWeft + " report " + profile, dir.path);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("static,8 in all 12 executions"), std::string::npos) << text.out;
}

// Sampled section instances (docs/metrics.md): with sampling from the first
// basic block (WEFT_SAMPLING_AFTER_BLOCKS=0), weft concludes what it does
// from every instance. The time step's static loops are traced in some
// executions, every thread in each of them, so their schedules are
// recognised in every traced execution; the dynamic ones come from the
// runtime as before. The false sharing of the turn-taking counters is the
// same one finding, with its object and fix, its events an estimate.
TEST_P(MemoryAnalyses, SampledInstancesKeepTheSchedulesAndTheFalseSharing) {
  const Build& b = GetParam();
  TempDir dir;
  constexpr int kSteps = 40;
  const std::string sampled = "WEFT_SAMPLING_AFTER_BLOCKS=0 ";
  const std::string exact_profile =
      record(dir, b, "--analyses comm,traces",
             program("flame_steps_omp", b) + " " + std::to_string(kSteps), "exact");
  const std::string sampled_profile = (dir.path / "sampled.db").string();
  auto rec = run_command(sampled + kWeft + " record --backend " + b.backend +
                             " --analyses comm,traces --trace-sampling 4 -o " + sampled_profile +
                             " -- " + program("flame_steps_omp", b) + " " + std::to_string(kSteps),
                         dir.path);
  ASSERT_EQ(rec.code, 0) << rec.err;
  const json exact_report = view(dir, "report --format json " + exact_profile);
  const json sampled_report = view(dir, "report --format json " + sampled_profile);
  EXPECT_EQ(exact_report["run"]["trace_sample_rate"], 1.0);
  EXPECT_EQ(sampled_report["run"]["trace_sample_rate"], 0.25);
  const json& exact = exact_report["schedules"];
  const json& schedules = sampled_report["schedules"];
  ASSERT_EQ(schedules.size(), exact.size()) << schedules.dump();
  int traced = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    const json& e = exact[i];
    const json& s = schedules[i];
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(s["line"], e["line"]);
    EXPECT_EQ(s["schedule"], e["schedule"]);
    EXPECT_EQ(s["chunk"], e["chunk"]);
    EXPECT_EQ(s["source"], e["source"]);
    EXPECT_EQ(s["agreeing_executions"], s["executions"]) << s.dump();
    EXPECT_EQ(s["other_schedules"], json::array()) << s.dump();
    if (s["source"] == "traces") {
      ++traced;
      // The first 8 passes of each region, then one of each block of 4 of
      // passes 8-39, where a hash of the block picks (the decision depends
      // on the pass counts alone: every build agrees): 8 + 32 / 4.
      EXPECT_EQ(s["executions"], 8 + (kSteps - 8) / 4) << s.dump();
    } else {
      EXPECT_EQ(s["executions"], kSteps) << s.dump();
    }
  }
  if (b.build.find("gcc") != std::string::npos) {
    EXPECT_EQ(traced, 2);
  }
  auto text = run_command(kWeft + " report " + sampled_profile, dir.path);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("section instances analyzed by traces 1 in 4"), std::string::npos)
      << text.out;

  // 48 rounds of the 12 turns: 577 barrier passes, the last turn alone in
  // a grown block of 8.
  constexpr int T = 4, R = 48;
  const std::string pairs = program("false_sharing_pairs_pthreads", b) + " packed 4 48 20";
  const json exact_lines =
      view(dir, "falseshare --format json " +
                    record(dir, b, "--analyses comm,falseshare", pairs, "fs_exact"));
  const std::string fs_profile = (dir.path / "fs_sampled.db").string();
  rec = run_command(sampled + kWeft + " record --backend " + b.backend +
                        " --analyses comm,falseshare --falseshare-sampling 4 -o " + fs_profile +
                        " -- " + pairs,
                    dir.path);
  ASSERT_EQ(rec.code, 0) << rec.err;
  const json lines = view(dir, "falseshare --format json " + fs_profile);
  EXPECT_EQ(view(dir, "report --format json " + fs_profile)["run"]["falseshare_sample_rate"], 0.25);
  ASSERT_EQ(exact_lines.size(), 1u);
  ASSERT_EQ(lines.size(), 1u) << lines.dump();
  EXPECT_EQ(exact_lines[0]["events"], T * (T - 1) * R);
  EXPECT_EQ(exact_lines[0]["pairs"].size(), static_cast<size_t>(T * (T - 1)));
  for (const char* key : {"kind", "symbol", "object_kind", "lines", "fix", "read_only"})
    EXPECT_EQ(lines[0][key], exact_lines[0][key]) << key;
  // Turns 1-7 counted once each; then one turn of each block counted as
  // many times as the block has turns: blocks of 4 up to pass 512, then 8
  // blocks of 8 up to 576 (past 128 N passes the blocks grow as the passes
  // double). Every turn moves the line once, so each complete block's
  // estimate is exact; the last turn (pass 576) is alone in the block
  // 576-583 and counts 8 or, as its pass is not the one picked (the same
  // in every build and source), nothing. A coin per turn gave 660 of 720.
  EXPECT_EQ(lines[0]["events"], T * (T - 1) * R - 1) << lines.dump();
  // Every pair the sample names is one of the run's, counted in whole
  // blocks, and its 8 + 126 + 8 picks fall on all 12.
  uint64_t pair_events = 0;
  for (const json& p : lines[0]["pairs"]) {
    bool known = false;
    for (const json& e : exact_lines[0]["pairs"])
      known = known || (e["writer"] == p["writer"] && e["reader"] == p["reader"]);
    EXPECT_TRUE(known) << p.dump();
    pair_events += p["events"].get<uint64_t>();
  }
  EXPECT_EQ(pair_events, lines[0]["events"].get<uint64_t>());
  EXPECT_EQ(lines[0]["pairs"].size(), static_cast<size_t>(T * (T - 1))) << lines.dump();
  text = run_command(kWeft + " falseshare " + fs_profile, dir.path);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("false sharing (its counts are estimates) 1 in 4"), std::string::npos)
      << text.out;
}

// The memory findings of a report as (kind, line) pairs.
std::multiset<std::pair<std::string, int>> kinds_and_lines(const json& findings) {
  std::multiset<std::pair<std::string, int>> out;
  for (const json& f : findings) out.emplace(f["kind"].get<std::string>(), f["line"].get<int>());
  return out;
}

// Each kernel of memory_patterns_pthreads is reported as its finding, at
// its line.
TEST_P(MemoryAnalyses, TracesRevealAccessPatterns) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile =
      record(dir, b, "--analyses comm,traces", program("memory_patterns_pthreads", b) + " 2");
  const json report = view(dir, "report --format json " + profile);
  const json& findings = report["memory_findings"];
  const int centres = marker("memory_patterns_pthreads.c", "weft:centres");
  const int half_records = marker("memory_patterns_pthreads.c", "weft:half-records");
  for (const char* kind : {"column-wise", "non-unit-stride", "4k-aliasing", "reuse"}) {
    const int line = marker("memory_patterns_pthreads.c", std::string("weft:") + kind);
    bool found = false;
    for (const json& f : findings) {
      if (f["kind"] != kind || f["line"] == centres || f["line"] == half_records) continue;
      EXPECT_EQ(f["line"], line) << f.dump();
      EXPECT_EQ(fs::path(f["file"].get<std::string>()).filename(), "memory_patterns_pthreads.c");
      found = true;
    }
    EXPECT_TRUE(found) << kind << " in " << findings.dump();
  }
  // The centres' loads stride 8 KiB through the points, but reload the
  // same 32 addresses from the L1 for every point: reuse at their line,
  // with the line's figures (each point's x and y 16 times, each centre's
  // 4096 times more), and no large stride anywhere (the column walk is
  // column-wise).
  EXPECT_EQ(kinds_and_lines(findings).count({"reuse", centres}), 1u) << findings.dump();
  for (const json& f : findings) {
    EXPECT_NE(f["kind"], "large-stride") << f.dump();
    if (f["line"] != centres) continue;
    EXPECT_EQ(f["kind"], "reuse") << f.dump();
    EXPECT_EQ(f["evidence"].get<std::string>().rfind(
                  "thread 0 loads each of its 8192 addresses 32.0 times within one run of the "
                  "loop nest (262144 loads)",
                  0),
              0u)
        << f.dump();
    // The reuse is the centres': their 32 coordinates take half of the
    // loads (4096 as centres, 16 as points).
    EXPECT_NE(f["evidence"].get<std::string>().find(
                  "; 32 of the addresses take 50% of the loads, 4112 times each"),
              std::string::npos)
        << f.dump();
  }
  // The bisections reload table entries (4096 entries, 49152 loads per
  // thread) through data-dependent indices: no finding at that line.
  const int bisection = marker("memory_patterns_pthreads.c", "weft:bisection");
  for (const json& f : findings) EXPECT_NE(f["line"], bisection) << f.dump();
  // Two fields of each 32-byte point: a stride of 32 bytes (not 16, as if
  // x and y were the copies of an unrolled loop) through records of which
  // the loop uses 16 bytes. The loop that reads and writes every field of
  // them strides as far, but wastes nothing: no finding.
  const int whole_records = marker("memory_patterns_pthreads.c", "weft:whole-records");
  EXPECT_EQ(kinds_and_lines(findings).count({"non-unit-stride", half_records}), 1u)
      << findings.dump();
  for (const json& f : findings) {
    EXPECT_NE(f["line"], whole_records) << f.dump();
    if (f["line"] != half_records) continue;
    EXPECT_EQ(f["kind"], "non-unit-stride") << f.dump();
    const std::string evidence = f["evidence"];
    EXPECT_EQ(
        evidence.rfind("stride 32 bytes on 8-byte accesses (100% of 4096 accesses of thread ", 0),
        0u)
        << evidence;
    EXPECT_NE(evidence.find("the loop's accesses to these records use 16 of each 32 bytes: 50% of "
                            "each line fetched is used"),
              std::string::npos)
        << evidence;
  }
}

// A Jacobi sweep reads each element 4 times in a sweep (below a reuse
// degree of 4 at the block edges) and again in later sweeps: that reuse
// across time steps is no finding; nor are the stores of a peeled boundary
// column (12 per thread in stencil_omp under gcc), below the 256 accesses a
// stride finding needs. What is left is the 4K aliasing of the grids
// (their rows are 8 KiB and 2 KiB long, the grids a multiple of 4 KiB
// apart).
TEST_P(MemoryAnalyses, StencilsReuseOnlyAcrossTimeSteps) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string options = "--analyses comm,traces";
  const json pthreads =
      view(dir, "report --format json " +
                    record(dir, b, options, program("stencil_pthreads", b), "stencil_pthreads"));
  const int sweep = marker("stencil_pthreads.c", "double v = 0.25 * (X[r - 1][c]");
  EXPECT_EQ(kinds_and_lines(pthreads["memory_findings"]),
            (std::multiset<std::pair<std::string, int>>{{"4k-aliasing", sweep}}))
      << pthreads["memory_findings"].dump();

  const json omp = view(dir, "report --format json " +
                                 record(dir, b, options, program("stencil_omp", b), "stencil_omp"));
  const int omp_sweep = marker("stencil_omp.c", "double v = 0.25 * (X[r - 1][c]");
  EXPECT_EQ(kinds_and_lines(omp["memory_findings"]),
            (std::multiset<std::pair<std::string, int>>{{"4k-aliasing", omp_sweep}}))
      << omp["memory_findings"].dump();
}

// smoothing_steps_pthreads (4 threads, 128 samples, 8 taps, 6 time steps):
// the filter's loads are reported as reuse at their line, with the figures
// of one time step (thread 0: 8 taps + 135 samples loaded 2048 times); the
// relaxation, whose only reuse is the next time step's, is not; a 16-byte
// stride over 768 loads per thread is reported, a 32-byte stride over 192
// is not (below 256), though the line makes more than 0.5% of the accesses.
TEST_P(MemoryAnalyses, TimeSteppedFilterReportsOnlyReuseWithinAStep) {
  const Build& b = GetParam();
  TempDir dir;
  const std::string profile =
      record(dir, b, "--analyses comm,traces", program("smoothing_steps_pthreads", b));
  const json findings = view(dir, "report --format json " + profile)["memory_findings"];
  auto line = [](const std::string& name) {
    return marker("smoothing_steps_pthreads.c", "/* " + name + " */");
  };
  EXPECT_EQ(kinds_and_lines(findings), (std::multiset<std::pair<std::string, int>>{
                                           {"reuse", line("weft:reuse-in-step")},
                                           {"non-unit-stride", line("weft:stride-above")}}))
      << findings.dump();
  for (const json& f : findings) {
    const std::string evidence = f["evidence"];
    if (f["kind"] == "reuse") {
      EXPECT_EQ(f["function"], "smooth") << f.dump();
      EXPECT_NE(evidence.find("thread 0 loads each of its 143 addresses 14.3 times within one "
                              "run of the loop nest (2048 loads)"),
                std::string::npos)
          << evidence;
      EXPECT_NE(evidence.find("the nest runs 6 times on the same data"), std::string::npos)
          << evidence;
    } else {
      EXPECT_NE(evidence.find("stride 16 bytes on 8-byte accesses (100% of 768 accesses of "
                              "thread 0)"),
                std::string::npos)
          << evidence;
    }
  }
  // The snapshot line holds more than 0.5% of the traced accesses: only the
  // stream length keeps its stride out.
  const json all = view(dir, "trace --format json " + profile);
  uint64_t total = 0, snapshot = 0;
  for (const json& t : all) {
    total += t["accesses"].get<uint64_t>();
    if (t["line"] == line("weft:stride-below")) snapshot += t["accesses"].get<uint64_t>();
  }
  EXPECT_GE(snapshot * 200, total) << snapshot << " of " << total;
  EXPECT_GE(snapshot, 256u);
}

INSTANTIATE_TEST_SUITE_P(Examples, MemoryAnalyses, ::testing::ValuesIn(weft_test::example_builds()),
                         [](const auto& info) { return name_of(info.param); });

// Every stream of a run expands to as many addresses as the instruction
// made (nothing lost), and asking for what the profile lacks fails clearly.
TEST(MemoryViews, TracesAreCompleteAndErrorsAreOneLine) {
  TempDir dir;
  const Build b{"gcc.O2", "compile"};
  const std::string profile =
      record(dir, b, "--analyses comm,traces", program("schedules_omp", b) + " 1024 4");
  const json traces = view(dir, "trace --format json " + profile);
  ASSERT_GT(traces.size(), 8u);
  for (const json& t : traces) {
    EXPECT_EQ(t["recorded"], t["accesses"]) << t.dump();
    EXPECT_TRUE(t["lossless"].get<bool>());
  }

  auto no_falseshare = run_command(kWeft + " falseshare " + profile, dir.path);
  EXPECT_EQ(no_falseshare.code, 1);
  EXPECT_NE(no_falseshare.err.find("no false-sharing data"), std::string::npos)
      << no_falseshare.err;
  auto both = run_command(kWeft + " trace --pc 401000 --line a.c:3 " + profile, dir.path);
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.err.find("either --pc or --line"), std::string::npos) << both.err;
  auto nowhere = run_command(kWeft + " trace --line nosuch.c:12 " + profile, dir.path);
  EXPECT_EQ(nowhere.code, 1);
  EXPECT_NE(nowhere.err.find("no instruction of the profile is at nosuch.c:12"), std::string::npos)
      << nowhere.err;
  auto bad_line = run_command(kWeft + " record --line-size 48 -o x.db -- true", dir.path);
  EXPECT_EQ(bad_line.code, 125);  // weft record's own failure
  EXPECT_NE(bad_line.err.find("--line-size 48"), std::string::npos) << bad_line.err;

  // A profile recorded without traces says so.
  const std::string comm_only =
      record(dir, b, "--analyses comm", program("schedules_omp", b) + " 1024 4", "comm");
  auto no_traces = run_command(kWeft + " trace " + comm_only, dir.path);
  EXPECT_EQ(no_traces.code, 1);
  EXPECT_NE(no_traces.err.find("has no memory traces"), std::string::npos) << no_traces.err;
}

}  // namespace
