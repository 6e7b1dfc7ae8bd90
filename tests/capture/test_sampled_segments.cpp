// Which section instances the sampling analyses analyze (SampledSegments,
// docs/metrics.md "Sampled section instances"): the members of a team agree
// whatever else each one did and whenever each saw the start, every key's
// first passes are analyzed, and the sample is one pass of each block of N
// with a warm-up segment before each counted one.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sources/capture/sampled_segments.h"

namespace weft {
namespace {

using Decision = SampledSegments::Decision;
constexpr uint64_t kBarrier = 0x7f0000001000;

// The decisions for `n` passes through one barrier.
std::vector<Decision> barrier_passes(SampledSegments& s, SampledSegments::ThreadState& t, int n,
                                     uint32_t rate, bool warm_up) {
  std::vector<Decision> out;
  for (int i = 0; i < n; ++i)
    out.push_back(
        SampledSegments::decide(s.begin(t, SyncKind::BarrierLeave, kBarrier, 0), rate, warm_up));
  return out;
}

// The documented blocks of a key's passes at `rate` N, up to `n`: N each
// over the first 128N passes, then 64 blocks of 2N up to 256N, 64 of 4N
// up to 512N, and so on.
std::vector<size_t> block_edges(size_t n, size_t rate) {
  std::vector<size_t> edges{0};
  size_t size = rate, grows_at = 128 * rate;
  while (edges.back() < n) {
    if (edges.back() == grows_at) {
      size *= 2;
      grows_at *= 2;
    }
    edges.push_back(edges.back() + size);
  }
  return edges;
}

// A run twice as long analyzes a fixed number of instances more.
TEST(SampledSegments, BlocksGrowAsAKeysPassesDouble) {
  // Rate 4: blocks of 4 up to 512, of 8 up to 1024, of 16 up to 2048.
  const std::vector<size_t> four = block_edges(2100, 4);
  EXPECT_EQ(four.size(), 259u);  // 0 to 2048 at 0-256, then 2080 and 2112
  EXPECT_EQ(four[128], 512u);
  EXPECT_EQ(four[129], 520u);
  EXPECT_EQ(four[192], 1024u);
  EXPECT_EQ(four[193], 1040u);
  EXPECT_EQ(four[256], 2048u);
  EXPECT_EQ(four[257], 2080u);
  for (const size_t rate : {3, 4, 8}) {
    const std::vector<size_t> edges = block_edges(1000000, rate);
    for (size_t i = 0; i + 1 < edges.size(); ++i)
      for (size_t count : {edges[i], edges[i + 1] - 1}) {
        const SampledSegments::Block b = SampledSegments::block_of(count, rate);
        EXPECT_EQ(b.first, edges[i]) << rate << " " << count;
        EXPECT_EQ(b.first + b.size, edges[i + 1]) << rate << " " << count;
      }
  }
}

// Decisions from pass `from` on (every earlier one analyzed whole): each
// block (block_edges; its part from `from` on) has exactly one counted
// pass, which stands for all of the block's; with warm_up, the pass before
// each counted one is analyzed without counting, and nothing else is.
void expect_one_counted_per_block(const std::vector<Decision>& d, size_t from, uint32_t rate,
                                  bool warm_up) {
  for (size_t i = 0; i < from; ++i) EXPECT_TRUE(d[i] == Decision{}) << i;
  const std::vector<size_t> edges = block_edges(d.size(), rate);
  for (size_t b = 0; b + 1 < edges.size(); ++b) {
    const size_t block_end = edges[b + 1];
    if (block_end <= from) continue;
    if (block_end > d.size()) break;  // a last block the run did not finish
    const size_t first = std::max(edges[b], from);
    size_t counted = 0;
    for (size_t i = first; i < block_end; ++i) {
      if (d[i].weight != 0) {
        ++counted;
        EXPECT_TRUE(d[i].analyzed) << i;
        EXPECT_EQ(d[i].weight, block_end - first) << i;
      } else {
        const bool before_counted = i + 1 < d.size() && d[i + 1].weight != 0;
        EXPECT_EQ(d[i].analyzed, warm_up && before_counted) << i;
      }
    }
    EXPECT_EQ(counted, 1u) << "the block from " << first;
  }
}

// The main thread begins segments its workers never do (creating them);
// the barrier's passes decide alike in every member.
TEST(SampledSegments, TeamMembersAgreeWhateverElseTheyBegan) {
  for (bool warm_up : {false, true}) {
    SampledSegments s(0);
    s.on_close(0);
    SampledSegments::ThreadState main_thread, worker;
    for (int i = 0; i < 3; ++i) s.begin(main_thread, SyncKind::ThreadCreate, 0, 0);
    s.begin(worker, SyncKind::ThreadStart, 0, 0);
    const std::vector<Decision> da = barrier_passes(s, main_thread, 2000, 4, warm_up);
    EXPECT_TRUE(da == barrier_passes(s, worker, 2000, 4, warm_up));
    // A key's first kFirstPasses passes are analyzed whole; then each
    // block of 4 counts one pass 4 times.
    expect_one_counted_per_block(da, SampledSegments::kFirstPasses, 4, warm_up);
  }
}

// Before any thread ran after_blocks basic blocks, every segment is
// analyzed, at weight 1: a short program is analyzed whole.
TEST(SampledSegments, NothingIsSampledBeforeTheWorkThreshold) {
  SampledSegments s(1000);
  SampledSegments::ThreadState t;
  s.on_close(999);
  for (const Decision& d : barrier_passes(s, t, 200, 8, true)) EXPECT_TRUE(d == Decision{});
  s.on_close(1000);
  // Sampling begins kStartMargin passes after the one that saw the start
  // (pass 200: at 202), the block 200-207 counting one of its last six.
  const std::vector<Decision> after = barrier_passes(s, t, 400, 8, false);
  std::vector<Decision> all(200);
  all.insert(all.end(), after.begin(), after.end());
  expect_one_counted_per_block(all, 202, 8, false);
}

// Members that see the start at different passes (a worker leaves the
// barrier before the thread that crossed the threshold closed its segment)
// agree on every pass, whichever sees it first and wherever it falls.
TEST(SampledSegments, MembersSeeingTheStartAPassApartAgree) {
  for (int before = 0; before < 20; ++before)
    for (bool ahead_first : {false, true}) {
      SampledSegments s(0);
      SampledSegments::ThreadState behind, ahead;
      barrier_passes(s, behind, before, 8, false);
      barrier_passes(s, ahead, before + 1, 8, false);
      s.on_close(0);
      std::vector<Decision> db, da;
      if (ahead_first) da = barrier_passes(s, ahead, 300, 8, true);
      db = barrier_passes(s, behind, 301, 8, true);
      if (!ahead_first) da = barrier_passes(s, ahead, 300, 8, true);
      for (size_t i = 0; i < da.size(); ++i)
        EXPECT_TRUE(db[i + 1] == da[i]) << before << " " << ahead_first << " " << i;
      // The first to see the start fixed it kStartMargin past its own pass,
      // at kFirstPasses at least; past 8 the start may fall inside a block
      // of 8, whose rest then counts one pass for all.
      const size_t from =
          std::max<size_t>(before + (ahead_first ? 1 : 0) + SampledSegments::kStartMargin,
                           SampledSegments::kFirstPasses);
      std::vector<Decision> all(before);
      all.insert(all.end(), db.begin(), db.end());
      expect_one_counted_per_block(all, from, 8, true);
    }
}

// The segments a thread begins by creating or joining threads are one-off
// (the main thread's own share of the work after its last creation): none
// is sampled, however many threads it creates.
TEST(SampledSegments, ThreadCreationsAndJoinsAreNeverSampled) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState main_thread;
  for (SyncKind kind : {SyncKind::ThreadCreate, SyncKind::ThreadJoin})
    for (int64_t tid = 1; tid <= 64; ++tid)
      for (bool warm_up : {false, true})
        EXPECT_TRUE(SampledSegments::decide(s.begin(main_thread, kind, 0, tid), 8, warm_up) ==
                    Decision{})
            << static_cast<int>(kind) << " " << tid;
  // Its barrier passes are sampled as every member's are.
  SampledSegments::ThreadState worker;
  s.begin(worker, SyncKind::ThreadStart, 0, 0);
  const std::vector<Decision> da = barrier_passes(s, main_thread, 200, 8, true);
  EXPECT_TRUE(da == barrier_passes(s, worker, 200, 8, true));
  expect_one_counted_per_block(da, SampledSegments::kFirstPasses, 8, true);
}

// The serial code after a parallel region begins at the region's end, as
// the program's last phase does (stencil3d_omp's checksum over the whole
// grid, dropped whole from the sample of the region's ends): never sampled,
// while the region's implicit tasks are.
TEST(SampledSegments, SerialCodeAfterARegionIsNeverSampled) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState main_thread;
  constexpr uint64_t kOutlined = 0x401000;
  std::vector<Decision> tasks;
  for (int region = 0; region < 300; ++region) {
    tasks.push_back(SampledSegments::decide(
        s.begin(main_thread, SyncKind::OmpImplicitTaskBegin, kOutlined, 0), 8, true));
    EXPECT_TRUE(SampledSegments::decide(
                    s.begin(main_thread, SyncKind::OmpParallelEnd, kOutlined, 0), 8, true) ==
                Decision{})
        << region;
  }
  expect_one_counted_per_block(tasks, SampledSegments::kFirstPasses, 8, true);
}

// A spin flag's wait and release carry the flag's release number, which
// decides in place of the thread's own count (a releasing thread does not
// wait, the others do).
TEST(SampledSegments, ASpinFlagsReleaseNumberDecides) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState releaser, waiter;
  for (int64_t release = 1; release <= 300; ++release) {
    const Decision r = SampledSegments::decide(
        s.begin(releaser, SyncKind::SpinRelease, kBarrier, release), 8, false);
    const Decision w = SampledSegments::decide(
        s.begin(waiter, SyncKind::SpinBarrier, kBarrier, release), 8, false);
    EXPECT_TRUE(r == w) << release;
  }
}

// An OpenMP team has one barrier object for all its loops: a key per
// construct (its call site) samples each loop's own executions, and the
// loops of one time step have the same count, so a step is analyzed (or
// skipped) whole, each of its loops counted as often as the others.
TEST(SampledSegments, AnOpenMpBarrierIsKeyedByItsConstruct) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState t;
  constexpr uint64_t kLoopEnds[2] = {0x401200, 0x401380};
  uint64_t counted[2] = {0, 0};
  for (int step = 0; step < 200; ++step) {
    Decision d[2];
    for (int loop = 0; loop < 2; ++loop) {
      d[loop] = SampledSegments::decide(
          s.begin(t, SyncKind::OmpBarrierLeave, 0, 0, kLoopEnds[loop]), 8, true);
      counted[loop] += d[loop].weight;
    }
    EXPECT_TRUE(d[0] == d[1]) << step;
  }
  // Every step stands for itself once in each loop (one key for both: a
  // block of 8 passes, 4 steps, counted one loop's pass 8 times).
  EXPECT_EQ(counted[0], 200u);
  EXPECT_EQ(counted[1], 200u);
}

// gcc gives the master its own copy of a barrier after a `master` block,
// and each branch of an `if` around barriers its own: in every pass the
// master enters from one site, the worker from one of two (the branch it
// took). The sites met in one pass are one construct: the members count
// one key and decide alike (before, the worker's two keys counted half the
// master's passes each, and they sampled different passes).
TEST(SampledSegments, MembersThatCallOneBarrierFromDifferentCopiesAgree) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState master, worker;
  constexpr uint64_t kRegion = 0x401100, kMasterCopy = 0x402000, kBranch[2] = {0x403000, 0x403400};
  s.begin(master, SyncKind::OmpImplicitTaskBegin, kRegion, 0);
  s.begin(worker, SyncKind::OmpImplicitTaskBegin, kRegion, 0);
  uint64_t counted = 0;
  for (int pass = 0; pass < 400; ++pass) {
    const uint64_t branch = kBranch[(pass * 7 / 3) % 2];
    if (pass % 3 == 0) {  // either may enter first
      s.register_arrival(worker, branch);
      s.register_arrival(master, kMasterCopy);
    } else {
      s.register_arrival(master, kMasterCopy);
      s.register_arrival(worker, branch);
    }
    const SampledSegments::Position pm =
        s.begin(master, SyncKind::OmpBarrierLeave, 0, 0, kMasterCopy);
    const SampledSegments::Position pw = s.begin(worker, SyncKind::OmpBarrierLeave, 0, 0, branch);
    EXPECT_EQ(pm.count, static_cast<uint64_t>(pass));
    EXPECT_EQ(pw.count, pm.count) << pass;
    const Decision m = SampledSegments::decide(pm, 8, true);
    EXPECT_TRUE(m == SampledSegments::decide(pw, 8, true)) << pass;
    counted += m.weight;
  }
  EXPECT_EQ(counted, 400u);  // every pass stood for once
  // The construct is keyed by the site seen first: the worker's first
  // copy (it entered first in pass 0).
  EXPECT_EQ(s.construct_of(kMasterCopy), kBranch[0]);
  EXPECT_EQ(s.construct_of(kBranch[1]), kBranch[0]);
}

// A pthread barrier's call site is not the team's: the main thread waits
// at one call site twice a step, a worker at two. They still agree.
TEST(SampledSegments, APthreadBarriersCallSiteIsNotPartOfItsKey) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState main_thread, worker;
  for (int pass = 0; pass < 400; ++pass) {
    const Decision m = SampledSegments::decide(
        s.begin(main_thread, SyncKind::BarrierLeave, kBarrier, 0, 0x401000), 8, true);
    const Decision w = SampledSegments::decide(
        s.begin(worker, SyncKind::BarrierLeave, kBarrier, 0, pass % 2 ? 0x402200 : 0x402100), 8,
        true);
    EXPECT_TRUE(m == w) << pass;
  }
}

}  // namespace
}  // namespace weft
