// Recognition of mutex + condition-variable barriers (docs/metrics.md,
// "Parallel section") on synthetic synchronization sequences: a
// CaptureSession fed lock, wait and release events by hand, in an order the
// program's threads could produce them, and the section instances the
// profile builder forms from its logs.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "profile/section_instances.h"
#include "sources/capture/capture_session.h"

namespace weft {
namespace {

constexpr uint64_t kMutex = 0x6000;
constexpr uint64_t kCv = 0x6040;
constexpr uint64_t kLockPc = 0x401000;  // the BARRIER line: lock ...
constexpr uint64_t kWaitPc = 0x401010;  // ... wait ...
constexpr uint64_t kCastPc = 0x401020;  // ... broadcast or signal ...
constexpr uint64_t kUnlockPc = 0x401030;

class CondBarrier : public ::testing::Test {
 protected:
  CondBarrier() {
    CaptureConfig config;
    config.max_threads = 8;
    AnalysisSet analyses;
    if (AnalysisSet::parse("comm,imbalance", analyses)) config.analyses = analyses;
    session = CaptureSession::create(config);
  }

  ThreadContext* start(int32_t parent) {
    const uint32_t tid = session->reserve_thread_id();
    ThreadContext* t = session->start_thread(tid, parent, 0, 0, ++now);
    threads.push_back(t);
    return t;
  }
  void sync(ThreadContext* t, SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0 = 0) {
    session->record_sync(*t, kind, ++now, pc, object, arg0);
  }
  void lock(ThreadContext* t) { sync(t, SyncKind::MutexLock, kLockPc, kMutex); }
  void unlock(ThreadContext* t) { sync(t, SyncKind::MutexUnlock, kUnlockPc, kMutex); }
  void enter(ThreadContext* t) {
    sync(t, SyncKind::CondWaitEnter, kWaitPc, kCv, static_cast<int64_t>(kMutex));
  }
  void leave(ThreadContext* t) { sync(t, SyncKind::CondWaitLeave, kWaitPc, kCv); }
  void broadcast(ThreadContext* t) { sync(t, SyncKind::CondBroadcast, kCastPc, kCv); }
  // A memory access as the runtime feeds it: the spin-wait watch looks
  // first, then the communication analyzer counts it (two steps another
  // thread's access may fall between).
  void look(ThreadContext* t, uint64_t pc, uint64_t addr, bool is_write) {
    session->watch_access(*t, pc, addr, is_write);
  }
  void count(ThreadContext* t, uint64_t pc, uint64_t addr, bool is_write) {
    CommunicationAnalyzer::ThreadState* s = t->comm.load();
    ASSERT_NE(s, nullptr);
    if (is_write)
      session->communication().write(*s, pc, addr, 4);
    else
      session->communication().read(*s, pc, addr, 4);
  }
  void access(ThreadContext* t, uint64_t pc, uint64_t addr, bool is_write) {
    look(t, pc, addr, is_write);
    count(t, pc, addr, is_write);
  }
  void signal(ThreadContext* t) { sync(t, SyncKind::CondSignal, kCastPc, kCv); }

  // Every thread's log, in thread order.
  std::vector<SyncRecord> log() const {
    std::vector<SyncRecord> all;
    for (const ThreadContext* t : threads)
      all.insert(all.end(), t->sync.records, t->sync.records + t->sync.size);
    return all;
  }
  std::vector<SyncRecord> of_kind(SyncKind kind) const {
    std::vector<SyncRecord> out;
    for (const SyncRecord& r : log())
      if (r.kind == kind) out.push_back(r);
    return out;
  }
  // The condition-variable barrier instances: (thread, segment, start, end)
  // per member, and the site.
  using Members = std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>>;
  std::vector<std::pair<Members, uint64_t>> barrier_instances() const {
    std::vector<std::pair<Members, uint64_t>> out;
    for (const SectionInstance& i : find_section_instances(log())) {
      if (i.site == kThreadExitSectionSite) continue;
      Members m;
      for (const SectionInstanceThread& t : i.threads)
        m.emplace_back(t.thread, t.segment, t.start_ns, t.end_ns);
      out.emplace_back(m, i.site);
    }
    return out;
  }

  CaptureSession* session = nullptr;
  std::vector<ThreadContext*> threads;
  uint64_t now = 0;
};

// SPLASH-2's macro with a generation loop, the main thread a member of the
// team: three threads, two episodes; in the first one thread 1 wakes
// spuriously and waits again (one part, not two).
TEST_F(CondBarrier, GenerationLoopEpisodesCountEachThreadOnce) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);  // now 2
  ThreadContext* t2 = start(0);  // now 3
  // Episode 1: 1 and 2 wait, 1 wakes spuriously and waits again, 0 releases.
  lock(t1);       // 4: arrival of 1
  enter(t1);      // 5
  lock(t2);       // 6: arrival of 2
  enter(t2);      // 7
  leave(t1);      // 8 spurious
  enter(t1);      // 9
  lock(t0);       // 10: arrival of 0
  broadcast(t0);  // 11: 0 resumes
  unlock(t0);     // 12
  leave(t2);      // 13: 2 resumes
  unlock(t2);     // 14
  leave(t1);      // 15: 1 resumes
  unlock(t1);     // 16
  // Episode 2: 0 and 1 wait, 2 releases.
  lock(t0);       // 17
  enter(t0);      // 18
  lock(t1);       // 19
  enter(t1);      // 20
  lock(t2);       // 21
  broadcast(t2);  // 22
  unlock(t2);     // 23
  leave(t0);      // 24
  unlock(t0);     // 25
  leave(t1);      // 26
  unlock(t1);     // 27

  const std::vector<SyncRecord> parts = of_kind(SyncKind::CondBarrier);
  ASSERT_EQ(parts.size(), 6u);
  for (const SyncRecord& r : parts) {
    EXPECT_EQ(r.pc, kLockPc);
    EXPECT_EQ(r.object, kCv);
  }
  const auto instances = barrier_instances();
  ASSERT_EQ(instances.size(), 2u);
  // Segments start at the thread's start, then where it resumed (its unlock
  // after its part); they end at its arrival (the lock before its first
  // wait, or before the release).
  EXPECT_EQ(instances[0].first, (Members{{0, 0, 1, 10}, {1, 0, 2, 4}, {2, 0, 3, 6}}));
  EXPECT_EQ(instances[1].first, (Members{{0, 1, 12, 17}, {1, 1, 16, 19}, {2, 1, 14, 21}}));
  EXPECT_EQ(of_kind(SyncKind::CondBarrierLeave).size(), 6u);
  EXPECT_EQ(instances[0].second, kLockPc);
  // The releases carry their episode.
  const std::vector<SyncRecord> releases = of_kind(SyncKind::CondBroadcast);
  ASSERT_EQ(releases.size(), 2u);
  EXPECT_EQ(releases[0].arg0, 1);
  EXPECT_EQ(releases[1].arg0, 2);
}

// Without a generation loop, and with the main thread blocked in a join: the
// team is the two workers.
TEST_F(CondBarrier, ThreadsBlockedInAJoinAreNotPartOfTheTeam) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  ThreadContext* t3 = start(0);
  sync(t0, SyncKind::ThreadJoinEnter, 0x400100, 0, 1);
  lock(t1);
  enter(t1);
  lock(t3);
  enter(t3);
  lock(t2);
  broadcast(t2);
  unlock(t2);
  leave(t1);
  unlock(t1);
  leave(t3);
  unlock(t3);
  const auto instances = barrier_instances();
  ASSERT_EQ(instances.size(), 1u);
  ASSERT_EQ(instances[0].first.size(), 3u);
  EXPECT_EQ(std::get<0>(instances[0].first[0]), 1u);
  EXPECT_EQ(std::get<0>(instances[0].first[1]), 2u);
  EXPECT_EQ(std::get<0>(instances[0].first[2]), 3u);
}

// The creator between its last create and its join (descheduled there, as
// under Valgrind) is not part of the team; a created thread that has not
// started yet is, and has not arrived.
TEST_F(CondBarrier, ForkingCreatorsAreOutAndUnstartedThreadsIn) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  ThreadContext* t3 = start(0);
  sync(t0, SyncKind::ThreadCreate, 0x400050, 0, 4);  // thread 4: not started
  sync(t0, SyncKind::ThreadCreate, 0x400050, 0, 3);
  lock(t1);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t3);
  broadcast(t3);  // thread 4 has not arrived: no episode, the condvar is refused
  unlock(t3);
  leave(t1);
  leave(t2);
  EXPECT_TRUE(of_kind(SyncKind::CondBarrier).empty());
}

TEST_F(CondBarrier, ACreatorAboutToJoinIsNotWaitedFor) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  ThreadContext* t3 = start(0);
  sync(t0, SyncKind::ThreadCreate, 0x400050, 0, 3);
  lock(t1);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t3);
  broadcast(t3);
  unlock(t3);
  leave(t1);
  unlock(t1);
  leave(t2);
  unlock(t2);
  EXPECT_EQ(of_kind(SyncKind::CondBarrier).size(), 3u);
  EXPECT_EQ(barrier_instances().size(), 1u);
}

// With one waiter, a barrier of two looks like a hand-over: never an
// episode, and the condvar is refused.
TEST_F(CondBarrier, TwoThreadsAreNeverABarrier) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  for (int episode = 0; episode < 2; ++episode) {
    lock(t1);
    enter(t1);
    lock(t0);
    broadcast(t0);
    unlock(t0);
    leave(t1);
    unlock(t1);
  }
  EXPECT_TRUE(of_kind(SyncKind::CondBarrier).empty());
  EXPECT_TRUE(barrier_instances().empty());
}

// A release while a live thread does something else is no episode, and
// refuses the condvar: an earlier episode on it forms no instance either.
TEST_F(CondBarrier, AReleaseWithoutTheWholeTeamRefusesTheCondvar) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  // Looks like an episode: 1 and 2 wait, 0 releases.
  lock(t1);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t0);
  broadcast(t0);
  unlock(t0);
  leave(t1);
  unlock(t1);
  leave(t2);
  unlock(t2);
  ASSERT_EQ(of_kind(SyncKind::CondBarrier).size(), 3u);
  // Then 1 waits while 2 works: 0's release is a hand-over, not a barrier.
  lock(t1);
  enter(t1);
  lock(t0);
  signal(t0);
  unlock(t0);
  leave(t1);
  unlock(t1);
  EXPECT_EQ(of_kind(SyncKind::CondBarrier).size(), 3u);
  const std::vector<SyncRecord> releases = of_kind(SyncKind::CondSignal);
  ASSERT_EQ(releases.size(), 1u);
  EXPECT_EQ(releases[0].arg0, 0);
  EXPECT_TRUE(barrier_instances().empty());
  // And the condvar stays refused, even for a release that looks right.
  lock(t1);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t0);
  broadcast(t0);
  unlock(t0);
  leave(t1);
  leave(t2);
  EXPECT_EQ(of_kind(SyncKind::CondBarrier).size(), 3u);
}

// A producer/consumer queue: the consumer waits, the producer signals, often
// with nobody waiting; the main thread joins. Never a barrier.
TEST_F(CondBarrier, QueueHandOversAreNotBarriers) {
  ThreadContext* t0 = start(-1);
  ThreadContext* producer = start(0);
  ThreadContext* consumer = start(0);
  sync(t0, SyncKind::ThreadJoinEnter, 0x400100, 0, 1);
  for (int item = 0; item < 5; ++item) {
    lock(producer);
    signal(producer);  // nobody waits yet
    unlock(producer);
  }
  for (int item = 0; item < 3; ++item) {
    lock(consumer);
    enter(consumer);
    lock(producer);
    signal(producer);
    unlock(producer);
    leave(consumer);
    unlock(consumer);
  }
  EXPECT_TRUE(of_kind(SyncKind::CondBarrier).empty());
  EXPECT_TRUE(barrier_instances().empty());
}

// A queue's consumer whose wake-ups the other consumer steals re-reads
// the queue's size once per wait, here 6 times, each read after a write of
// the producer's: a wait loop that blocks between its tests, not a spin
// loop on a flag (docs/metrics.md, "Spin waits"). Before, the fifth re-read
// made it a spin and the size a learned flag, and under load a consumer's
// section appeared at the queue (examples/queue_condvar_pthreads.c).
constexpr uint64_t kSize = 0x7000, kHead = 0x7004, kTestPc = 0x401100, kPushPc = 0x401200;

TEST_F(CondBarrier, AWaitLoopThatBlocksBetweenItsTestsIsNoSpin) {
  ThreadContext* t0 = start(-1);
  ThreadContext* producer = start(0);
  ThreadContext* consumer = start(0);
  ThreadContext* thief = start(0);
  sync(t0, SyncKind::ThreadJoinEnter, 0x400100, 0, 1);
  lock(consumer);
  for (int wake = 0; wake < 6; ++wake) {
    access(consumer, kTestPc, kSize, false);  // while (queue.size == 0)
    enter(consumer);                          //   pthread_cond_wait
    lock(producer);
    access(producer, kPushPc, kSize, true);  // an item
    signal(producer);
    unlock(producer);
    lock(thief);
    access(thief, kTestPc, kSize, false);  // the other consumer takes it first
    access(thief, kPushPc, kSize, true);
    unlock(thief);
    leave(consumer);
  }
  access(consumer, kTestPc, kSize, false);
  access(consumer, kPushPc, kHead, true);  // it pops one at last: the head first
  access(consumer, kPushPc, kSize, true);
  unlock(consumer);
  EXPECT_TRUE(of_kind(SyncKind::SpinBarrier).empty());
  EXPECT_TRUE(of_kind(SyncKind::SpinRelease).empty());
  EXPECT_TRUE(barrier_instances().empty());
}

// A spinning read looks at the communication shadow before the analyzer
// counts it, and the two are not one step: here the release's hook runs
// between them (its store after), so the read loads the old value but its
// count takes the release; the next read loads the new value and finds the
// write read already. The change of writer since the previous read is the
// release: the flag is learned in this first episode. Before, the waiter
// left without learning it, and md_cells_spin_barrier_pthreads lost its
// first episode in about one run of 300 under load.
TEST_F(CondBarrier, AReleaseBetweenASpinsLookAndItsCountTeachesTheFlag) {
  constexpr uint64_t kFlag = 0x7100, kWork = 0x7200;
  constexpr uint64_t kSpinPc = 0x401300, kStorePc = 0x401310, kWorkPc = 0x401320;
  ThreadContext* waiter = start(-1);
  ThreadContext* releaser = start(0);
  for (int spin = 0; spin < 10; ++spin)
    access(waiter, kSpinPc, kFlag, false);  // while (flag != sense)
  look(waiter, kSpinPc, kFlag, false);      // loads the old value, then ...
  look(releaser, kStorePc, kFlag, true);    // ... the releaser's hook, before its store
  count(releaser, kStorePc, kFlag, true);
  count(waiter, kSpinPc, kFlag, false);   // ... the waiter's count takes the release
  access(waiter, kSpinPc, kFlag, false);  // the new value: the loop ends
  access(waiter, kWorkPc, kWork, true);   // the next step's work

  const std::vector<SyncRecord> waits = of_kind(SyncKind::SpinBarrier);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].thread, waiter->tid);
  EXPECT_EQ(waits[0].object, kFlag);
  EXPECT_EQ(waits[0].arg1, 0);  // release 0: the writes before the flag was learned
  // The releaser's write came before the flag was learned: not logged.
  EXPECT_TRUE(of_kind(SyncKind::SpinRelease).empty());
}

// The releaser wakes the waiters with one signal each, in one lock hold:
// one episode, and the later signals belong to it.
TEST_F(CondBarrier, SignalsCoveringEveryWaiterAreOneRelease) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  lock(t1);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t0);
  signal(t0);
  signal(t0);
  unlock(t0);
  leave(t1);
  unlock(t1);
  leave(t2);
  unlock(t2);
  const std::vector<SyncRecord> releases = of_kind(SyncKind::CondSignal);
  ASSERT_EQ(releases.size(), 2u);
  EXPECT_EQ(releases[0].arg0, 1);
  EXPECT_EQ(releases[1].arg0, 1);
  const auto instances = barrier_instances();
  ASSERT_EQ(instances.size(), 1u);
  EXPECT_EQ(instances[0].first.size(), 3u);
}

// A hand-written barrier marked with <weft/sections.h> (recorded as a
// pthread barrier) is that barrier only: its condition variable adds none.
TEST_F(CondBarrier, MarkedBarriersAreNotCountedTwice) {
  constexpr uint64_t kTeam = 0x7000;
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  sync(t1, SyncKind::BarrierEnter, 0x400200, kTeam);
  lock(t1);
  enter(t1);
  sync(t0, SyncKind::BarrierEnter, 0x400200, kTeam);
  lock(t0);
  broadcast(t0);
  unlock(t0);
  sync(t0, SyncKind::BarrierLeave, 0x400210, kTeam);
  leave(t1);
  unlock(t1);
  sync(t1, SyncKind::BarrierLeave, 0x400210, kTeam);
  EXPECT_TRUE(of_kind(SyncKind::CondBarrier).empty());
  const auto instances = barrier_instances();
  ASSERT_EQ(instances.size(), 1u);
  EXPECT_EQ(instances[0].second, 0x400200u);
}

// The imbalance analysis closes one segment per part, so its numbering
// matches the instances' (segment k ends at the k-th closing record).
TEST_F(CondBarrier, EachPartClosesOneImbalanceSegment) {
  ThreadContext* t0 = start(-1);
  ThreadContext* t1 = start(0);
  ThreadContext* t2 = start(0);
  for (int episode = 0; episode < 3; ++episode) {
    for (ThreadContext* t : {t1, t2}) {
      lock(t);
      enter(t);
    }
    lock(t0);
    broadcast(t0);
    unlock(t0);
    for (ThreadContext* t : {t1, t2}) {
      leave(t);
      unlock(t);
    }
  }
  const auto instances = barrier_instances();
  ASSERT_EQ(instances.size(), 3u);
  for (uint32_t k = 0; k < 3; ++k)
    for (const auto& member : instances[k].first) EXPECT_EQ(std::get<1>(member), k);
  ASSERT_NE(session->imbalance(), nullptr);
  // Detached from its arrival at a known barrier mutex to its unlock,
  // attached again after it.
  lock(t1);
  EXPECT_EQ(t1->imbalance.load(), nullptr);
  enter(t1);
  lock(t2);
  enter(t2);
  lock(t0);
  broadcast(t0);
  EXPECT_EQ(t0->imbalance.load(), nullptr);
  unlock(t0);
  EXPECT_NE(t0->imbalance.load(), nullptr);
  leave(t1);
  EXPECT_EQ(t1->imbalance.load(), nullptr);
  unlock(t1);
  leave(t2);
  unlock(t2);
  EXPECT_NE(t1->imbalance.load(), nullptr);
  EXPECT_NE(t2->imbalance.load(), nullptr);
  // A critical section on the barrier's mutex that is no arrival.
  lock(t2);
  EXPECT_EQ(t2->imbalance.load(), nullptr);
  unlock(t2);
  EXPECT_NE(t2->imbalance.load(), nullptr);
}

}  // namespace
}  // namespace weft
