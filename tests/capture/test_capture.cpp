// The recording side shared by both event sources, driven directly: a
// CaptureSession fed by hand, its raw capture written and read back section
// by section; the Valgrind ring decoder fed synthetic slots; the analyses'
// settings applied as the runtime applies its environment.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../support/command_runner.h"
#include "analyzers/reuse/reuse_records.h"
#include "sources/capture/capture_session.h"
#include "sources/capture/raw_capture.h"
#include "sources/valgrind/event_ring_reader.h"
#include "sources/valgrind/valgrind_backend.h"

namespace weft {
namespace {

constexpr uint64_t kWriterPc = 0x401000;
constexpr uint64_t kReaderPc = 0x402000;
constexpr uint64_t kAllocPc = 0x403000;
constexpr uint64_t kBarrierPc = 0x404000;
constexpr uint64_t kBarrier = 0x7000;
constexpr char kMaps[] = "00400000-00401000 r-xp 00000000 08:01 42 /bin/prog\n";

// A 64-byte aligned granule and line of our own, so that no other state
// shares it.
alignas(64) char g_line[128];

uint64_t line_address() { return reinterpret_cast<uint64_t>(&g_line[0]); }

class CaptureSessionTest : public ::testing::Test {
 protected:
  // Writes the session's capture into the temporary directory and reads it.
  RunCapture round_trip(CaptureSession& session, bool complete = true, const char* reason = "") {
    const std::string path = (dir_.path / "capture").string();
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    session.write(fd, complete, reason, kMaps, sizeof kMaps - 1);
    close(fd);
    return read_raw_capture(path);
  }

  std::string path(const std::string& name) const { return (dir_.path / name).string(); }

  weft_test::TempDir dir_{"weft-test-capture"};
};

// Thread 0 writes the first line's first 8 bytes; thread 1 reads them twice
// (one true communication, one reuse). On the second line, thread 0 writes
// bytes 0..7 and thread 1 bytes 8..15: a false-sharing transfer (disjoint
// from the writer's bytes) and an invalidation. Both meet at a barrier.
CaptureSession& run_two_threads(const CaptureConfig& config) {
  CaptureSession& s = *CaptureSession::create(config);
  ThreadContext* t0 = s.start_thread(s.reserve_thread_id(), -1, 0, 100, 1000);
  ThreadContext* t1 = s.start_thread(s.reserve_thread_id(), 0, 0x405000, 101, 1100);
  auto access = [&](ThreadContext* t, uint64_t pc, uint64_t addr, uint32_t size, bool write) {
    CommunicationAnalyzer::ThreadState* c = t->comm.load();
    if (write)
      s.communication().write(*c, pc, addr, size);
    else
      s.communication().read(*c, pc, addr, size);
    CaptureSession::feed_access(*t, s.analyzers(), pc, addr, size, write);
  };
  s.record_allocation(*t0, kAllocPc, line_address(), sizeof g_line);
  access(t0, kWriterPc, line_address(), 8, true);
  access(t1, kReaderPc, line_address(), 8, false);
  access(t1, kReaderPc, line_address(), 8, false);
  access(t0, kWriterPc, line_address() + 64, 8, true);
  access(t1, kWriterPc + 4, line_address() + 72, 8, true);
  for (ThreadContext* t : {t0, t1}) {
    s.record_sync(*t, SyncKind::BarrierEnter, 2000, kBarrierPc, kBarrier);
    s.record_sync(*t, SyncKind::BarrierLeave, 2100, kBarrierPc, kBarrier);
  }
  s.finish_thread(*t1, 3000);
  return s;
}

uint64_t sum_raw(const std::vector<PcCommunication>& records, uint64_t pc) {
  uint64_t n = 0;
  for (const PcCommunication& r : records)
    if (r.pc == pc) n += r.raw;
  return n;
}

TEST_F(CaptureSessionTest, RoundTripKeepsEverySection) {
  CaptureConfig config;
  config.max_threads = 4;
  RunCapture c = round_trip(run_two_threads(config));

  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.incomplete_reason, "");
  EXPECT_EQ(c.granularity, 64u);
  EXPECT_EQ(c.max_threads, 4u);
  EXPECT_EQ(c.analyses, AnalysisSet::defaults());
  EXPECT_EQ(c.process_maps, kMaps);
  EXPECT_EQ(c.dropped_events, 0u);

  // Threads, in id order, with what start_thread and finish_thread gave.
  ASSERT_EQ(c.threads.size(), 2u);
  EXPECT_EQ(c.threads[0].id, 0u);
  EXPECT_EQ(c.threads[0].parent, -1);
  EXPECT_EQ(c.threads[0].os_tid, 100);
  EXPECT_EQ(c.threads[1].id, 1u);
  EXPECT_EQ(c.threads[1].parent, 0);
  EXPECT_EQ(c.threads[1].start_routine, 0x405000u);
  EXPECT_EQ(c.threads[1].start_ns, 1100u);
  EXPECT_EQ(c.threads[1].end_ns, 3000u);

  // Communication at the reading instruction: 0 -> 1, once true, once
  // reuse; thread 1's write invalidated thread 0's copy of the granule.
  std::vector<PcCommunication> communication = c.records(kCommunicationCounts);
  ASSERT_EQ(communication.size(), 2u);
  std::sort(communication.begin(), communication.end(),
            [](const PcCommunication& a, const PcCommunication& b) { return a.pc < b.pc; });
  EXPECT_EQ(communication[0].pc, kWriterPc + 4);
  EXPECT_EQ(communication[0].thread, 1u);
  EXPECT_EQ(communication[0].peer, 0u);
  EXPECT_EQ(communication[0].inval, 1u);
  EXPECT_EQ(communication[0].raw + communication[0].rar, 0u);
  EXPECT_EQ(communication[1].pc, kReaderPc);
  EXPECT_EQ(communication[1].thread, 1u);
  EXPECT_EQ(communication[1].peer, 0u);
  EXPECT_EQ(communication[1].raw, 1u);
  EXPECT_EQ(communication[1].rar, 1u);
  // The same counts attributed to the section the barrier closed.
  uint64_t section_raw = 0, section_rar = 0, section_inval = 0;
  for (const PcCommunication& r : c.records(kSectionCommunication)) {
    EXPECT_EQ(r.pc, kBarrierPc);
    section_raw += r.raw;
    section_rar += r.rar;
    section_inval += r.inval;
  }
  EXPECT_EQ(section_raw, 1u);
  EXPECT_EQ(section_rar, 1u);
  EXPECT_EQ(section_inval, 1u);
  EXPECT_EQ(sum_raw(c.records(kCommunicationCounts), kWriterPc), 0u);

  // CRD: the reuse of the pair's only granule, distance 0; and in the
  // sampled word trace the same reuse when the granule's sampled word is the
  // one read (the sample follows the address, which ASLR moves).
  uint64_t distance_events = 0, word_events = 0;
  for (const PcDistanceCount& d : c.records(kCrdDistances)) {
    EXPECT_EQ(d.writer, 0u);
    EXPECT_EQ(d.reader, 1u);
    EXPECT_EQ(d.distance & ~kWordDistance, 0u);
    ((d.distance & kWordDistance) != 0 ? word_events : distance_events) += d.count;
  }
  EXPECT_EQ(distance_events, 1u);
  const bool word_read = SampledWord(6).sampled(line_address(), line_address() >> 6);
  EXPECT_EQ(word_events, word_read ? 1u : 0u);
  // Both granules were touched by both threads: shared, first touched by 0.
  ASSERT_EQ(c.records(kCrdFootprints).size(), 1u);
  EXPECT_EQ(c.records(kCrdFootprints)[0].pc, kWriterPc);
  EXPECT_EQ(c.records(kCrdFootprints)[0].shared_granules, 2u);
  EXPECT_EQ(c.records(kCrdFootprints)[0].private_granules, 0u);

  // Synchronization: each thread's start, its barrier, thread 1's exit.
  ASSERT_EQ(c.sync.size(), 7u);
  EXPECT_EQ(std::count_if(c.sync.begin(), c.sync.end(),
                          [](const SyncRecord& r) { return r.kind == SyncKind::BarrierEnter; }),
            2);
  EXPECT_EQ(c.sync.back().kind, SyncKind::ThreadExit);

  // Imbalance: each thread's accesses in its first segment, per instruction.
  uint64_t executions = 0;
  for (const SegmentInstruction& r : c.records(kSegmentInstructions)) {
    EXPECT_EQ(r.segment, 0u);
    executions += r.executions;
  }
  EXPECT_EQ(executions, 5u);

  // False sharing: thread 1 took the line thread 0 wrote, at other bytes.
  ASSERT_EQ(c.records(kLineSharing).size(), 1u);
  EXPECT_EQ(c.records(kLineSharing)[0].line_address, line_address() + 64);
  EXPECT_EQ(c.records(kLineSharing)[0].thread, 1u);
  EXPECT_EQ(c.records(kLineSharing)[0].writer, 0u);
  EXPECT_EQ(c.records(kLineSharing)[0].thread_bytes, 0xff00u);
  EXPECT_EQ(c.records(kLineSharing)[0].writer_bytes, 0xffu);
  ASSERT_EQ(c.records(kAllocations).size(), 1u);
  EXPECT_EQ(c.records(kAllocations)[0].pc, kAllocPc);
  EXPECT_EQ(c.records(kAllocations)[0].size, sizeof g_line);

  // Traces: one stream per (thread, instruction), each access recorded.
  const std::vector<TraceStream> traces = read_trace_streams(c.bytes(kTraceStreams));
  ASSERT_EQ(traces.size(), 3u);
  uint64_t traced = 0;
  for (const TraceStream& t : traces) {
    EXPECT_EQ(t.encoding.size(), t.header.encoded_bytes);
    traced += t.header.accesses;
  }
  EXPECT_EQ(traced, 5u);

  // Every setting and counter of every analysis that ran (the default
  // ones), by its meta key.
  for (const AnalysisDescriptor& d : kAnalyses) {
    if (!c.analyses.has(d.id)) continue;
    for (const AnalysisSetting& setting : d.settings) {
      if (!setting.env.empty()) {
        EXPECT_TRUE(c.analysis_values.contains(setting.key)) << setting.key;
      }
    }
    for (std::string_view counter : d.counters)
      EXPECT_TRUE(c.analysis_values.contains(counter)) << counter;
  }
  EXPECT_EQ(c.analysis_values.at("line_size"), "64");
  EXPECT_EQ(c.analysis_values.at("crd_max_granules"), "1048576");
  EXPECT_EQ(c.analysis_values.at("crd_capped_pairs"), "0");
  EXPECT_EQ(c.analysis_values.at("untracked_accesses"), "0");
  EXPECT_EQ(c.analysis_values.at("trace_budget"), "8388608");
  EXPECT_EQ(c.analysis_values.at("cache_levels"), "64,32768:8,262144:8,8388608:16");
}

// The traces number a thread's segments as its sync log does: each logged
// section-closing record starts the next one; other records do not.
// The reuse analysis (not in the default): its counts and settings travel
// through the raw capture. Thread 1 reads the granule thread 0 wrote
// (remote, first access) and re-reads it at distance 0.
TEST_F(CaptureSessionTest, ReuseCountsRoundTrip) {
  CaptureConfig config;
  config.max_threads = 4;
  config.analyses = AnalysisSet::all();
  RunCapture c = round_trip(run_two_threads(config));
  EXPECT_TRUE(c.analyses.has(AnalysisId::Reuse));
  EXPECT_EQ(c.analysis_values.at("reuse_granule"), "64");
  EXPECT_EQ(c.analysis_values.at("reuse_sample_granules"), "0");  // weft record sets 65536
  EXPECT_EQ(c.analysis_values.at("reuse_sample_shift"), "0");
  std::map<std::tuple<uint64_t, uint32_t, uint16_t>, uint64_t> counts;
  for (const ReuseBinRecord& r : c.records(kReuseBins))
    counts[{r.pc, r.thread, static_cast<uint16_t>(r.bin | r.locality << 15)}] += r.count;
  EXPECT_EQ((counts[{kReaderPc, 1, kReuseColdBin | 1 << 15}]), 1u);
  EXPECT_EQ((counts[{kReaderPc, 1, 1 << 15}]), 1u);
  EXPECT_EQ((counts[{kWriterPc, 0, kReuseColdBin}]), 2u);
}

TEST_F(CaptureSessionTest, TracesNoteTheSegmentsTheirAccessesAreIn) {
  CaptureConfig config;
  config.max_threads = 4;
  config.analyses = {AnalysisId::Communication, AnalysisId::Traces};
  CaptureSession& s = *CaptureSession::create(config);
  ThreadContext* t = s.start_thread(s.reserve_thread_id(), -1, 0, 100, 1000);
  auto access = [&](uint64_t pc, uint64_t addr) {
    CaptureSession::feed_access(*t, s.analyzers(), pc, addr, 8, true);
  };
  access(kWriterPc, line_address());
  access(kWriterPc, line_address() + 8);
  s.record_sync(*t, SyncKind::BarrierEnter, 2000, kBarrierPc, kBarrier);  // closes segment 0
  s.record_sync(*t, SyncKind::BarrierLeave, 2100, kBarrierPc, kBarrier);
  access(kWriterPc, line_address() + 16);
  s.record_sync(*t, SyncKind::MutexLock, 2200, kBarrierPc, kBarrier + 64);  // closes nothing
  access(kWriterPc, line_address() + 24);
  access(kReaderPc, line_address());
  s.record_sync(*t, SyncKind::OmpImplicitBarrier, 2300, kBarrierPc, 0);  // closes segment 1
  access(kWriterPc, line_address() + 32);
  s.finish_thread(*t, 3000);
  const RunCapture c = round_trip(s);
  const std::vector<TraceStream> traces = read_trace_streams(c.bytes(kTraceStreams));
  ASSERT_EQ(traces.size(), 2u);
  for (const TraceStream& stream : traces) {
    ASSERT_EQ(stream.segments.size(), 1u);
    const TraceSegmentRun& run = stream.segments[0];
    if (stream.header.pc == kWriterPc) {
      // Segment 1 from access 2, segment 2 from access 4.
      EXPECT_EQ(run.first_segment, 1u);
      EXPECT_EQ(run.first_access, 2u);
      EXPECT_EQ(run.segment_step, 1u);
      EXPECT_EQ(run.access_step, 2u);
      EXPECT_EQ(run.count, 2u);
    } else {
      EXPECT_EQ(run.first_segment, 1u);
      EXPECT_EQ(run.first_access, 0u);
      EXPECT_EQ(run.count, 1u);
    }
  }
}

TEST_F(CaptureSessionTest, CommunicationAloneWritesOnlyItsSections) {
  CaptureConfig config;
  config.max_threads = 4;
  config.analyses = {AnalysisId::Communication};
  CaptureSession& s = run_two_threads(config);
  EXPECT_TRUE(s.communication_only());
  EXPECT_EQ(s.imbalance(), nullptr);
  RunCapture c = round_trip(s);
  EXPECT_EQ(c.analyses, AnalysisSet{AnalysisId::Communication});
  EXPECT_EQ(sum_raw(c.records(kCommunicationCounts), kReaderPc), 1u);
  EXPECT_TRUE(c.records(kCrdDistances).empty());
  EXPECT_TRUE(c.records(kCrdFootprints).empty());
  EXPECT_TRUE(c.records(kSegmentInstructions).empty());
  EXPECT_TRUE(c.records(kLineSharing).empty());
  EXPECT_TRUE(c.records(kAllocations).empty());
  EXPECT_TRUE(read_trace_streams(c.bytes(kTraceStreams)).empty());
  EXPECT_TRUE(c.analysis_values.empty());
}

// An analysis that loses records says so under its own name: the imbalance
// analysis with no room for closed segments drops each segment's records.
TEST_F(CaptureSessionTest, DroppedEventsAreCountedPerAnalysis) {
  CaptureConfig config;
  config.max_threads = 4;
  config.analyses = {AnalysisId::Communication, AnalysisId::Imbalance};
  // The same run with room: every record it logs is one the run without
  // room drops.
  const RunCapture with_room = round_trip(run_two_threads(config));
  const uint64_t logged =
      with_room.records(kSegmentEdges).size() + with_room.records(kSegmentInstructions).size();
  ASSERT_GT(logged, 0u);
  EXPECT_FALSE(with_room.analysis_values.contains("dropped.imbalance"));
  config.imbalance.max_log_chunks = 0;
  RunCapture c = round_trip(run_two_threads(config));
  const uint64_t dropped = c.analysis_number("dropped.imbalance", 0);
  EXPECT_EQ(dropped, logged);
  EXPECT_EQ(c.dropped_events, dropped);
  EXPECT_TRUE(c.records(kSegmentEdges).empty());
  EXPECT_FALSE(c.analysis_values.contains("dropped.comm"));
}

TEST_F(CaptureSessionTest, CrdBringsCommunicationAlong) {
  CaptureConfig config;
  config.analyses = {AnalysisId::Crd};
  config.crd.max_granules_per_pair = 7;
  RunCapture c = round_trip(run_two_threads(config));
  EXPECT_EQ(c.analyses, (AnalysisSet{AnalysisId::Communication, AnalysisId::Crd}));
  EXPECT_EQ(c.analysis_values.at("crd_max_granules"), "7");
}

// A session of `max_threads` with one thread more started.
CaptureSession& one_thread_too_many(uint32_t max_threads) {
  CaptureConfig config;
  config.max_threads = max_threads;
  config.analyses = {AnalysisId::Communication};
  CaptureSession& s = *CaptureSession::create(config);
  for (uint32_t i = 0; i <= max_threads; ++i) s.start_thread(s.reserve_thread_id(), -1, 0, 0, 0);
  return s;
}

TEST_F(CaptureSessionTest, ThreadsBeyondTheLimitMakeTheCaptureIncomplete) {
  CaptureSession& s = one_thread_too_many(2);
  EXPECT_EQ(s.context(2), nullptr);
  RunCapture c = round_trip(s);
  EXPECT_FALSE(c.complete);
  EXPECT_NE(c.incomplete_reason.find("--max-threads"), std::string::npos) << c.incomplete_reason;
  EXPECT_EQ(c.threads.size(), 2u);
}

TEST_F(CaptureSessionTest, ThreadsBeyondTheLimitKeepTheSourcesOwnReason) {
  RunCapture c = round_trip(one_thread_too_many(1), false, "a thread creation failed");
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.incomplete_reason.rfind("a thread creation failed; the program created more threads "
                                      "than --max-threads allows",
                                      0),
            0u)
      << c.incomplete_reason;
}

TEST_F(CaptureSessionTest, TruncatedCaptureKeepsWholeRecords) {
  CaptureConfig config;
  config.analyses = {AnalysisId::Communication};
  const RunCapture whole = round_trip(run_two_threads(config));
  const std::string full = path("capture");
  const auto size = std::filesystem::file_size(full);
  std::vector<char> bytes(size);
  std::ifstream(full, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
  // Cut at every length: never a throw, never a record that was not written,
  // and only the whole file is complete.
  for (size_t cut = sizeof kRawCaptureMagic; cut < size; cut += 7) {
    const std::string part = path("part");
    std::ofstream(part, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    const RunCapture c = read_raw_capture(part);
    EXPECT_FALSE(c.complete) << cut;
    EXPECT_LE(c.threads.size(), whole.threads.size());
    EXPECT_LE(c.sync.size(), whole.sync.size());
    EXPECT_LE(c.records(kCommunicationCounts).size(), whole.records(kCommunicationCounts).size());
  }
}

TEST_F(CaptureSessionTest, NotARawCaptureIsRefused) {
  const std::string p = path("other");
  std::ofstream(p) << "hello, world";
  try {
    read_raw_capture(p);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), p + " is not a weft raw capture");
  }
}

TEST(CaptureConfigTest, SettingsAreCheckedAsTheDescriptorsSay) {
  CaptureConfig config;
  EXPECT_TRUE(config.apply_setting("line_size", "128"));
  EXPECT_EQ(config.false_sharing.line_size, 128u);
  EXPECT_FALSE(config.apply_setting("line_size", "48"));    // not a power of two
  EXPECT_FALSE(config.apply_setting("line_size", "8192"));  // above 4096
  EXPECT_FALSE(config.apply_setting("line_size", "64K"));   // the runtime's form is digits
  EXPECT_TRUE(config.apply_setting("trace_budget", "4096"));
  EXPECT_EQ(config.traces.max_bytes_per_thread, 4096u);
  EXPECT_FALSE(config.apply_setting("trace_budget", "4095"));
  EXPECT_TRUE(config.apply_setting("crd_max_granules", "0"));
  EXPECT_EQ(config.crd.max_granules_per_pair, 0u);
  EXPECT_FALSE(config.apply_setting("crd_max_granules", "-1"));
  EXPECT_FALSE(config.apply_setting("crd_max_granules", "18446744073709551616"));  // 2^64
  EXPECT_TRUE(config.apply_setting("cache_levels", "128,1024:2,4096:4,65536:8"));
  EXPECT_EQ(config.imbalance.cache.line_bytes, 128u);
  EXPECT_EQ(config.imbalance.cache.levels[2].size_bytes, 65536u);
  EXPECT_EQ(config.imbalance.cache.levels[2].ways, 8u);
  EXPECT_FALSE(config.apply_setting("cache_levels", "64,1024:2"));
  EXPECT_FALSE(config.apply_setting("no_such_setting", "1"));
}

TEST(AnalysisSetTest, ParsesAndFormatsTheNames) {
  AnalysisSet s;
  ASSERT_TRUE(AnalysisSet::parse("traces,crd", s));
  EXPECT_TRUE(s.has(AnalysisId::Traces));
  EXPECT_TRUE(s.has(AnalysisId::Crd));
  EXPECT_FALSE(s.has(AnalysisId::Communication));
  char text[64];
  s.with_requirements().format(text, sizeof text);
  EXPECT_STREQ(text, "comm,crd,traces");
  std::string_view bad;
  EXPECT_FALSE(AnalysisSet::parse("comm,,crd", s, &bad));
  EXPECT_EQ(bad, "");
  EXPECT_FALSE(AnalysisSet::parse("comm,nonsense", s, &bad));
  EXPECT_EQ(bad, "nonsense");
  AnalysisSet::all().format(text, sizeof text);
  EXPECT_STREQ(text, "comm,crd,imbalance,falseshare,traces,pages,reuse");
  AnalysisSet::defaults().format(text, sizeof text);
  EXPECT_STREQ(text, "comm,crd,imbalance,falseshare,traces");
}

// --- The Valgrind ring decoder, on synthetic slots -------------------------

class RingSlots {
 public:
  RingSlots& record(uint64_t a, uint64_t b) {
    slots_.push_back({a, b});
    return *this;
  }
  RingSlots& thread_start(uint64_t tid, int64_t parent, uint64_t time) {
    record(tid, WEFT_REC_THREAD_START | static_cast<uint64_t>(parent + 1) << 8);
    record(0x405000, 200 + tid);
    return record(time, 0);
  }
  RingSlots& access(uint64_t type, uint64_t pc, uint64_t addr, uint64_t size) {
    return record(addr, type | size << 8 | pc << WEFT_REC_PC_SHIFT);
  }
  RingSlots& sync(SyncKind kind, uint64_t pc, uint64_t object, uint64_t time) {
    record(time, WEFT_REC_SYNC | static_cast<uint64_t>(kind) << 8 | pc << WEFT_REC_PC_SHIFT);
    record(object, 0);
    return record(0, 0);
  }
  RingSlots& text(uint64_t type, uint64_t header_bits, const std::string& s) {
    record(s.size(), type | header_bits);
    for (size_t i = 0; i < s.size(); i += sizeof(WeftRingSlot)) {
      WeftRingSlot slot{};
      std::memcpy(&slot, s.data() + i, std::min(sizeof slot, s.size() - i));
      slots_.push_back(slot);
    }
    return *this;
  }
  const std::vector<WeftRingSlot>& slots() const { return slots_; }

 private:
  std::vector<WeftRingSlot> slots_;
};

// The compile-time hooks' composed fast path (the communication analyzer's
// fast path, then CaptureSession::feed_access_fast, then what it leaves to
// feed_access_remaining) must leave every analyzer as the full path does
// (watch_access, the communication analyzer, feed_access). Both paths run
// the same two-thread program in the style of a halo stencil on the default
// analyses: main initialises a grid, two workers sweep their halves reading
// the neighbours' rows, re-read a pointer, spin on a flag the other sets,
// and meet at barriers; the two raw captures must be byte for byte equal.
alignas(64) double g_grid[2][1024];
alignas(64) uint64_t g_flag[8];     // [0] the wait's flag, [1] the waiter's acknowledgement
alignas(64) uint64_t g_pointer[8];  // the grid pointer the sweep re-reads

enum class AccessPath { Full, Composed };

std::string capture_of_stencil(AccessPath path, const std::string& file) {
  CaptureConfig config;
  config.max_threads = 4;
  CaptureSession& s = *CaptureSession::create(config);
  ThreadContext* t[2] = {s.start_thread(s.reserve_thread_id(), -1, 0, 100, 1000),
                         s.start_thread(s.reserve_thread_id(), 0, 0x405000, 101, 1100)};
  uint64_t fast = 0, accesses = 0;
  auto access = [&](int thread, uint64_t pc, const void* p, uint32_t size, bool write) {
    ThreadContext& c = *t[thread];
    const auto addr = reinterpret_cast<uint64_t>(p);
    ++accesses;
    CommunicationAnalyzer::ThreadState* comm = c.comm.load();
    if (path == AccessPath::Composed &&
        (write ? CommunicationAnalyzer::is_local_write(*comm, addr, size)
               : CommunicationAnalyzer::read_fast(*comm, pc, addr, size))) {
      ++fast;
      if (uint32_t remaining = s.feed_access_fast(c, pc, addr, size, write))
        s.feed_access_remaining(c, pc, addr, size, write, remaining);
      return;
    }
    s.watch_access(c, pc, addr, write);
    if (write)
      s.communication().write(*comm, pc, addr, size);
    else
      s.communication().read(*comm, pc, addr, size);
    CaptureSession::feed_access(c, s.analyzers(), pc, addr, size, write);
  };
  uint64_t now = 2000;
  auto barrier = [&] {
    for (ThreadContext* c : t) s.record_sync(*c, SyncKind::BarrierEnter, now, kBarrierPc, kBarrier);
    now += 100;
    for (ThreadContext* c : t) s.record_sync(*c, SyncKind::BarrierLeave, now, kBarrierPc, kBarrier);
    now += 100;
  };
  for (int i = 0; i < 1024; ++i) access(0, 0x401000, &g_grid[0][i], 8, true);
  barrier();
  for (int step = 0; step < 3; ++step) {
    const int in = step % 2, out = 1 - in;
    for (int w = 0; w < 2; ++w) {
      const int begin = w * 512, end = begin + 512;
      for (int i = begin; i < end; ++i) {
        access(w, 0x401100, &g_pointer[0], 8, false);
        if (i > 0) access(w, 0x401110, &g_grid[in][i - 1], 8, false);
        access(w, 0x401120, &g_grid[in][i], 8, false);
        if (i < 1023) access(w, 0x401130, &g_grid[in][i + 1], 8, false);
        if (i % 64 == 63) access(w, 0x401138, &g_grid[in][(i * 7) % 1024], 8, false);
        access(w, 0x401140, &g_grid[out][i], 8, true);
      }
    }
    // A hand-made flag wait: worker 1 spins until worker 0 sets it.
    for (int k = 0; k < 6; ++k) access(1, 0x401200, &g_flag[0], 8, false);
    access(0, 0x401210, &g_flag[0], 8, true);
    access(1, 0x401200, &g_flag[0], 8, false);
    access(1, 0x401220, &g_flag[1], 4, true);
    barrier();
  }
  s.finish_thread(*t[1], now);
  // Most accesses are private re-reads and owned writes.
  if (path == AccessPath::Composed) {
    EXPECT_GT(fast * 2, accesses);
  }
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  s.write(fd, true, "", kMaps, sizeof kMaps - 1);
  close(fd);
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(CaptureSessionTest, ComposedFastPathLeavesTheAnalyzersAsTheFullPath) {
  const std::string full = capture_of_stencil(AccessPath::Full, path("full"));
  const std::string composed = capture_of_stencil(AccessPath::Composed, path("composed"));
  ASSERT_GT(full.size(), 1000u);
  EXPECT_TRUE(full == composed) << "the raw captures differ (" << full.size() << " and "
                                << composed.size() << " bytes)";
  // The raw reads of thread 0's data by thread 1, counted by hand. Step 0:
  // granules 63..127 of grid[0] (its half and the row before it) and, of
  // the scattered reads (i * 7 % 1024 for i = 575, 639, ..., 1023), those
  // in thread 0's half: elements 377, 249, 121 (68). Steps 1 and 2: the row
  // before its half and the same three scattered granules, written by
  // thread 0 the step before (4 + 4). The flag, once a step after thread 0
  // set it (3; the six reads before see their own acknowledgement's
  // granule, or nothing new).
  const RunCapture c = read_raw_capture(path("composed"));
  uint64_t raw = 0;
  for (const PcCommunication& r : c.records(kCommunicationCounts))
    if (r.peer == 0 && r.thread != 0) raw += r.raw;
  EXPECT_EQ(raw, 79u);
}

// A session of up to 4 threads with communication and false sharing.
CaptureSession& ring_session() {
  CaptureConfig config;
  config.max_threads = 4;
  config.analyses = {AnalysisId::Communication, AnalysisId::FalseSharing};
  return *CaptureSession::create(config);
}

TEST_F(CaptureSessionTest, RingDecoderFeedsTheSessionLikeTheRuntime) {
  CaptureSession& s = ring_session();
  RingEventDecoder decoder(s);
  RingSlots ring;
  ring.thread_start(0, -1, 1000)
      .record(line_address(), WEFT_REC_ALLOCATION | kAllocPc << WEFT_REC_PC_SHIFT)
      .record(sizeof g_line, 0)
      .access(WEFT_REC_WRITE, kWriterPc, line_address(), 8)
      .thread_start(1, 0, 1100)
      .access(WEFT_REC_READ, kReaderPc, line_address(), 8)
      .access(WEFT_REC_READ, kReaderPc, line_address(), 8)
      .sync(SyncKind::BarrierEnter, kBarrierPc, kBarrier, 2000)
      .record(1, WEFT_REC_THREAD_EXIT)
      .record(3000, 17)
      .record(0, WEFT_REC_SWITCH)
      .text(WEFT_REC_MAPS, 0, kMaps)
      .text(WEFT_REC_END, 1 << 8, "");
  // Delivered in two blocks, split inside nothing.
  const std::vector<WeftRingSlot>& slots = ring.slots();
  decoder.consume(slots.data(), 3);
  decoder.consume(slots.data() + 3, slots.size() - 3);
  EXPECT_TRUE(decoder.ended());
  EXPECT_TRUE(decoder.complete());
  EXPECT_EQ(decoder.maps(), kMaps);

  const RunCapture c = round_trip(s, decoder.complete(), decoder.reason().c_str());
  ASSERT_EQ(c.threads.size(), 2u);
  EXPECT_EQ(c.threads[1].os_tid, 201);
  EXPECT_EQ(c.threads[1].end_ns, 3000u);
  EXPECT_EQ(c.threads[1].basic_blocks, 17u);
  ASSERT_EQ(c.records(kCommunicationCounts).size(), 1u);
  EXPECT_EQ(c.records(kCommunicationCounts)[0].pc, kReaderPc);
  EXPECT_EQ(c.records(kCommunicationCounts)[0].raw, 1u);
  EXPECT_EQ(c.records(kCommunicationCounts)[0].rar, 1u);
  ASSERT_EQ(c.records(kAllocations).size(), 1u);
  EXPECT_EQ(c.records(kAllocations)[0].thread, 0u);
  EXPECT_EQ(c.records(kAllocations)[0].pc, kAllocPc);
  // Starts of 0 and 1, 1's barrier, 1's exit.
  ASSERT_EQ(c.sync.size(), 4u);
  EXPECT_EQ(c.sync[3].kind, SyncKind::ThreadExit);
}

// Freed memory: a RELEASE record makes every analysis forget the block, so
// thread 1's read of what thread 0 wrote there before is not communication.
TEST_F(CaptureSessionTest, RingDecoderReleaseForgetsTheBlock) {
  CaptureSession& s = ring_session();
  RingEventDecoder decoder(s);
  RingSlots ring;
  ring.thread_start(0, -1, 1000)
      .access(WEFT_REC_WRITE, kWriterPc, line_address() + 64, 8)
      .record(line_address() + 64, WEFT_REC_RELEASE | uint64_t{64} << 8)
      .thread_start(1, 0, 1100)
      .access(WEFT_REC_READ, kReaderPc, line_address() + 64, 8)
      .text(WEFT_REC_END, 1 << 8, "");
  decoder.consume(ring.slots().data(), ring.slots().size());
  const RunCapture c = round_trip(s, decoder.complete(), decoder.reason().c_str());
  EXPECT_TRUE(c.records(kCommunicationCounts).empty());
  EXPECT_TRUE(c.records(kSharingTotals).empty());
}

// Valgrind's panic: thousands of lines on its log, of which weft keeps the
// cause, for its one-line report; other lines pass, the DWARF noise does not.
TEST(ValgrindLogFilterTest, APanicBecomesOneCause) {
  ValgrindLogFilter filter;
  const std::vector<std::string> kept_lines = {"==12== a message of valgrind's\n", "\n"};
  std::vector<std::string> lines = {
      "### unhandled dwarf2 abbrev form code 0x25\n",
      kept_lines[0],
      kept_lines[1],
      "Use --max-threads=INT to specify a larger number of threads\n",
      "and rerun valgrind\n",
      "\n",
      "valgrind: the 'impossible' happened:\n",
      "   Max number of threads is too low\n",
      "\n",
      "host stacktrace:\n",
      "==2424==    at 0x5802561A: ??? (in /usr/libexec/valgrind/none-amd64-linux)\n",
      "\n",
      "sched status:\n",
      "  running_tid=1\n",
      "Thread 1: status = VgTs_Runnable syscall 56 (lwpid 2424)\n",
      "Note: see also the FAQ in the source distribution.\n",
      "In the bug report, send all the above text, the valgrind\n"};
  for (int i = 0; i < 2000; ++i) lines.push_back("==2424==    by 0x1: ???\n");
  std::vector<std::string> passed;
  for (const std::string& line : lines)
    if (filter.pass(line)) passed.push_back(line);
  EXPECT_EQ(passed, kept_lines);
  EXPECT_EQ(filter.failure(), "Max number of threads is too low");

  ValgrindLogFilter assertion;
  EXPECT_FALSE(assertion.pass(
      "valgrind: m_mallocfree.c:303 (get_bszB_as_is): Assertion 'bszB_lo == bszB_hi' failed.\n"));
  EXPECT_FALSE(assertion.pass("valgrind: Heap block lo/hi size mismatch\n"));
  EXPECT_EQ(assertion.failure(),
            "m_mallocfree.c:303 (get_bszB_as_is): Assertion 'bszB_lo == bszB_hi' failed.");
}

// Valgrind ends the program with its fatal signal, then (a race in Valgrind
// while threads exit) survives its own re-raise and panics: the program's
// ending is the signal, Valgrind's failure only in reporting it.
TEST(ValgrindLogFilterTest, APanicAfterTheFatalSignalIsTheSignal) {
  ValgrindLogFilter filter;
  EXPECT_TRUE(
      filter.pass("==31195== Process terminating with default action of signal 11 (SIGSEGV)\n"));
  EXPECT_TRUE(filter.pass("==31195==  Access not within mapped region at address 0x0\n"));
  EXPECT_FALSE(filter.failed_to_reraise());
  EXPECT_FALSE(filter.pass("valgrind: the 'impossible' happened:\n"));
  EXPECT_FALSE(filter.pass("   main(): signal was supposed to be fatal\n"));
  EXPECT_EQ(filter.terminating_signal(), SIGSEGV);
  EXPECT_TRUE(filter.failed_to_reraise());

  // Another panic, or the same one without the signal's line, stays a failure.
  ValgrindLogFilter other;
  other.pass("==7== Process terminating with default action of signal 6 (SIGABRT)\n");
  other.pass("valgrind: the 'impossible' happened:\n");
  other.pass("   Max number of threads is too low\n");
  EXPECT_FALSE(other.failed_to_reraise());
  ValgrindLogFilter unsignalled;
  unsignalled.pass("valgrind: the 'impossible' happened:\n");
  unsignalled.pass("   main(): signal was supposed to be fatal\n");
  EXPECT_FALSE(unsignalled.failed_to_reraise());
  // A program's own output that quotes the phrase is not Valgrind's.
  ValgrindLogFilter quoted;
  quoted.pass("Process terminating with default action of signal 9\n");
  EXPECT_EQ(quoted.terminating_signal(), 0);
}

TEST_F(CaptureSessionTest, RingDecoderRefusesAnUnknownRecord) {
  CaptureSession& s = *CaptureSession::create(CaptureConfig{});
  RingEventDecoder decoder(s);
  const WeftRingSlot bad[] = {{0, 0xee}};
  try {
    decoder.consume(bad, 1);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "corrupt event ring: record type 238 from weft's Valgrind tool");
  }
}

TEST_F(CaptureSessionTest, RingDecoderStopsAtARecordCutByTheBlockEnd) {
  CaptureSession& s = *CaptureSession::create(CaptureConfig{});
  RingEventDecoder decoder(s);
  RingSlots ring;
  ring.thread_start(0, -1, 1000);
  // The start record's two payload slots are missing: nothing is started.
  decoder.consume(ring.slots().data(), 1);
  EXPECT_EQ(s.thread_count(), 0u);
  EXPECT_FALSE(decoder.ended());
}

// An analysis' section reaches its records as written, by tag: a reader
// with a longer record type gets the common prefix and zeros, one with a
// shorter type the prefix (an older or newer capture part's records).
TEST(RunCaptureTest, RecordsCopyTheCommonPrefixOfAnotherRecordSize) {
  struct Short {
    uint64_t a = 0;
  };
  struct Long {
    uint64_t a = 0;
    uint64_t b = 0;
  };
  constexpr RecordSection<Short> kShort{analysis_section_tag(AnalysisId::Traces, 200)};
  constexpr RecordSection<Long> kLong{kShort.tag};
  RunCapture capture;
  capture.set_records(kShort, {{7}, {9}});
  const std::vector<Long> longer = capture.records(kLong);
  ASSERT_EQ(longer.size(), 2u);
  EXPECT_EQ(longer[1].a, 9u);
  EXPECT_EQ(longer[1].b, 0u);
  capture.set_records(kLong, {{1, 2}, {3, 4}, {5, 6}});
  const std::vector<Short> shorter = capture.records(kShort);
  ASSERT_EQ(shorter.size(), 3u);
  EXPECT_EQ(shorter[2].a, 5u);
  EXPECT_TRUE(capture.records(RecordSection<Short>{kShort.tag + 1}).empty());
  EXPECT_GT(analysis_section_tag(AnalysisId::Communication, 0),
            static_cast<uint32_t>(RawSection::AnalysisValues));
}

}  // namespace
}  // namespace weft
