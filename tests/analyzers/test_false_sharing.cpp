// The false-sharing detector: hand-built access sequences with exact counts
// (driven from one OS thread through several ThreadStates), a serial oracle
// written from the definition on random sequences (with synchronization
// calls and atomics, for the unsynchronised writes), and real threads.
#include <gtest/gtest.h>

#include <array>
#include <barrier>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "analyzers/false_sharing/false_sharing_detector.h"

namespace weft {
namespace {

constexpr uint64_t kBase = 0x7f0000100000;  // 4096-aligned, never dereferenced

struct LineValue {
  uint64_t false_events;
  uint64_t thread_bytes;
  uint64_t writer_bytes;
  bool operator==(const LineValue&) const = default;
};
// (line, pc, thread, writer) -> record
using Lines = std::map<std::tuple<uint64_t, uint64_t, uint32_t, uint32_t>, LineValue>;
// (thread, writer) -> {true, false}
using Pairs = std::map<std::pair<uint32_t, uint32_t>, std::array<uint64_t, 2>>;
// (line, pc, thread, writer) -> {events, bytes}
using Unsync =
    std::map<std::tuple<uint64_t, uint64_t, uint32_t, uint32_t>, std::array<uint64_t, 2>>;
// (line, pc, thread, writer) -> thread_written, for records that have some
using Written = std::map<std::tuple<uint64_t, uint64_t, uint32_t, uint32_t>, uint64_t>;

Lines lines_of(const FalseSharingDetector& d) {
  Lines out;
  d.for_each_line_record([&](const LineSharingRecord& r) {
    auto [it, fresh] = out.insert({{r.line_address, r.pc, r.thread, r.writer},
                                   LineValue{r.false_events, r.thread_bytes, r.writer_bytes}});
    EXPECT_TRUE(fresh);
  });
  return out;
}

Unsync unsync_of(const FalseSharingDetector& d) {
  Unsync out;
  d.for_each_unsync_record([&](const UnsyncWriteRecord& r) {
    auto [it, fresh] =
        out.insert({{r.line_address, r.pc, r.thread, r.writer}, {r.events, r.bytes}});
    EXPECT_TRUE(fresh);
  });
  return out;
}

Written written_of(const FalseSharingDetector& d) {
  Written out;
  d.for_each_line_record([&](const LineSharingRecord& r) {
    if (r.thread_written != 0) out[{r.line_address, r.pc, r.thread, r.writer}] = r.thread_written;
  });
  return out;
}

Pairs pairs_of(const FalseSharingDetector& d) {
  Pairs out;
  d.for_each_pair_total([&](const SharingPairTotals& p) {
    auto [it, fresh] = out.insert({{p.thread, p.writer}, {p.true_events, p.false_events}});
    EXPECT_TRUE(fresh);
  });
  return out;
}

class FalseSharingTest : public ::testing::Test {
 protected:
  void make(unsigned line_size, unsigned max_threads = 1024) {
    FalseSharingConfig config;
    config.line_size = line_size;
    config.max_threads = max_threads;
    d_ = std::make_unique<FalseSharingDetector>(config);
  }
  FalseSharingDetector::ThreadState& t(uint32_t tid) {
    FalseSharingDetector::ThreadState* s = d_->attach(tid);
    EXPECT_NE(s, nullptr);
    return *s;
  }
  void read(uint32_t tid, uint64_t pc, uint64_t addr, uint32_t size) {
    d_->access(t(tid), pc, addr, size, false);
  }
  void write(uint32_t tid, uint64_t pc, uint64_t addr, uint32_t size) {
    d_->access(t(tid), pc, addr, size, true);
  }
  void atomic_write(uint32_t tid, uint64_t pc, uint64_t addr, uint32_t size) {
    d_->access(t(tid), pc, addr, size, true, true);
  }
  void sync(uint32_t tid, SyncKind kind, uint64_t object = 0, int64_t arg0 = 0) {
    d_->synchronize(t(tid), kind, object, arg0);
  }
  std::unique_ptr<FalseSharingDetector> d_;
};

TEST_F(FalseSharingTest, FalseSharingAdjacentCountersInOneLine) {
  make(64);
  constexpr int kIterations = 10;
  for (int i = 0; i < kIterations; ++i) {
    read(0, 0x100, kBase + 0, 8);  // ++counter0
    write(0, 0x104, kBase + 0, 8);
    read(1, 0x200, kBase + 8, 8);  // ++counter1
    write(1, 0x204, kBase + 8, 8);
  }
  // Thread 1 takes the line from thread 0 at every read; thread 0 from
  // thread 1 at every read but the first (the line was never written then).
  // Writes find the line already held: no transfer.
  const Pairs expected_pairs = {{{1, 0}, {0, kIterations}}, {{0, 1}, {0, kIterations - 1}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {
      {{kBase, 0x200, 1, 0}, {kIterations, 0xffull << 8, 0xffull << 0}},
      {{kBase, 0x100, 0, 1}, {kIterations - 1, 0xffull << 0, 0xffull << 8}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
  EXPECT_EQ(d_->dropped(), 0u);
  EXPECT_EQ(d_->untracked_accesses(), 0u);
}

// Sampled section instances (docs/metrics.md): a paused thread's plain
// accesses change nothing; a warm-up segment (weight 0) brings the line's
// state up to date without counting; a counted one counts each event
// `weight` times. The ping-pong of the test above, ten rounds, thread 1's
// rounds 0-2 analyzed in full, 3-5 paused (both threads), round 6 a warm-up
// for both, rounds 7-9 counted with weight 3.
TEST_F(FalseSharingTest, SampledSegmentsCountWeightedEventsFromAWarmedUpState) {
  make(64);
  auto both = [&](bool analyzed, uint32_t weight) {
    for (uint32_t tid : {0u, 1u}) FalseSharingDetector::sample_segment(t(tid), analyzed, weight);
  };
  for (int round = 0; round < 10; ++round) {
    if (round == 3) both(false, 1);
    if (round == 6) both(true, 0);
    if (round == 7) both(true, 3);
    read(0, 0x100, kBase + 0, 8);
    write(0, 0x104, kBase + 0, 8);
    read(1, 0x200, kBase + 8, 8);
    write(1, 0x204, kBase + 8, 8);
  }
  // Rounds 0-2: thread 1 takes the line 3 times, thread 0 twice; rounds 7-9:
  // 3 transfers each way, 3 events each.
  const Pairs expected_pairs = {{{1, 0}, {0, 3 + 3 * 3}}, {{0, 1}, {0, 2 + 3 * 3}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {
      {{kBase, 0x200, 1, 0}, {3 + 3 * 3, 0xffull << 8, 0xffull << 0}},
      {{kBase, 0x100, 0, 1}, {2 + 3 * 3, 0xffull << 0, 0xffull << 8}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
  EXPECT_EQ(d_->skipped_segments(), 2u);  // one paused segment begun by each thread
}

// Freed memory: the lines lying entirely inside a released block forget
// writer, copies and written bytes; a line it shares with a neighbour keeps
// its state.
TEST_F(FalseSharingTest, ReleasedLinesStartClean) {
  make(64);
  write(0, 0x100, kBase, 256);  // lines 0..3, every byte
  d_->forget(kBase + 8, kBase + 256);
  read(1, 0x200, kBase + 16, 8);    // line 0 (only partly released): a transfer, true sharing
  read(1, 0x204, kBase + 64, 8);    // lines 1..3: never written now, nothing
  write(1, 0x208, kBase + 128, 8);  // no unsynchronised write over thread 0's bytes
  const Pairs expected_pairs = {{{1, 0}, {1, 0}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  EXPECT_TRUE(unsync_of(*d_).empty());

  // A false-sharing event's copy is gone with the release: the receiving
  // thread's next write there is not added to that event's record.
  write(0, 0x100, kBase + 512, 8);
  read(1, 0x210, kBase + 512 + 32, 8);  // false sharing, thread 1 holds a copy
  d_->forget(kBase + 512, kBase + 576);
  write(1, 0x214, kBase + 512 + 32, 8);
  EXPECT_TRUE(written_of(*d_).empty());
}

TEST_F(FalseSharingTest, FalseSharingWriteOnlyCountersTransferAtEachWrite) {
  make(64);
  // Plain stores, no reads: each write takes the line from the other writer.
  for (int i = 0; i < 5; ++i) {
    write(0, 0x10, kBase + 16, 4);
    write(1, 0x20, kBase + 20, 4);
  }
  const Pairs expected_pairs = {{{1, 0}, {0, 5}}, {{0, 1}, {0, 4}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {
      {{kBase, 0x20, 1, 0}, {5, 0xfull << 20, 0xfull << 16}},
      {{kBase, 0x10, 0, 1}, {4, 0xfull << 16, 0xfull << 20}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
}

TEST_F(FalseSharingTest, FalseSharingCountersInDifferentLinesProduceNothing) {
  make(64);
  for (int i = 0; i < 10; ++i) {
    read(0, 0x100, kBase + 0, 8);
    write(0, 0x104, kBase + 0, 8);
    read(1, 0x200, kBase + 64, 8);
    write(1, 0x204, kBase + 64, 8);
  }
  EXPECT_TRUE(pairs_of(*d_).empty());
  EXPECT_TRUE(lines_of(*d_).empty());
}

TEST_F(FalseSharingTest, FalseSharingProducerConsumerIsTrueSharing) {
  make(64);
  write(2, 0x300, kBase + 16, 8);
  read(3, 0x400, kBase + 16, 8);
  read(3, 0x400, kBase + 16, 8);  // holds a copy: no event
  const Pairs expected_pairs = {{{3, 2}, {1, 0}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  EXPECT_TRUE(lines_of(*d_).empty());
}

TEST_F(FalseSharingTest, FalseSharingPartialOverlap) {
  make(64);
  write(0, 0x10, kBase + 0, 16);  // bytes 0..15
  read(1, 0x20, kBase + 8, 8);    // bytes 8..15: overlap, true
  read(2, 0x30, kBase + 16, 8);   // bytes 16..23: disjoint, false
  read(1, 0x20, kBase + 16, 8);   // thread 1 holds the line: nothing
  const Pairs expected_pairs = {{{1, 0}, {1, 0}}, {{2, 0}, {0, 1}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {{{kBase, 0x30, 2, 0}, {1, 0xffull << 16, 0xffff}}};
  EXPECT_EQ(lines_of(*d_), expected_lines);
}

TEST_F(FalseSharingTest, FalseSharingValidCopiesAndInvalidation) {
  make(64);
  write(0, 0x10, kBase + 0, 8);
  read(1, 0x20, kBase + 0, 8);   // true event 1
  read(1, 0x20, kBase + 0, 8);   // holds: nothing
  read(1, 0x24, kBase + 32, 4);  // holds: nothing
  read(0, 0x14, kBase + 0, 8);   // the writer: nothing
  write(0, 0x10, kBase + 0, 8);  // the owner rewrites: thread 1's copy is invalidated
  read(1, 0x20, kBase + 0, 8);   // true event 2
  read(2, 0x30, kBase + 0, 8);   // true event (thread 2)
  write(0, 0x18, kBase + 8, 8);  // owner write: written = bytes 0..15, copies invalidated
  write(0, 0x18, kBase + 8, 8);  // private re-write: nothing
  read(1, 0x28, kBase + 40, 8);  // disjoint from bytes 0..15: false event
  // A holder's write needs no transfer: thread 1 becomes the writer with
  // written = its bytes only, so thread 0 re-reading its own bytes is false.
  write(1, 0x2c, kBase + 40, 8);
  read(0, 0x14, kBase + 0, 8);   // false event, writer 1
  read(2, 0x34, kBase + 44, 2);  // true event, writer 1
  const Pairs expected_pairs = {
      {{1, 0}, {2, 1}}, {{2, 0}, {1, 0}}, {{0, 1}, {0, 1}}, {{2, 1}, {1, 0}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {
      {{kBase, 0x28, 1, 0}, {1, 0xffull << 40, 0xffff}},
      {{kBase, 0x14, 0, 1}, {1, 0xff, 0xffull << 40}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
}

TEST_F(FalseSharingTest, FalseSharingAccessSpanningTwoLines) {
  make(64);
  write(0, 0x10, kBase + 0, 8);        // line 0, bytes 0..7
  write(0, 0x10, kBase + 64 + 56, 8);  // line 1, bytes 56..63
  read(1, 0x20, kBase + 60, 8);        // line 0 bytes 60..63, line 1 bytes 0..3
  Pairs expected_pairs = {{{1, 0}, {0, 2}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  Lines expected_lines = {
      {{kBase, 0x20, 1, 0}, {1, 0xfull << 60, 0xff}},
      {{kBase + 64, 0x20, 1, 0}, {1, 0xf, 0xffull << 56}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
  // Thread 1 holds both lines: its spanning write moves nothing and makes it
  // the writer of both with only its bytes written.
  write(1, 0x24, kBase + 60, 8);
  read(0, 0x14, kBase + 0, 8);       // false, line 0
  read(0, 0x14, kBase + 64 + 2, 1);  // true, line 1 (byte 2)
  expected_pairs[{0, 1}] = {1, 1};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  expected_lines[{kBase, 0x14, 0, 1}] = {1, 0xff, 0xfull << 60};
  EXPECT_EQ(lines_of(*d_), expected_lines);
  // A spanning access whose lines are private costs no event either.
  read(1, 0x28, kBase + 62, 4);
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
}

TEST_F(FalseSharingTest, FalseSharingLineSize128ScalesBytesOntoMask) {
  make(128);
  EXPECT_EQ(d_->config().line_size, 128u);
  write(0, 0x10, kBase + 0, 8);    // bytes 0..7 -> bits 0..3
  read(1, 0x20, kBase + 64, 8);    // bytes 64..71 -> bits 32..35: same line, false
  read(2, 0x30, kBase + 7, 2);     // bytes 7..8 -> bits 3..4: true
  read(3, 0x40, kBase + 128, 8);   // the next line, never written: nothing
  write(4, 0x50, kBase + 121, 1);  // byte 121 -> bit 60: takes the line from 0, false
  const Pairs expected_pairs = {{{1, 0}, {0, 1}}, {{2, 0}, {1, 0}}, {{4, 0}, {0, 1}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {
      {{kBase, 0x20, 1, 0}, {1, 0xfull << 32, 0xf}},
      {{kBase, 0x50, 4, 0}, {1, 1ull << 60, 0xf}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
  // A spanning access at 128-byte lines: bytes 120..127 and 128..135.
  write(5, 0x60, kBase + 256 + 124, 8);  // line 2 bytes 124..127, line 3 bytes 0..3
  read(6, 0x70, kBase + 256 + 120, 16);  // line 2 bytes 120..127, line 3 bytes 0..7
  Pairs pairs = pairs_of(*d_);
  EXPECT_EQ((pairs[{6, 5}]), (std::array<uint64_t, 2>{2, 0}));
}

TEST_F(FalseSharingTest, FalseSharingLineSize32) {
  make(32);
  for (int i = 0; i < 3; ++i) {
    write(0, 0x10, kBase + 0, 8);
    write(1, 0x20, kBase + 32, 8);  // the next 32-byte line: nothing
  }
  EXPECT_TRUE(pairs_of(*d_).empty());
  write(2, 0x30, kBase + 64 + 24, 8);  // bytes 24..31 of line 2
  read(3, 0x40, kBase + 64, 8);        // bytes 0..7 of line 2: false
  read(4, 0x50, kBase + 64 + 28, 8);   // spans: line 2 bytes 28..31 (true), line 3 0..3 (nothing)
  const Pairs expected_pairs = {{{3, 2}, {0, 1}}, {{4, 2}, {1, 0}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {{{kBase + 64, 0x40, 3, 2}, {1, 0xff, 0xffull << 24}}};
  EXPECT_EQ(lines_of(*d_), expected_lines);
}

TEST_F(FalseSharingTest, FalseSharingLineSizeIsSanitized) {
  make(100);
  EXPECT_EQ(d_->config().line_size, 128u);
  make(2);
  EXPECT_EQ(d_->config().line_size, 8u);
  make(1 << 20);
  EXPECT_EQ(d_->config().line_size, 4096u);
}

TEST_F(FalseSharingTest, FalseSharingLineSize4096) {
  make(4096);
  write(0, 0x10, kBase + 0, 64);   // bytes 0..63 -> bit 0
  read(1, 0x20, kBase + 64, 8);    // bit 1: false
  read(2, 0x30, kBase + 4095, 1);  // bit 63: false
  const Lines expected_lines = {
      {{kBase, 0x20, 1, 0}, {1, 0x2, 0x1}},
      {{kBase, 0x30, 2, 0}, {1, 1ull << 63, 0x1}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
}

TEST_F(FalseSharingTest, FalseSharingNeverWrittenLinesProduceNothing) {
  make(64);
  for (uint32_t tid = 0; tid < 8; ++tid)
    for (int i = 0; i < 4; ++i) read(tid, 0x10 + tid, kBase + 8 * i, 8);
  EXPECT_TRUE(pairs_of(*d_).empty());
  EXPECT_TRUE(lines_of(*d_).empty());
  // A reader's first write takes nothing; the other readers lost their copy.
  write(0, 0x80, kBase + 0, 8);
  read(1, 0x90, kBase + 8, 8);
  const Pairs expected_pairs = {{{1, 0}, {0, 1}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
}

TEST_F(FalseSharingTest, FalseSharingThreadsBeyond48AreUntracked) {
  make(64, 128);
  EXPECT_EQ(d_->attach(128), nullptr);
  EXPECT_NE(d_->attach(127), nullptr);
  write(0, 0x10, kBase + 0, 8);
  write(48, 0x20, kBase + 8, 8);    // ignored: thread 0 stays the writer
  read(100, 0x30, kBase + 0, 8);    // ignored
  write(100, 0x30, kBase + 60, 8);  // ignored (spans two lines: one access)
  read(1, 0x40, kBase + 0, 8);      // true event from thread 0
  read(47, 0x50, kBase + 8, 8);     // false event from thread 0: 48's write did not count
  EXPECT_EQ(d_->untracked_accesses(), 3u);
  const Pairs expected_pairs = {{{1, 0}, {1, 0}}, {{47, 0}, {0, 1}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  const Lines expected_lines = {{{kBase, 0x50, 47, 0}, {1, 0xffull << 8, 0xff}}};
  EXPECT_EQ(lines_of(*d_), expected_lines);
  EXPECT_EQ(d_->dropped(), 0u);
}

// Adjacent counters: each thread's increment reads its counter (the false
// event) and writes it with the copy it obtained: the record's written bytes
// are its own counter's.
TEST_F(FalseSharingTest, FalseSharingRecordsTheBytesTheReceivingThreadWrote) {
  make(64);
  for (int i = 0; i < 3; ++i) {
    read(0, 0x100, kBase + 0, 8);
    write(0, 0x104, kBase + 0, 8);
    read(1, 0x200, kBase + 8, 8);
    write(1, 0x204, kBase + 8, 8);
  }
  const Written expected = {{{kBase, 0x200, 1, 0}, 0xffull << 8}, {{kBase, 0x100, 0, 1}, 0xff}};
  EXPECT_EQ(written_of(*d_), expected);
  EXPECT_TRUE(unsync_of(*d_).empty());
}

// A read-only value next to per-thread slots: the receiving reads are of
// the value, the bytes written with the copy are the slots.
TEST_F(FalseSharingTest, FalseSharingReadOnlyNeighbourIsNotWrittenByItsReaders) {
  make(64);
  for (int round = 0; round < 2; ++round) {
    for (uint32_t tid = 0; tid < 2; ++tid) {
      read(tid, 0x10, kBase + 0, 8);             // the read-only value
      write(tid, 0x14, kBase + 8 + 8 * tid, 8);  // the thread's slot
    }
  }
  // Thread 1 obtains the line from 0 twice; thread 0 from 1 once (round 1).
  const Lines expected_lines = {
      {{kBase, 0x10, 1, 0}, {2, 0xff, 0xffull << 8}},
      {{kBase, 0x10, 0, 1}, {1, 0xff, 0xffull << 16}},
  };
  EXPECT_EQ(lines_of(*d_), expected_lines);
  const Written expected = {{{kBase, 0x10, 1, 0}, 0xffull << 16},
                            {{kBase, 0x10, 0, 1}, 0xffull << 8}};
  EXPECT_EQ(written_of(*d_), expected);
}

// `sum += x` by two threads with nothing between: every write over the
// other thread's bytes is unsynchronised (its line transfer was the read's,
// true sharing).
TEST_F(FalseSharingTest, UnsynchronisedAccumulationIsCounted) {
  make(64);
  constexpr int kIterations = 10;
  for (int i = 0; i < kIterations; ++i) {
    for (uint32_t tid = 0; tid < 2; ++tid) {
      read(tid, 0x100, kBase + 16, 8);
      write(tid, 0x104, kBase + 16, 8);
    }
  }
  const Unsync expected = {{{kBase, 0x104, 1, 0}, {kIterations, 0xffull << 16}},
                           {{kBase, 0x104, 0, 1}, {kIterations - 1, 0xffull << 16}}};
  EXPECT_EQ(unsync_of(*d_), expected);
  const Pairs expected_pairs = {{{1, 0}, {kIterations, 0}}, {{0, 1}, {kIterations - 1, 0}}};
  EXPECT_EQ(pairs_of(*d_), expected_pairs);
  EXPECT_TRUE(lines_of(*d_).empty());
}

// The same under a lock, or with a barrier between the threads' writes:
// ordered, not counted.
TEST_F(FalseSharingTest, LockedOrBarrierSeparatedWritesAreNotUnsynchronised) {
  make(64);
  for (int i = 0; i < 5; ++i) {
    for (uint32_t tid = 0; tid < 2; ++tid) {
      sync(tid, SyncKind::MutexLock);
      read(tid, 0x100, kBase + 16, 8);
      write(tid, 0x104, kBase + 16, 8);
      sync(tid, SyncKind::MutexUnlock);
    }
  }
  EXPECT_TRUE(unsync_of(*d_).empty());
  // Phases: thread 0 writes, both pass a barrier, thread 1 writes.
  write(0, 0x200, kBase + 64, 8);
  sync(0, SyncKind::BarrierEnter);
  sync(1, SyncKind::BarrierEnter);
  sync(0, SyncKind::BarrierLeave);
  sync(1, SyncKind::BarrierLeave);
  write(1, 0x204, kBase + 64, 8);
  EXPECT_TRUE(unsync_of(*d_).empty());
  // A lock released without its acquisition seen leaves no lock held.
  sync(1, SyncKind::MutexUnlock);
  sync(0, SyncKind::MutexLock);
  write(0, 0x208, kBase + 64, 8);  // thread 0 holds a lock: not counted
  sync(0, SyncKind::MutexUnlock);
  EXPECT_TRUE(unsync_of(*d_).empty());
}

// The writer synchronized after its write (it reached a barrier), but the
// other thread did not since: nothing orders the two writes.
TEST_F(FalseSharingTest, WriteRacesWithAWriterThatReachedABarrierFirst) {
  make(64);
  sync(0, SyncKind::OmpImplicitTaskBegin);
  sync(1, SyncKind::OmpImplicitTaskBegin);
  write(0, 0x10, kBase + 0, 8);
  sync(0, SyncKind::OmpBarrierEnter);
  write(1, 0x20, kBase + 0, 8);  // before its own barrier: races with thread 0's write
  const Unsync expected = {{{kBase, 0x20, 1, 0}, {1, 0xff}}};
  EXPECT_EQ(unsync_of(*d_), expected);
  // Thread 2 writes only after leaving the barrier thread 1 reached too.
  sync(1, SyncKind::OmpBarrierEnter);
  sync(2, SyncKind::OmpBarrierEnter);
  sync(2, SyncKind::OmpBarrierLeave);
  write(2, 0x30, kBase + 0, 8);
  EXPECT_EQ(unsync_of(*d_), expected);
}

// A task that begins only after the master finished its part of the region
// (the master's implicit-task end is a release, but not one the task
// acquires): the master's writes in the region race with the task's.
TEST_F(FalseSharingTest, LateTaskRacesWithTheMastersWritesInTheRegion) {
  make(64);
  sync(0, SyncKind::OmpParallelBegin, 0x4000, 2);
  sync(0, SyncKind::OmpImplicitTaskBegin, 0x4000, 2);
  read(0, 0x10, kBase + 0, 8);
  write(0, 0x14, kBase + 0, 8);
  sync(0, SyncKind::OmpImplicitBarrier, 0x4000, 2);
  sync(1, SyncKind::OmpImplicitTaskBegin, 0x4000, 2);
  read(1, 0x10, kBase + 0, 8);
  write(1, 0x14, kBase + 0, 8);
  const Unsync expected = {{{kBase, 0x14, 1, 0}, {1, 0xff}}};
  EXPECT_EQ(unsync_of(*d_), expected);
  // A thread created after main's region: ordered after everything main
  // wrote before creating it, not after what it wrote since.
  sync(0, SyncKind::OmpParallelEnd);
  write(0, 0x18, kBase + 64, 8);
  sync(0, SyncKind::ThreadCreate, 0, 2);
  write(0, 0x18, kBase + 128, 8);
  sync(0, SyncKind::ThreadCreate, 0, 3);
  sync(2, SyncKind::ThreadStart, 0, 0);
  write(2, 0x20, kBase + 64, 8);   // ordered
  write(2, 0x20, kBase + 128, 8);  // races with main's write after creating it
  const Unsync more = {{{kBase, 0x14, 1, 0}, {1, 0xff}}, {{kBase + 128, 0x20, 2, 0}, {1, 0xff}}};
  EXPECT_EQ(unsync_of(*d_), more);
}

// A thread started after its creator wrote, a region's task after its
// master wrote: ordered. Two tasks of the region: not ordered.
TEST_F(FalseSharingTest, StartsAndImplicitTasksAcquireFromTheirCreator) {
  make(64);
  write(0, 0x10, kBase + 0, 64);  // main initializes the line
  sync(0, SyncKind::ThreadCreate, 0, 1);
  sync(1, SyncKind::ThreadStart, 0, 0);
  sync(0, SyncKind::OmpParallelBegin, 0x4000, 2);
  sync(0, SyncKind::OmpImplicitTaskBegin, 0x4000, 2);
  write(0, 0x14, kBase + 0, 8);  // the master's task: a write in a later epoch (stale line)
  sync(1, SyncKind::OmpImplicitTaskBegin, 0x4000, 2);
  write(1, 0x20, kBase + 8, 8);  // over main's initialization: ordered (and the line is stale)
  write(1, 0x20, kBase + 8, 8);
  write(0, 0x14, kBase + 8, 8);  // over thread 1's write in the region: unsynchronised
  const Unsync expected = {{{kBase, 0x14, 0, 1}, {1, 0xffull << 8}}};
  EXPECT_EQ(unsync_of(*d_), expected);
}

// Atomic writes are never unsynchronised, and release what was written
// before them.
TEST_F(FalseSharingTest, AtomicWritesAreNotUnsynchronisedAndRelease) {
  make(64);
  for (int i = 0; i < 4; ++i)
    for (uint32_t tid = 0; tid < 2; ++tid) {
      read(tid, 0x10, kBase + 0, 8);
      atomic_write(tid, 0x10, kBase + 0, 8);  // a fetch_add
    }
  EXPECT_TRUE(unsync_of(*d_).empty());
  // Thread 0 writes data then an atomic flag; thread 1's atomic
  // read-modify-write of the flag acquires it before thread 1 writes the data.
  write(0, 0x20, kBase + 128, 8);
  atomic_write(0, 0x24, kBase + 256, 4);
  atomic_write(1, 0x28, kBase + 256, 4);
  write(1, 0x2c, kBase + 128, 8);
  EXPECT_TRUE(unsync_of(*d_).empty());
}

// The definition, one line at a time, with std containers.
class FalseSharingOracle {
 public:
  explicit FalseSharingOracle(unsigned line_size) : line_size_(line_size) {}

  void apply(uint32_t tid, uint64_t pc, uint64_t addr, uint32_t size, bool is_write,
             bool is_atomic = false) {
    if (tid >= kTracked) return;
    std::map<uint64_t, uint64_t> masks;  // line -> bytes
    for (uint64_t a = addr; a < addr + size; ++a) {
      const uint64_t offset = a % line_size_;
      const uint64_t bit = line_size_ > 64 ? offset * 64 / line_size_ : offset;
      masks[a - offset] |= uint64_t{1} << bit;
    }
    for (const auto& [line, m] : masks) apply_line(tid, pc, line, m, is_write, is_atomic);
    if (is_atomic && is_write) ++epoch_[tid];  // a release
  }
  // The synchronization calls of the random sequences: a lock (acquire
  // all), an unlock (release), a barrier's arrival (release) and departure
  // (acquire all), a join of thread `other` (acquire from it).
  void sync(uint32_t tid, SyncKind kind, uint32_t other) {
    if (tid >= kTracked) return;
    switch (kind) {
      case SyncKind::MutexLock:
        ++locks_[tid];
        acquire_all(tid);
        break;
      case SyncKind::MutexUnlock:
        if (locks_[tid] > 0) --locks_[tid];
        ++epoch_[tid];
        break;
      case SyncKind::BarrierEnter:
        ++epoch_[tid];
        break;
      case SyncKind::BarrierLeave:
        acquire_all(tid);
        break;
      case SyncKind::ThreadJoin:
        acquire_from(tid, other);
        break;
      default:
        FAIL() << "not modeled";
    }
  }
  Lines lines;
  Pairs pairs;
  Unsync unsync;
  Written written;

 private:
  static constexpr uint32_t kTracked = FalseSharingDetector::kTrackedThreads;
  using Key = std::tuple<uint64_t, uint64_t, uint32_t, uint32_t>;
  struct Line {
    int writer = -1;
    std::set<uint32_t> valid;
    uint64_t written = 0;
    uint32_t epoch = 0;  // the writer's at its latest write
    bool stale = false;  // the writer wrote some of `written` in an earlier epoch
  };
  void acquire_all(uint32_t tid) {
    for (uint32_t w = 0; w < kTracked; ++w) seen_[tid][w] = std::max(seen_[tid][w], epoch_[w]);
  }
  void acquire_from(uint32_t tid, uint32_t from) {
    if (from >= kTracked || from == tid || epoch_[from] <= seen_[tid][from]) return;
    seen_[tid][from] = std::max(seen_[tid][from], epoch_[from]);
    for (uint32_t w = 0; w < kTracked; ++w)
      if (w != tid) seen_[tid][w] = std::max(seen_[tid][w], seen_[from][w]);
  }
  void apply_line(uint32_t tid, uint64_t pc, uint64_t line_address, uint64_t m, bool is_write,
                  bool is_atomic) {
    Line& l = lines_state_[line_address];
    const bool is_writer = l.writer == static_cast<int>(tid);
    if (is_atomic && l.writer >= 0 && !is_writer)
      acquire_from(tid, static_cast<uint32_t>(l.writer));
    const bool holds = is_writer || l.valid.count(tid);
    const bool transfer = !holds && l.writer >= 0;
    if (transfer) {
      const uint32_t w = static_cast<uint32_t>(l.writer);
      if (m & l.written) {
        pairs[{tid, w}][0] += 1;
      } else {
        pairs[{tid, w}][1] += 1;
        const Key key{line_address, pc, tid, w};
        LineValue& v = lines[key];
        v.false_events += 1;
        v.thread_bytes |= m;
        v.writer_bytes |= l.written;
        if (is_write) written[key] |= m;
        last_false_[tid] = is_write ? std::nullopt : std::optional<Key>(key);
      }
    }
    if (is_write && l.writer >= 0 && !is_writer) {
      const uint32_t w = static_cast<uint32_t>(l.writer);
      // The writer's epoch at its write is not past what this thread saw of it.
      if (!is_atomic && (m & l.written) && locks_[tid] == 0 && !l.stale &&
          seen_[tid][w] <= l.epoch) {
        std::array<uint64_t, 2>& u = unsync[{line_address, pc, tid, w}];
        u[0] += 1;
        u[1] |= m & l.written;
      }
      if (!transfer && last_false_[tid] && std::get<0>(*last_false_[tid]) == line_address) {
        written[*last_false_[tid]] |= m;
        last_false_[tid].reset();
      }
    }
    if (!is_write) {
      l.valid.insert(tid);
    } else {
      l.stale = is_writer && (l.stale || (l.epoch != epoch_[tid] && (l.written & ~m) != 0));
      l.written = is_writer ? l.written | m : m;
      l.writer = static_cast<int>(tid);
      l.valid = {tid};
      l.epoch = epoch_[tid];
    }
  }
  unsigned line_size_;
  std::map<uint64_t, Line> lines_state_;
  std::array<uint32_t, kTracked> epoch_{};
  std::array<uint32_t, kTracked> locks_{};
  std::array<std::array<uint32_t, kTracked>, kTracked> seen_{};
  std::array<std::optional<Key>, kTracked> last_false_{};
};

TEST_F(FalseSharingTest, FalseSharingMatchesOracleOnRandomSequences) {
  for (unsigned line_size : {8u, 32u, 64u, 128u, 256u}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      make(line_size, 64);
      FalseSharingOracle oracle(line_size);
      std::mt19937_64 rng(seed * 7919 + line_size);
      const uint64_t span = 4 * line_size;
      for (int i = 0; i < 20000; ++i) {
        const uint32_t tid = static_cast<uint32_t>(rng() % 52);  // some untracked
        if (rng() % 40 == 0) {
          // Locks held for a while, barriers, joins.
          const SyncKind kinds[] = {SyncKind::MutexLock, SyncKind::MutexUnlock,
                                    SyncKind::BarrierEnter, SyncKind::BarrierLeave,
                                    SyncKind::ThreadJoin};
          const SyncKind kind = kinds[rng() % 5];
          const auto other = static_cast<uint32_t>(rng() % 52);
          oracle.sync(tid, kind, other);
          d_->synchronize(t(tid), kind, 0, other);
          continue;
        }
        const uint32_t size = uint32_t{1} << (rng() % 5);  // 1..16 bytes
        const uint64_t addr = kBase + rng() % span;
        const bool is_write = rng() % 3 == 0;
        const bool is_atomic = rng() % 16 == 0;
        const uint64_t pc = 0x1000 + (rng() % 4) * 4;
        oracle.apply(tid, pc, addr, size, is_write, is_atomic);
        d_->access(t(tid), pc, addr, size, is_write, is_atomic);
      }
      ASSERT_EQ(pairs_of(*d_), oracle.pairs) << "line size " << line_size << " seed " << seed;
      ASSERT_EQ(lines_of(*d_), oracle.lines) << "line size " << line_size << " seed " << seed;
      ASSERT_EQ(unsync_of(*d_), oracle.unsync) << "line size " << line_size << " seed " << seed;
      ASSERT_EQ(written_of(*d_), oracle.written) << "line size " << line_size << " seed " << seed;
      EXPECT_FALSE(oracle.unsync.empty());
      EXPECT_EQ(d_->dropped(), 0u);
    }
  }
}

TEST_F(FalseSharingTest, FalseSharingConcurrentCountersInOneLine) {
  make(64);
  constexpr unsigned kThreads = 4;
  constexpr int kIterations = 100000;
  constexpr uint64_t kPc = 0x4242;
  alignas(64) static uint64_t counters[8];
  const uint64_t line = reinterpret_cast<uint64_t>(&counters[0]);
  std::vector<FalseSharingDetector::ThreadState*> states;
  for (unsigned i = 0; i < kThreads; ++i) states.push_back(d_->attach(i));
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      FalseSharingDetector::ThreadState& s = *states[i];
      const uint64_t addr = reinterpret_cast<uint64_t>(&counters[i]);
      start.arrive_and_wait();
      for (int k = 0; k < kIterations; ++k) {
        d_->access(s, kPc, addr, 8, false);
        d_->access(s, kPc, addr, 8, true);
      }
    });
  }
  for (auto& th : threads) th.join();
  uint64_t false_events = 0;
  uint64_t true_events = 0;
  d_->for_each_pair_total([&](const SharingPairTotals& p) {
    false_events += p.false_events;
    true_events += p.true_events;
    EXPECT_NE(p.thread, p.writer);
  });
  EXPECT_GT(false_events, 0u);
  EXPECT_EQ(true_events, 0u);
  uint64_t record_events = 0;
  d_->for_each_line_record([&](const LineSharingRecord& r) {
    EXPECT_EQ(r.pc, kPc);
    EXPECT_EQ(r.line_address, line);
    EXPECT_NE(r.thread, r.writer);
    EXPECT_EQ(r.thread_bytes, 0xffull << (8 * r.thread));
    EXPECT_EQ(r.writer_bytes, 0xffull << (8 * r.writer));
    record_events += r.false_events;
  });
  EXPECT_EQ(record_events, false_events);
  EXPECT_EQ(d_->dropped(), 0u);
}

}  // namespace
}  // namespace weft
