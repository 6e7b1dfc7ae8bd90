// Grouping of section instances from the synchronization logs: which
// segments of which threads form one dynamic instance, and when each
// thread's segment starts and ends.
#include <gtest/gtest.h>

#include <vector>

#include "profile/section_instances.h"

namespace weft {
namespace {

SyncRecord sync(uint32_t thread, SyncKind kind, uint64_t time, uint64_t pc = 0, uint64_t object = 0,
                int64_t arg0 = 0, int64_t arg1 = 0) {
  SyncRecord r;
  r.arg1 = arg1;
  r.thread = thread;
  r.kind = kind;
  r.time_ns = time;
  r.pc = pc;
  r.object = object;
  r.arg0 = arg0;
  return r;
}

// (thread, segment, start, end) of an instance.
std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>> members(const SectionInstance& i) {
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>> out;
  for (const SectionInstanceThread& t : i.threads)
    out.emplace_back(t.thread, t.segment, t.start_ns, t.end_ns);
  return out;
}

TEST(SectionInstances, PthreadBarrierArrivalsAndJoinedExitsFormInstances) {
  // Main (0) creates 1 and 2, which meet twice at barrier 0xb (waited at pc
  // 0x100) and exit; main joins them at pc 0x200.
  const std::vector<SyncRecord> log = {
      sync(0, SyncKind::ThreadStart, 0),
      sync(0, SyncKind::ThreadCreate, 1, 0x50, 0, 1),
      sync(0, SyncKind::ThreadCreate, 2, 0x50, 0, 2),
      sync(0, SyncKind::ThreadJoin, 90, 0x200, 0, 1),
      sync(0, SyncKind::ThreadJoin, 91, 0x200, 0, 2),
      sync(1, SyncKind::ThreadStart, 10),
      sync(1, SyncKind::BarrierEnter, 20, 0x100, 0xb),
      sync(1, SyncKind::BarrierLeave, 30, 0x100, 0xb),
      sync(1, SyncKind::BarrierEnter, 40, 0x100, 0xb),
      sync(1, SyncKind::BarrierLeave, 50, 0x100, 0xb),
      sync(1, SyncKind::ThreadExit, 60),
      sync(2, SyncKind::ThreadStart, 12),
      sync(2, SyncKind::BarrierEnter, 29, 0x100, 0xb),
      sync(2, SyncKind::BarrierLeave, 31, 0x100, 0xb),
      sync(2, SyncKind::BarrierEnter, 49, 0x100, 0xb),
      sync(2, SyncKind::BarrierLeave, 51, 0x100, 0xb),
      sync(2, SyncKind::ThreadExit, 55),
  };
  const std::vector<SectionInstance> instances = find_section_instances(log);
  ASSERT_EQ(instances.size(), 3u);
  using M = std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>>;
  EXPECT_EQ(members(instances[0]), (M{{1, 0, 10, 20}, {2, 0, 12, 29}}));
  EXPECT_EQ(members(instances[1]), (M{{1, 1, 30, 40}, {2, 1, 31, 49}}));
  EXPECT_EQ(instances[1].site, 0x100u);
  // The exits: segment 2 of each, after the second barrier; named by the
  // thread-exit site (resolved to the join when the profile is written).
  EXPECT_EQ(members(instances[2]), (M{{1, 2, 50, 60}, {2, 2, 51, 55}}));
  EXPECT_EQ(instances[2].site, kThreadExitSectionSite);
}

TEST(SectionInstances, OpenMpBarriersGroupByOutlinedBodyAndOrdinal) {
  // Two threads run body 0xf twice (the region is entered twice); each run
  // has an explicit barrier and the implicit one. Thread 0 also begins the
  // regions (a singleton segment, not an instance).
  std::vector<SyncRecord> log;
  for (uint32_t t : {0u, 1u}) {
    uint64_t time = 100 * t;
    if (t == 0) log.push_back(sync(0, SyncKind::ThreadStart, time));
    for (int run = 0; run < 2; ++run) {
      if (t == 0) log.push_back(sync(0, SyncKind::OmpParallelBegin, time + 1, 0x300, 0xf, 2));
      log.push_back(sync(t, SyncKind::OmpImplicitTaskBegin, time + 2, 0, 0xf, 2));
      log.push_back(sync(t, SyncKind::OmpBarrierEnter, time + 5 + t, 0x310, 0));
      log.push_back(sync(t, SyncKind::OmpBarrierLeave, time + 7, 0x310, 0));
      log.push_back(sync(t, SyncKind::OmpImplicitBarrier, time + 9 + t, 0x320, 0xf));
      if (t == 0) log.push_back(sync(0, SyncKind::OmpParallelEnd, time + 10, 0x300, 0xf));
      time += 10;
    }
  }
  const std::vector<SectionInstance> instances = find_section_instances(log);
  ASSERT_EQ(instances.size(), 4u);
  using M = std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>>;
  // Thread 0's segments: 0 = up to the first region's begin, 1 = explicit
  // barrier, 2 = implicit barrier, 3 = second begin, ...
  EXPECT_EQ(members(instances[0]), (M{{0, 1, 2, 5}, {1, 0, 102, 106}}));
  EXPECT_EQ(instances[0].site, 0x310u);
  EXPECT_EQ(members(instances[1]), (M{{0, 2, 7, 9}, {1, 1, 107, 110}}));
  EXPECT_EQ(instances[1].site, 0x320u);
  EXPECT_EQ(members(instances[2]), (M{{0, 4, 12, 15}, {1, 2, 112, 116}}));
  EXPECT_EQ(members(instances[3]), (M{{0, 5, 17, 19}, {1, 3, 117, 120}}));
}

TEST(SectionInstances, SingleThreadSegmentsAreNoInstances) {
  const std::vector<SyncRecord> log = {
      sync(0, SyncKind::ThreadStart, 0),
      sync(0, SyncKind::BarrierEnter, 5, 0x100, 0xb),
      sync(0, SyncKind::BarrierLeave, 6, 0x100, 0xb),
  };
  EXPECT_TRUE(find_section_instances(log).empty());
}

// A spin flag is a team's barrier when two threads waited for one of its
// releases: then every release from 1 on is an instance, also the one where
// two waiters were seen first (the run could not know before its end). Release 0 (writes before the
// flag was learned) and the waits on a flag only one thread waits for (a neighbour flag) close
// segments but no section; the waits are waiting time.
TEST(SectionInstances, SpinFlagsAreTeamsOrPointToPointFromAllTheirRecords) {
  const uint64_t barrier = 0xb0, neighbour = 0xc0;
  using K = SyncKind;
  const std::vector<SyncRecord> log = {
      // Thread 0: learns the barrier flag (release 0), waits for release 1,
      // then writes release 2.
      sync(0, K::ThreadStart, 0),
      sync(0, K::SpinBarrier, 20, 0x100, barrier, 10, 0),
      sync(0, K::SpinBarrier, 40, 0x100, barrier, 30, 1),
      sync(0, K::SpinRelease, 60, 0x108, barrier, 60, 2),
      sync(0, K::ThreadExit, 70),
      // Thread 1: releases 1, waits for release 2 after a neighbour wait.
      sync(1, K::ThreadStart, 0),
      sync(1, K::SpinRelease, 35, 0x108, barrier, 35, 1),
      sync(1, K::SpinBarrier, 45, 0x200, neighbour, 41, 1),
      sync(1, K::SpinBarrier, 62, 0x100, barrier, 50, 2),
      sync(1, K::ThreadExit, 70),
      // Thread 2: releases the neighbour flag, waits for release 2 as well.
      sync(2, K::ThreadStart, 0),
      sync(2, K::SpinBarrier, 36, 0x100, barrier, 36, 1),
      sync(2, K::SpinRelease, 41, 0x208, neighbour, 41, 1),
      sync(2, K::SpinBarrier, 61, 0x100, barrier, 55, 2),
      sync(2, K::ThreadExit, 70),
  };
  const std::vector<SectionInstance> instances = find_section_instances(log);
  ASSERT_EQ(instances.size(), 2u);  // releases 1 and 2; the exits are joined by nobody
  // Release 1: thread 0's part spans segments 0..1 (release 0 closed a
  // segment, not the section); thread 1's ends at its release.
  using M = std::vector<std::tuple<uint32_t, uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>>;
  auto parts = [](const SectionInstance& i) {
    M out;
    for (const SectionInstanceThread& t : i.threads)
      out.emplace_back(t.thread, t.first_segment, t.segment, t.start_ns, t.end_ns, t.waited_ns);
    return out;
  };
  EXPECT_EQ(parts(instances[0]),
            (M{{0, 0, 1, 0, 30, 10}, {1, 0, 0, 0, 35, 0}, {2, 0, 0, 0, 36, 0}}));
  // Release 2: thread 1's part spans its neighbour wait (4 ns waiting),
  // thread 2's its neighbour release.
  EXPECT_EQ(parts(instances[1]),
            (M{{0, 2, 2, 40, 60, 0}, {1, 1, 2, 35, 50, 4}, {2, 1, 2, 36, 55, 0}}));
  EXPECT_EQ(instances[1].site, 0x100u);
}

}  // namespace
}  // namespace weft
