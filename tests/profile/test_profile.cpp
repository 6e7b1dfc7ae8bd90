// Profile round trip (RunCapture -> SQLite -> Profile) with real
// symbolization of this binary, and every way opening a profile can fail.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analyzers/communication/communication_records.h"
#include "analyzers/crd/crd_records.h"
#include "analyzers/crd/crd_tables.h"
#include "analyzers/traces/traces_records.h"
#include "analyzers/traces/traces_tables.h"
#include "common/loop_trace.h"
#include "profile/profile.h"
#include "profile/profile_writer.h"
#include "support/hand_made_profile.h"

namespace weft_test {

// The instructions the hand-made capture attributes communication to.
// clang-format off
__attribute__((noinline)) int reader(const volatile int* cell) { return *cell + 1; } constexpr uint32_t kReaderLine = __LINE__;
__attribute__((noinline)) void writer(volatile int* cell) { *cell = 42; } constexpr uint32_t kWriterLine = __LINE__;
__attribute__((noinline)) void* thread_body(void* arg) { return arg; }
// clang-format on

#ifdef WEFT_TEST_OPENMP
// A pc inside the body GCC/clang outline from the parallel region below.
__attribute__((noinline)) uint64_t caller_pc() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}
__attribute__((noinline)) uint64_t parallel_body_pc() {
  uint64_t pc = 0;
#pragma omp parallel num_threads(1)
  { pc = caller_pc(); }
  return pc;
}
#endif

}  // namespace weft_test

namespace weft {
namespace {

uint64_t pc_of(const void* function) { return reinterpret_cast<uint64_t>(function); }
const uint64_t kReaderPc = pc_of(reinterpret_cast<const void*>(&weft_test::reader));
const uint64_t kWriterPc = pc_of(reinterpret_cast<const void*>(&weft_test::writer));
const uint64_t kThreadBodyPc = pc_of(reinterpret_cast<const void*>(&weft_test::thread_body));

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string self_path() {
  char buffer[PATH_MAX];
  return realpath("/proc/self/exe", buffer) != nullptr ? buffer : "";
}

// Three threads; communication at the reader and writer functions:
//   raw  [0][1] = 5, [1][2] = 3, [2][0] = 2      rar [0][1] = 7
//   inval[0][2] = 4 (thread 0's write invalidated thread 2's copy)
RunCapture sample_capture() {
  RunCapture capture;
  capture.source = "compile";
  capture.complete = true;
  capture.granularity = 64;
  capture.max_threads = 3;
  capture.dropped_events = 11;
  capture.dropped_sync_events = 1;
  capture.process_maps = read_file("/proc/self/maps");
  capture.threads = {
      {.id = 0,
       .os_tid = 100,
       .parent = -1,
       .start_routine = 0,
       .start_ns = 10,
       .end_ns = 90,
       .basic_blocks = 1000},
      {.id = 1,
       .os_tid = 101,
       .parent = 0,
       .start_routine = kThreadBodyPc,
       .start_ns = 20,
       .end_ns = 80,
       .basic_blocks = 500},
      {.id = 2,
       .os_tid = 102,
       .parent = 0,
       .start_routine = kThreadBodyPc,
       .start_ns = 25,
       .end_ns = 0,
       .basic_blocks = 7},
  };
  capture.set_records(kCommunicationCounts,
                      {
                          {.pc = kReaderPc, .thread = 1, .peer = 0, .raw = 5, .rar = 7, .inval = 0},
                          {.pc = kReaderPc, .thread = 2, .peer = 1, .raw = 3, .rar = 0, .inval = 0},
                          {.pc = kWriterPc, .thread = 0, .peer = 2, .raw = 2, .rar = 0, .inval = 4},
                      });
  capture.sync = {
      {.thread = 0, .kind = SyncKind::ThreadCreate, .time_ns = 15, .pc = kWriterPc, .arg0 = 1},
      {.thread = 1, .kind = SyncKind::ThreadStart, .time_ns = 20, .arg0 = 0},
      {.thread = 0, .kind = SyncKind::ThreadJoin, .time_ns = 85, .pc = kWriterPc, .arg0 = 1},
  };
  return capture;
}

RunInfo sample_info() {
  RunInfo info;
  info.command = "/bin/app";
  info.args = {"--size", "10", "a b"};
  info.cwd = "/tmp";
  info.start_time = std::chrono::system_clock::from_time_t(1700000000);  // 2023-11-14T22:13:20Z
  info.duration_s = 1.5;
  info.exit_status = 0;
  info.topology = "1 package, 2 cores, 2 PUs, L3 8MiB";
  info.hostname = "host1";
  info.weft_version = "0.1.0-test";
  return info;
}

class ProfileTest : public weft_test::TempDirTest {
 protected:
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

  void sql(const std::string& path, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
    std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  // The single value `query` returns, as text ("" for NULL or no row).
  std::string sql_value(const std::string& path, const std::string& query) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &statement, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    std::string value;
    if (sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0) != nullptr) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return value;
  }

  std::string expect_open_error(const std::string& path) {
    try {
      Profile::open(path);
    } catch (const ProfileError& error) {
      std::string message = error.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
      return message;
    }
    ADD_FAILURE() << "opened " << path;
    return {};
  }
};

TEST_F(ProfileTest, RoundTripMetaAndThreads) {
  const std::string path = file("run.weft");
  build_profile(sample_capture(), sample_info(), path);
  Profile profile = Profile::open(path);

  EXPECT_EQ(profile.schema_version(), 5);
  EXPECT_TRUE(profile.complete());
  EXPECT_EQ(profile.meta_value("schema_version"), "5");
  EXPECT_EQ(profile.meta_value("weft_version"), "0.1.0-test");
  EXPECT_EQ(profile.meta_value("source"), "compile");
  EXPECT_EQ(profile.meta_value("command"), "/bin/app");
  EXPECT_EQ(profile.meta_value("args"), R"(["--size","10","a b"])");
  EXPECT_EQ(profile.meta_value("cwd"), "/tmp");
  EXPECT_EQ(profile.meta_value("start_time"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(profile.meta_value("duration_s"), "1.5");
  EXPECT_EQ(profile.meta_value("exit_status"), "0");
  EXPECT_EQ(profile.meta_value("exit_signal"), "");
  EXPECT_EQ(profile.meta_value("complete"), "1");
  EXPECT_EQ(profile.meta_value("incomplete_reason"), "");
  EXPECT_EQ(profile.meta_value("granularity"), "64");
  EXPECT_EQ(profile.meta_value("max_threads"), "3");
  EXPECT_EQ(profile.meta_value("dropped_events"), "11");
  EXPECT_EQ(profile.meta_value("dropped_sync_events"), "1");
  EXPECT_EQ(profile.meta_value("topology"), "1 package, 2 cores, 2 PUs, L3 8MiB");
  EXPECT_EQ(profile.meta_value("hostname"), "host1");

  ASSERT_EQ(profile.thread_count(), 3u);
  std::vector<ThreadInfo> threads = profile.threads();
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].id, 0u);
  EXPECT_EQ(threads[0].parent, -1);
  EXPECT_EQ(threads[0].start_routine, "");
  EXPECT_EQ(threads[0].basic_blocks, 1000u);
  EXPECT_EQ(threads[1].os_tid, 101);
  EXPECT_EQ(threads[1].parent, 0);
  EXPECT_EQ(threads[1].start_routine_pc, kThreadBodyPc);
  EXPECT_EQ(threads[1].start_routine, "weft_test::thread_body(void*)");
  EXPECT_EQ(threads[2].creation_order, 2u);
  EXPECT_EQ(threads[2].start_ns, 25u);
  EXPECT_EQ(threads[2].end_ns, 0u);
}

TEST_F(ProfileTest, RoundTripMatrices) {
  const std::string path = file("run.weft");
  build_profile(sample_capture(), sample_info(), path);
  Profile profile = Profile::open(path);

  CommunicationMatrix raw = profile.matrix({}, MatrixKind::Raw);
  EXPECT_EQ(raw, (CommunicationMatrix{{0, 5, 0}, {0, 0, 3}, {2, 0, 0}}));
  EXPECT_EQ(profile.matrix({}, MatrixKind::Rar),
            (CommunicationMatrix{{0, 7, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(profile.matrix({}, MatrixKind::Inval),
            (CommunicationMatrix{{0, 0, 4}, {0, 0, 0}, {0, 0, 0}}));

  std::vector<RegionInfo> reader = profile.select_regions("weft_test::reader(int const volatile*)");
  ASSERT_EQ(reader.size(), 1u);
  EXPECT_EQ(reader[0].kind, "function");
  EXPECT_EQ(reader[0].function, reader[0].name);
  EXPECT_TRUE(reader[0].file.ends_with("/test_profile.cpp")) << reader[0].file;
  EXPECT_EQ(reader[0].first_line, weft_test::kReaderLine);
  EXPECT_EQ(profile.matrix({reader[0].id}, MatrixKind::Raw),
            (CommunicationMatrix{{0, 5, 0}, {0, 0, 3}, {0, 0, 0}}));

  // A C++ function can also be selected without its parameter list.
  std::vector<RegionInfo> writer = profile.select_regions("weft_test::writer");
  ASSERT_EQ(writer.size(), 1u);
  EXPECT_EQ(writer[0].name, "weft_test::writer(int volatile*)");
  EXPECT_EQ(profile.matrix({writer[0].id}, MatrixKind::Inval),
            (CommunicationMatrix{{0, 0, 4}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(profile.matrix({writer[0].id, reader[0].id}, MatrixKind::Raw), raw);

  for (const RegionVolume& volume : profile.region_volumes()) {
    if (volume.region.id == reader[0].id) {
      EXPECT_EQ(volume.raw, 8u);
      EXPECT_EQ(volume.rar, 7u);
      EXPECT_EQ(volume.inval, 0u);
    }
  }
}

TEST_F(ProfileTest, RoundTripSymbolization) {
  const std::string path = file("run.weft");
  build_profile(sample_capture(), sample_info(), path);
  const std::string where = " FROM code_locations WHERE pc = " + std::to_string(kReaderPc);

  EXPECT_EQ(sql_value(path, "SELECT function" + where), "weft_test::reader(int const volatile*)");
  EXPECT_EQ(sql_value(path, "SELECT line" + where), std::to_string(weft_test::kReaderLine));
  EXPECT_TRUE(sql_value(path, "SELECT file" + where).ends_with("/test_profile.cpp"));
  EXPECT_EQ(sql_value(path,
                      "SELECT r.name FROM code_locations c JOIN regions r"
                      " ON r.id = c.region_id WHERE c.pc = " +
                          std::to_string(kReaderPc)),
            "weft_test::reader(int const volatile*)");
  EXPECT_EQ(sql_value(path,
                      "SELECT m.path FROM code_locations c JOIN modules m"
                      " ON m.id = c.module_id WHERE c.pc = " +
                          std::to_string(kReaderPc)),
            self_path());
  EXPECT_NE(sql_value(path, "SELECT build_id FROM modules WHERE path = '" + self_path() + "'"), "");
  EXPECT_EQ(sql_value(path, "SELECT line FROM inline_frames WHERE depth = 0 AND pc = " +
                                std::to_string(kWriterPc)),
            std::to_string(weft_test::kWriterLine));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM pc_communication"), "3");
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM matrix_entries WHERE count = 0"), "0");
  EXPECT_EQ(sql_value(path,
                      "SELECT group_concat(kind) FROM (SELECT kind FROM sync_events"
                      " ORDER BY time_ns)"),
            "thread_create,thread_start,thread_join");
}

#ifdef WEFT_TEST_OPENMP
TEST_F(ProfileTest, OutlinedOpenMpBodyIsAnOmpParallelRegion) {
  RunCapture capture = sample_capture();
  const uint64_t body_pc = weft_test::parallel_body_pc();
  capture.add(kCommunicationCounts,
              PcCommunication{.pc = body_pc, .thread = 1, .peer = 0, .raw = 9});
  const std::string path = file("omp.weft");
  build_profile(capture, sample_info(), path);
  Profile profile = Profile::open(path);

  std::optional<RegionInfo> body;
  for (const RegionInfo& region : profile.regions()) {
    if (region.kind == "omp_parallel") body = region;
  }
  ASSERT_TRUE(body) << "no omp_parallel region";
  EXPECT_EQ(body->function, "weft_test::parallel_body_pc()");
  ASSERT_TRUE(body->parent_id);
  EXPECT_EQ(profile.region_by_id(*body->parent_id)->name, "weft_test::parallel_body_pc()");
  EXPECT_TRUE(body->file.ends_with("/test_profile.cpp"));

  // Selecting the function includes its parallel body.
  std::vector<RegionInfo> nested = profile.select_regions("weft_test::parallel_body_pc");
  ASSERT_EQ(nested.size(), 2u);
  CommunicationMatrix raw = profile.matrix({nested[0].id, nested[1].id}, MatrixKind::Raw);
  EXPECT_EQ(raw[0][1], 9u);
}
#endif

TEST_F(ProfileTest, PlaceholderAndMarkIncomplete) {
  const std::string path = file("dead.weft");
  RunInfo info = sample_info();
  info.exit_status.reset();
  info.exit_signal = "SIGKILL";
  write_placeholder_profile(path, info, "valgrind", 32, "killed before the runtime saved");
  Profile profile = Profile::open(path);
  EXPECT_FALSE(profile.complete());
  EXPECT_EQ(profile.meta_value("incomplete_reason"), "killed before the runtime saved");
  EXPECT_EQ(profile.meta_value("source"), "valgrind");
  EXPECT_EQ(profile.meta_value("granularity"), "32");
  EXPECT_EQ(profile.meta_value("exit_status"), "");
  EXPECT_EQ(profile.meta_value("exit_signal"), "SIGKILL");
  EXPECT_EQ(profile.thread_count(), 0u);
  EXPECT_TRUE(profile.matrix({}, MatrixKind::Raw).empty());
  EXPECT_TRUE(profile.regions().empty());

  const std::string full = file("full.weft");
  build_profile(sample_capture(), sample_info(), full);
  mark_incomplete(full, "the analyzer ran out of memory");
  Profile marked = Profile::open(full);
  EXPECT_FALSE(marked.complete());
  EXPECT_EQ(marked.meta_value("incomplete_reason"), "the analyzer ran out of memory");
  EXPECT_EQ(marked.thread_count(), 3u);

  EXPECT_THROW(mark_incomplete(file("absent.weft"), "x"), ProfileError);
}

TEST_F(ProfileTest, RewritingReplacesTheOldProfile) {
  const std::string path = file("run.weft");
  write_placeholder_profile(path, sample_info(), "compile", 64, "first");
  build_profile(sample_capture(), sample_info(), path);
  EXPECT_TRUE(Profile::open(path).complete());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);  // no temp left
}

TEST_F(ProfileTest, WriteToMissingDirectoryFails) {
  EXPECT_THROW(build_profile(sample_capture(), sample_info(), file("no/such/dir.weft")),
               ProfileError);
}

TEST_F(ProfileTest, MissingFile) {
  const std::string path = file("absent.weft");
  EXPECT_EQ(expect_open_error(path), "cannot open profile " + path + ": no such file");
}

TEST_F(ProfileTest, TextFileIsNotAProfile) {
  const std::string path = file("notes.txt");
  std::ofstream(path) << "these are notes, not a profile\n";
  EXPECT_EQ(expect_open_error(path), path + " is not a weft profile");
}

TEST_F(ProfileTest, EmptyFileIsNotAProfile) {
  const std::string path = file("empty.weft");
  std::ofstream(path).flush();
  EXPECT_EQ(expect_open_error(path), path + " is not a weft profile");
}

TEST_F(ProfileTest, SqliteDatabaseWithoutMetaIsNotAProfile) {
  const std::string path = file("other.db");
  sql(path, "CREATE TABLE customers(id INTEGER, name TEXT)");
  EXPECT_EQ(expect_open_error(path), path + " is not a weft profile");
}

TEST_F(ProfileTest, MetaWithoutSchemaVersionIsNotAProfile) {
  const std::string path = file("other.db");
  sql(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)");
  EXPECT_EQ(expect_open_error(path), path + " is not a weft profile");
}

TEST_F(ProfileTest, NewerSchemaIsRefused) {
  const std::string path = file("future.weft");
  write_placeholder_profile(path, sample_info(), "compile", 64, "test");
  sql(path, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  EXPECT_EQ(expect_open_error(path),
            path + " has profile schema version 99, this weft reads up to 5; upgrade weft");
}

TEST_F(ProfileTest, OlderSchemaAsksToRecordAgain) {
  const std::string path = file("past.weft");
  write_placeholder_profile(path, sample_info(), "compile", 64, "test");
  // Version 4 had no measured column in section_instances.
  sql(path, "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
  EXPECT_EQ(expect_open_error(path), path +
                                         " has profile schema version 4, older than this weft "
                                         "reads (5); record it again");
}

// CRD distances, footprints and sections: pooled per region, and the
// whole-program queries count each event once (sections excluded).
TEST_F(ProfileTest, RoundTripCrdFootprintAndSections) {
  RunCapture capture = sample_capture();
  capture.analyses = {AnalysisId::Communication, AnalysisId::Crd};
  capture.analysis_values["crd_max_granules"] = "1000";
  capture.set_records(kCrdDistances, {{kReaderPc, 1, 0, 4, 6},
                                      {kReaderPc, 1, 0, 9, 1},
                                      {kReaderPc, 2, 1, 4, 2},
                                      {kReaderPc, 1, 0, kWordDistance | 5, 2},
                                      {kReaderPc, 1, 0, kUnmeasuredDistance, 3}});
  capture.set_records(kCrdFootprints, {{kReaderPc, 1, 0, 10, 2}, {kWriterPc, 0, 0, 5, 7}});
  // Thread 1's section closed at its exit, which thread 0 joined at kWriterPc.
  capture.set_records(
      kSectionCommunication,
      {{.pc = kThreadExitSectionSite, .thread = 1, .peer = 0, .raw = 5, .rar = 7, .inval = 0}});
  capture.set_records(kSectionDistances, {{kThreadExitSectionSite, 1, 0, 4, 6}});
  const std::string path = file("crd.weft");
  build_profile(capture, sample_info(), path);
  Profile profile = Profile::open(path);
  ASSERT_TRUE(profile.has_analysis(AnalysisId::Crd));
  EXPECT_EQ(profile.meta_value("crd_max_granules"), "1000");

  const std::vector<int64_t> reader_region = {profile.select_regions("weft_test::reader")[0].id};
  const std::vector<DistanceCount> distances = crd_distances(profile, reader_region);
  ASSERT_EQ(distances.size(), 3u);
  EXPECT_EQ(distances[0].writer, 0u);
  EXPECT_EQ(distances[0].reader, 1u);
  EXPECT_EQ(distances[0].distance, 4u);
  EXPECT_EQ(distances[0].count, 6u);
  EXPECT_EQ(distances[1].distance, 9u);
  EXPECT_EQ(distances[2].writer, 1u);
  // The word row is apart, scaled by granularity / 8 (64-byte granules: 8).
  const std::vector<DistanceCount> words = crd_word_distances(profile, reader_region, 64);
  ASSERT_EQ(words.size(), 1u);
  EXPECT_EQ(words[0].distance, 40u);
  EXPECT_EQ(words[0].count, 16u);
  const std::vector<PairCount> unmeasured = crd_unmeasured(profile, reader_region);
  ASSERT_EQ(unmeasured.size(), 1u);
  EXPECT_EQ(unmeasured[0].count, 3u);
  const Footprint reader_footprint = footprint(profile, reader_region);
  EXPECT_EQ(reader_footprint.private_granules, 10u);
  EXPECT_EQ(reader_footprint.shared_granules, 2u);
  EXPECT_EQ(footprint(profile, {}).private_granules, 15u);

  // The section is named after the join site's line, and is a region of its own.
  const std::string section = "section@test_profile.cpp:" + std::to_string(weft_test::kWriterLine);
  const std::vector<RegionInfo> selected = profile.select_regions(section);
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0].kind, "section");
  EXPECT_EQ(profile.matrix({selected[0].id}, MatrixKind::Rar)[0][1], 7u);
  EXPECT_EQ(crd_distances(profile, {selected[0].id}).at(0).count, 6u);
  // Whole program: the code regions only.
  EXPECT_EQ(profile.matrix({}, MatrixKind::Rar)[0][1], 7u);
  uint64_t events = 0;
  for (const DistanceCount& d : crd_distances(profile, {})) events += d.count;
  EXPECT_EQ(events, 9u);
}

// Appends one stream to a kTraceStreams section's bytes.
void add_trace_stream(std::vector<char>& bytes, TraceStreamHeader header,
                      const std::vector<uint64_t>& addresses,
                      const std::vector<TraceSegmentRun>& runs) {
  LoopTrace trace;
  for (uint64_t a : addresses) trace.elements.push_back(trace_value(a));
  const std::vector<uint8_t> encoding = encode_loop_trace(trace);
  header.encoded_bytes = encoding.size();
  header.segment_runs = static_cast<uint32_t>(runs.size());
  header.accesses = addresses.size();
  const char* h = reinterpret_cast<const char*>(&header);
  bytes.insert(bytes.end(), h, h + sizeof header);
  bytes.insert(bytes.end(), encoding.begin(), encoding.end());
  const char* r = reinterpret_cast<const char*>(runs.data());
  bytes.insert(bytes.end(), r, r + runs.size() * sizeof(TraceSegmentRun));
}

// Traces keep where each stream crosses segments (NULL when the budget lost
// them); a profile written before the column reads as without segments; the
// sync log reads back in each thread's order.
TEST_F(ProfileTest, RoundTripTraceSegmentsAndSyncEvents) {
  RunCapture capture = sample_capture();
  capture.analyses = {AnalysisId::Communication, AnalysisId::Traces};
  TraceSegmentRun run;
  run.first_access = 3;
  run.access_step = 300;
  run.first_segment = 1;
  run.segment_step = 2;
  run.count = 4000000;
  TraceSegmentRun single;
  single.first_access = 1u << 20;
  single.first_segment = 9;
  single.count = 1;
  std::vector<char> bytes;
  TraceStreamHeader header;
  header.thread = 1;
  header.pc = kReaderPc;
  header.access_size = 8;
  header.kinds = kTraceRead;
  add_trace_stream(bytes, header, {0x1000, 0x1008, 0x1010}, {run, single});
  header.pc = kWriterPc;
  header.kinds = kTraceWrite | kTraceSegmentsLost;
  add_trace_stream(bytes, header, {0x2000}, {});
  header.thread = 2;
  header.kinds = kTraceWrite;
  add_trace_stream(bytes, header, {0x3000}, {});
  capture.sections[kTraceStreams.tag] = {1, bytes};
  const std::string path = file("traces.weft");
  build_profile(capture, sample_info(), path);

  {
    Profile profile = Profile::open(path);
    const std::vector<MemoryTraceInfo> traces = memory_traces(profile);
    ASSERT_EQ(traces.size(), 3u);
    ASSERT_TRUE(traces[0].pc == kReaderPc || traces[1].pc == kReaderPc);
    const MemoryTraceInfo& reader = traces[0].pc == kReaderPc ? traces[0] : traces[1];
    const MemoryTraceInfo& lost = traces[0].pc == kReaderPc ? traces[1] : traces[0];
    const std::vector<StreamSegmentRun> runs{{1, 2, 4000000, 3, 300}, {9, 0, 1, 1u << 20, 0}};
    EXPECT_EQ(reader.segments, std::optional(runs));
    EXPECT_EQ(lost.segments, std::nullopt);
    EXPECT_EQ(traces[2].segments, std::optional(std::vector<StreamSegmentRun>{}));

    const std::vector<SyncRecord> sync = profile.sync_events();
    ASSERT_EQ(sync.size(), 3u);
    EXPECT_EQ(sync[0].thread, 0u);
    EXPECT_EQ(sync[0].kind, SyncKind::ThreadCreate);
    EXPECT_EQ(sync[1].kind, SyncKind::ThreadJoin);
    EXPECT_EQ(sync[1].arg0, 1);
    EXPECT_EQ(sync[2].thread, 1u);
    EXPECT_EQ(sync[2].kind, SyncKind::ThreadStart);
  }
  const std::vector<StreamSegmentRun> runs{{1, 2, 4000000, 3, 300}, {9, 0, 1, 1u << 20, 0}};
  EXPECT_EQ(decode_segment_runs(encode_segment_runs(runs)), runs);
  EXPECT_THROW(decode_segment_runs({2, 1}), ProfileError);

  // A profile without the column (written before it): no segments.
  sql(path, "ALTER TABLE memory_traces DROP COLUMN segments");
  Profile old = Profile::open(path);
  for (const MemoryTraceInfo& t : memory_traces(old)) EXPECT_EQ(t.segments, std::nullopt);
}

TEST_F(ProfileTest, MissingTableIsReported) {
  const std::string path = file("damaged.weft");
  write_placeholder_profile(path, sample_info(), "compile", 64, "test");
  sql(path, "DROP TABLE regions");
  EXPECT_EQ(expect_open_error(path),
            path + " is a damaged weft profile: table 'regions' is missing");
}

TEST_F(ProfileTest, CorruptFileFailsWithProfileError) {
  const std::string path = file("corrupt.weft");
  build_profile(sample_capture(), sample_info(), path);
  // Keep SQLite's header, scramble the pages behind it.
  std::string bytes = read_file(path);
  for (size_t i = 100; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    Profile profile = Profile::open(path);
    profile.matrix({}, MatrixKind::Raw);
    profile.regions();
    profile.threads();
    ADD_FAILURE() << "read a corrupt profile without error";
  } catch (const ProfileError& error) {
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
  }
}

TEST_F(ProfileTest, UnknownRegion) {
  const std::string path = file("run.weft");
  build_profile(sample_capture(), sample_info(), path);
  Profile profile = Profile::open(path);
  try {
    profile.select_regions("no_such_function");
    ADD_FAILURE() << "selected an unknown region";
  } catch (const ProfileError& error) {
    EXPECT_EQ(std::string(error.what()), "unknown region 'no_such_function' (see `weft report " +
                                             path + "` for region names)");
  }
}

}  // namespace
}  // namespace weft
