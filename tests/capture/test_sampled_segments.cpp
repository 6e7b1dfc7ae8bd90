// Which section instances the sampling analyses analyze (SampledSegments,
// docs/metrics.md "Sampled section instances"): the members of a team agree
// whatever else each one did, every key's first passes are analyzed, and
// the sample is 1 in N with a warm-up segment before each counted one.
#include <gtest/gtest.h>

#include <vector>

#include "sources/capture/sampled_segments.h"

namespace weft {
namespace {

using Decision = SampledSegments::Decision;
constexpr uint64_t kBarrier = 0x7f0000001000;

// The decisions for `n` passes through one barrier.
std::vector<Decision> barrier_passes(const SampledSegments& s, SampledSegments::ThreadState& t,
                                     int n, uint32_t rate, bool warm_up) {
  std::vector<Decision> out;
  for (int i = 0; i < n; ++i)
    out.push_back(
        SampledSegments::decide(s.begin(t, SyncKind::BarrierLeave, kBarrier, 0), rate, warm_up));
  return out;
}

// The main thread begins segments its workers never do (creating them);
// the barrier's passes decide alike in every member.
TEST(SampledSegments, TeamMembersAgreeWhateverElseTheyBegan) {
  SampledSegments s(0);
  s.on_close(0);
  SampledSegments::ThreadState main_thread, worker;
  for (int i = 0; i < 3; ++i) s.begin(main_thread, SyncKind::ThreadCreate, 0, 0);
  s.begin(worker, SyncKind::ThreadStart, 0, 0);
  for (bool warm_up : {false, true}) {
    SampledSegments::ThreadState a = main_thread, b = worker;
    const std::vector<Decision> da = barrier_passes(s, a, 2000, 4, warm_up);
    EXPECT_TRUE(da == barrier_passes(s, b, 2000, 4, warm_up));
    // The first kStartAlign passes are analyzed whole, with weight 1.
    for (uint32_t i = 0; i < SampledSegments::kStartAlign; ++i) EXPECT_TRUE(da[i] == Decision{});
    // Then 1 in 4 counted, at weight 4; with warm_up, the pass before each
    // counted one is analyzed without counting, and nothing else is.
    size_t counted = 0;
    for (size_t i = SampledSegments::kStartAlign; i < da.size(); ++i) {
      if (da[i].weight == 4) {
        ++counted;
        EXPECT_TRUE(da[i].analyzed);
      } else {
        EXPECT_EQ(da[i].weight, 0u);
        const bool before_counted = i + 1 < da.size() && da[i + 1].weight == 4;
        EXPECT_EQ(da[i].analyzed, warm_up && before_counted) << i;
      }
    }
    EXPECT_NEAR(static_cast<double>(counted) / (da.size() - SampledSegments::kStartAlign), 0.25,
                0.03);
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
  // Sampling begins at the multiple of kStartAlign after the barrier's
  // count when the thread saw the start (200: at pass 208).
  const std::vector<Decision> after = barrier_passes(s, t, 400, 8, false);
  for (uint32_t i = 0; i < 208 - 200; ++i) EXPECT_TRUE(after[i] == Decision{}) << i;
  // Then exactly the passes the hash leaves out.
  for (uint32_t i = 208 - 200; i < after.size(); ++i)
    EXPECT_EQ(after[i].analyzed,
              SampledSegments::selected(200 + i, 8, static_cast<uint32_t>(SyncKind::BarrierLeave)))
        << i;
}

// Two members that see the start one pass apart (not across a multiple of
// kStartAlign) still agree on every pass.
TEST(SampledSegments, MembersSeeingTheStartOnePassApartAgree) {
  SampledSegments early(0), late(0);
  SampledSegments::ThreadState a, b;
  barrier_passes(early, a, 2, 8, false);  // passes 0 and 1 before the start
  barrier_passes(late, b, 3, 8, false);   // passes 0, 1 and 2
  early.on_close(0);
  const std::vector<Decision> da = barrier_passes(early, a, 501, 8, true);
  late.on_close(0);
  const std::vector<Decision> db = barrier_passes(late, b, 500, 8, true);
  for (size_t i = 0; i < db.size(); ++i) EXPECT_TRUE(da[i + 1] == db[i]) << i;
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

}  // namespace
}  // namespace weft
