// What an exited thread keeps (issue 19, item 3): a task pool that starts a
// thread per task, fed to a CaptureSession by hand as the runtime feeds it
// (sync records, blocks and function frames, accesses), inside an analyzer
// arena like the runtime's. The arena's resident pages say what the
// threads' states cost once the threads are gone; the raw capture says
// that nothing of their results was lost on the way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../support/command_runner.h"
#include "analyzers/state/page_memory.h"
#include "analyzers/traces/traces_records.h"
#include "sources/capture/capture_session.h"
#include "sources/capture/raw_capture.h"

namespace weft {
namespace {

constexpr uint64_t kTaskEntry = 0x401000;
constexpr uint64_t kInputReadPc = 0x401040;
constexpr uint64_t kWeightReadPc = 0x401080;
constexpr uint64_t kResultWritePc = 0x4010c0;
constexpr uint64_t kCounterPc = 0x401100;
constexpr uint64_t kMainWritePc = 0x402000;
constexpr uint64_t kMainReadPc = 0x402040;
constexpr uint64_t kCreatePc = 0x402080;
constexpr uint64_t kJoinPc = 0x4020c0;
constexpr uint64_t kLockPc = 0x402100;
constexpr char kMaps[] = "00400000-00403000 r-xp 00000000 08:01 42 /bin/pool\n";

constexpr size_t kGranules = 16;  // of input, of weights, of result slots
alignas(64) double g_input[kGranules * 8];
alignas(64) double g_weights[kGranules * 8];
alignas(64) double g_results[kGranules * 8];
alignas(64) uint64_t g_done;  // the pool's counter, under its mutex
constexpr uint64_t kMutex = 0x7000;

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// The runtime's arena for the analyzers (page_memory.h), installed for one
// test: what the sessions reserve meanwhile is counted in it.
class ArenaScope {
 public:
  ArenaScope() : arena_(PageArena::create(size_t{1} << 40)) { g_page_arena = arena_; }
  ~ArenaScope() { g_page_arena = nullptr; }
  PageArena* get() const { return arena_; }

 private:
  PageArena* arena_;
};

// A pool that runs one thread per task, each task started after the last
// one ended (so the run is deterministic): a task reads every granule of
// the input and of the weights (which the main thread wrote), writes its
// result slot (one of kGranules, reused), and counts itself done under the
// pool's mutex; the main thread creates it, joins it and reads its result.
class TaskPool {
 public:
  explicit TaskPool(CaptureSession& s) : s_(s) {
    main_ = s_.start_thread(s_.reserve_thread_id(), -1, 0, 100, tick());
    for (size_t i = 0; i < kGranules; ++i) {
      access(*main_, kMainWritePc, address(&g_input[i * 8]), 8, true);
      access(*main_, kMainWritePc + 4, address(&g_weights[i * 8]), 8, true);
    }
  }

  void run(uint32_t tasks) {
    for (uint32_t k = 0; k < tasks; ++k) run_task();
  }

 private:
  void run_task() {
    const uint32_t tid = s_.reserve_thread_id();
    s_.record_sync(*main_, SyncKind::ThreadCreate, tick(), kCreatePc, 0, tid);
    ThreadContext& t =
        *s_.start_thread(tid, 0, kTaskEntry, static_cast<int32_t>(1000 + tid), tick());
    block(t, kTaskEntry);
    enter(t);
    block(t, kInputReadPc);
    for (size_t i = 0; i < kGranules; ++i) {
      access(t, kInputReadPc, address(&g_input[i * 8]), 8, false);
      access(t, kWeightReadPc, address(&g_weights[i * 8]), 8, false);
    }
    block(t, kResultWritePc);
    access(t, kResultWritePc, address(&g_results[(tid % kGranules) * 8]), 8, true);
    leave(t);
    s_.record_sync(t, SyncKind::MutexLock, tick(), kLockPc, kMutex);
    block(t, kCounterPc);
    access(t, kCounterPc, address(&g_done), 8, false);
    access(t, kCounterPc + 4, address(&g_done), 8, true);
    s_.record_sync(t, SyncKind::MutexUnlock, tick(), kLockPc, kMutex);
    s_.record_sync(*main_, SyncKind::ThreadJoinEnter, tick(), kJoinPc, 0, tid);
    s_.finish_thread(t, tick());
    // Every tenth task takes the lock once more after its exit (a later key
    // destructor's): its log, already moved, grows again.
    if (tid % 10 == 0) {
      s_.record_sync(t, SyncKind::MutexLock, tick(), kLockPc, kMutex);
      s_.record_sync(t, SyncKind::MutexUnlock, tick(), kLockPc, kMutex);
    }
    s_.record_sync(*main_, SyncKind::ThreadJoin, tick(), kJoinPc, 0, tid);
    access(*main_, kMainReadPc, address(&g_results[(tid % kGranules) * 8]), 8, false);
  }

  void access(ThreadContext& t, uint64_t pc, uint64_t addr, uint32_t size, bool write) {
    CommunicationAnalyzer::ThreadState* c = t.comm.load();
    if (!c) return;
    s_.watch_access(t, pc, addr, write);
    if (write)
      s_.communication().write(*c, pc, addr, size);
    else
      s_.communication().read(*c, pc, addr, size);
    CaptureSession::feed_access(t, s_.analyzers(), pc, addr, size, write);
  }
  void block(ThreadContext& t, uint64_t pc) {
    ++t.basic_blocks;
    if (auto* counts = t.imbalance.load()) s_.analyzers().imbalance->block(*counts, pc, 0);
  }
  static void enter(ThreadContext& t) {
    if (auto* frames = t.call_frames.load()) ImbalanceCounts::enter_function(*frames);
  }
  static void leave(ThreadContext& t) {
    if (auto* frames = t.call_frames.load()) ImbalanceCounts::exit_function(*frames);
  }
  uint64_t tick() { return time_ += 1000; }

  CaptureSession& s_;
  ThreadContext* main_ = nullptr;
  uint64_t time_ = 0;
};

struct AnalysesCase {
  const char* name;
  AnalysisSet analyses;
  // What an exited thread may keep. Target: 16 KiB (issue 19), met by
  // every analysis alone and by the default set; all seven (pages and
  // reuse too) keep more (docs/performance.md, "Exited threads").
  double max_bytes = 16 * 1024.0;
};

class ExitedThreads : public ::testing::TestWithParam<AnalysesCase> {
 protected:
  weft_test::TempDir dir_{"weft-test-exited"};
};

// What each exited thread keeps, in the arena's resident bytes: the slope
// between 40 and 240 tasks (the first ones pay for the shared state).
TEST_P(ExitedThreads, KeepAFewKilobytesEach) {
  ArenaScope arena;
  CaptureConfig config;
  config.max_threads = 512;
  config.analyses = GetParam().analyses;
  CaptureSession& s = *CaptureSession::create(config);
  TaskPool pool(s);
  pool.run(40);
  const size_t before = arena.get()->resident_bytes();
  constexpr uint32_t kMore = 200;
  pool.run(kMore);
  const size_t after = arena.get()->resident_bytes();
  const double per_thread = static_cast<double>(after - before) / kMore;
  std::printf("%s: %.0f bytes kept per exited thread\n", GetParam().name, per_thread);
  EXPECT_LE(per_thread, GetParam().max_bytes);
}

// The capture of the same run, with and without the compaction of exited
// threads: every section holds the same records (in another order where a
// table moved), the threads, the sync logs and the counters are the same.
TEST_P(ExitedThreads, LoseNothingOfTheCapture) {
  ArenaScope arena;
  auto capture = [&](bool compact, const char* name) {
    CaptureConfig config;
    config.max_threads = 512;
    config.analyses = GetParam().analyses;
    config.compact_exited_threads = compact;
    CaptureSession& s = *CaptureSession::create(config);
    TaskPool pool(s);
    pool.run(60);
    const std::string path = (dir_.path / name).string();
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    s.write(fd, true, "", kMaps, sizeof kMaps - 1);
    close(fd);
    return read_raw_capture(path);
  };
  const RunCapture kept = capture(false, "kept");
  const RunCapture compacted = capture(true, "compacted");

  EXPECT_EQ(compacted.dropped_events, kept.dropped_events);
  EXPECT_EQ(compacted.dropped_sync_events, 0u);
  EXPECT_EQ(kept.dropped_sync_events, 0u);
  EXPECT_EQ(compacted.analysis_values, kept.analysis_values);
  ASSERT_EQ(compacted.threads.size(), kept.threads.size());
  EXPECT_EQ(compacted.threads.size(), 61u);
  for (size_t i = 0; i < kept.threads.size(); ++i)
    EXPECT_EQ(std::memcmp(&compacted.threads[i], &kept.threads[i], sizeof(ThreadRecord)), 0) << i;
  ASSERT_EQ(compacted.sync.size(), kept.sync.size());
  for (size_t i = 0; i < kept.sync.size(); ++i)
    EXPECT_EQ(std::memcmp(&compacted.sync[i], &kept.sync[i], sizeof(SyncRecord)), 0) << i;

  ASSERT_EQ(compacted.sections.size(), kept.sections.size());
  for (const auto& [tag, section] : kept.sections) {
    ASSERT_TRUE(compacted.sections.contains(tag)) << tag;
    const RunCapture::Section& other = compacted.sections.at(tag);
    ASSERT_EQ(other.record_size, section.record_size) << tag;
    // Records as byte strings, sorted: tables that moved list them in
    // another order. The traces' streams likewise, one string per stream;
    // any other byte section (record size 1) must match as it is.
    auto records = [&](const RunCapture::Section& s) {
      std::vector<std::string> out;
      if (tag == kTraceStreams.tag) {
        for (const TraceStream& t : read_trace_streams({s.bytes.data(), s.bytes.size()})) {
          std::string one(reinterpret_cast<const char*>(&t.header), sizeof t.header);
          one.append(t.encoding.begin(), t.encoding.end());
          one.append(reinterpret_cast<const char*>(t.segments.data()),
                     t.segments.size() * sizeof(TraceSegmentRun));
          out.push_back(std::move(one));
        }
      } else {
        const size_t size = s.record_size <= 1 ? s.bytes.size() : s.record_size;
        for (size_t at = 0; size != 0 && at + size <= s.bytes.size(); at += size)
          out.emplace_back(s.bytes.data() + at, size);
      }
      if (s.record_size > 1 || tag == kTraceStreams.tag) std::sort(out.begin(), out.end());
      return out;
    };
    // Compared apart from the message: the records are bytes.
    const bool same = records(other) == records(section);
    EXPECT_TRUE(same) << "section " << tag << " differs";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Analyses, ExitedThreads,
    ::testing::Values(AnalysesCase{"defaults", AnalysisSet::defaults()},
                      AnalysesCase{"comm", AnalysisSet{AnalysisId::Communication}},
                      AnalysesCase{"crd", AnalysisSet{AnalysisId::Crd}},
                      AnalysesCase{"imbalance", AnalysisSet{AnalysisId::Imbalance}},
                      AnalysesCase{"falseshare", AnalysisSet{AnalysisId::FalseSharing}},
                      AnalysesCase{"traces", AnalysisSet{AnalysisId::Traces}},
                      AnalysesCase{"all", AnalysisSet::all(), 26 * 1024.0}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace weft
