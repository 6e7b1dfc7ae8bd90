// examples/rod_halo_pthreads.c under `weft record --analyses reuse --exact`:
// every histogram its header counts by hand, per instruction line, thread
// and locality, under the compile-time source (gcc and clang) and the
// binary source; and the problem size kept for weft predict.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "analyzers/reuse/reuse_tables.h"
#include "support/command_runner.h"
#include "support/example_source.h"

namespace weft {
namespace {

using weft_test::CommandResult;
using weft_test::run_command;
using weft_test::TempDir;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kSource = std::string(WEFT_EXAMPLES_SOURCE_DIR) + "/rod_halo_pthreads.c";
constexpr uint32_t kThreads = 4;
constexpr uint64_t kSteps = 10;

struct Build {
  std::string name;
  std::string backend;
};

void PrintTo(const Build& b, std::ostream* os) { *os << b.name << " (" << b.backend << ")"; }

// One line's histogram per (thread, locality), the line's instructions summed.
struct LineHistogram {
  uint64_t cold = 0;
  std::map<uint64_t, uint64_t> by_distance;  // by bin: bins 0..15 are single distances
  uint64_t reuses = 0;
};

using ByLine = std::map<std::tuple<int, uint32_t, ReuseLocality>, LineHistogram>;

class RodHalo : public ::testing::TestWithParam<Build> {};

TEST_P(RodHalo, HistogramsAreTheHandCountedOnes) {
  TempDir dir;
  const std::string profile_path = (dir.path / "rod.weft").string();
  const CommandResult rec =
      run_command(kWeft + " record --backend " + GetParam().backend +
                      " --analyses reuse --exact --problem-size 10 -o " + profile_path + " -- " +
                      WEFT_EXAMPLES_DIR + "/rod_halo_pthreads." + GetParam().name + " 4 10",
                  dir.path);
  ASSERT_EQ(rec.code, 0) << rec.err;
  const Profile profile = Profile::open(profile_path);
  EXPECT_EQ(profile.meta_unsigned("problem_size"), 10u);
  EXPECT_EQ(profile.meta_unsigned("reuse_granule"), 64u);
  EXPECT_EQ(profile.meta_unsigned("reuse_sample_shift"), 0u);

  ByLine lines;
  for (const InstructionReuse& r : reuse_histograms(profile)) {
    if (r.file.find("rod_halo_pthreads.c") == std::string::npos) continue;
    EXPECT_EQ(r.module, "rod_halo_pthreads." + GetParam().name);
    LineHistogram& h = lines[{static_cast<int>(r.line), r.thread, r.locality}];
    h.cold += r.histogram.cold;
    for (uint32_t b = 0; b < r.histogram.counts.size(); ++b) {
      if (r.histogram.counts[b] == 0) continue;
      h.by_distance[b] += r.histogram.counts[b];
      h.reuses += r.histogram.counts[b];
    }
  }
  const int init = weft_test::marker_line(kSource, "/* init */");
  const int left = weft_test::marker_line(kSource, "/* left-halo */");
  const int right = weft_test::marker_line(kSource, "/* right-halo */");
  const int mass = weft_test::marker_line(kSource, "/* mass */");
  const int post = weft_test::marker_line(kSource, "/* post */");
  auto at = [&](int line, uint32_t thread, ReuseLocality locality) -> const LineHistogram& {
    static const LineHistogram none;
    auto it = lines.find({line, thread, locality});
    return it == lines.end() ? none : it->second;
  };
  constexpr auto kLocal = ReuseLocality::Local;
  constexpr auto kRemote = ReuseLocality::Remote;
  // The binary source also sees the thread's stack frame and the PLT's GOT
  // slot touched in every step (the call of pthread_barrier_wait, spills at
  // -O1), which the compile-time instrumentation leaves out: every
  // distance of a thread is then larger by the same few granules.
  const bool binary = GetParam().backend == "valgrind";
  for (uint32_t t = 0; t < kThreads; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    const bool end_rank = t == 0 || t == kThreads - 1;
    const uint64_t per_step = end_rank ? 9 : 10;  // the program's granules per step - 1
    // The result slot: its own granule, reused once per step at the
    // thread's one distance.
    const LineHistogram& p = at(post, t, kLocal);
    EXPECT_EQ(p.cold, 1u);
    ASSERT_EQ(p.by_distance.size(), 1u);
    const uint64_t distance = p.by_distance.begin()->first;
    EXPECT_EQ(p.by_distance.begin()->second, kSteps - 1);
    if (binary) {
      EXPECT_GE(distance, per_step);
      EXPECT_LE(distance, per_step + 4);
    } else {
      EXPECT_EQ(distance, per_step);
    }
    // Own block: first touched at the init line, swept at the mass line.
    EXPECT_EQ(at(init, t, kLocal).cold, 8u);
    EXPECT_EQ(at(init, t, kLocal).by_distance.at(0), 56u);
    EXPECT_EQ(at(init, t, kRemote).reuses + at(init, t, kRemote).cold, 0u);
    const LineHistogram& m = at(mass, t, kLocal);
    EXPECT_EQ(m.cold, 0u);
    EXPECT_EQ(m.by_distance.at(0), 56 * kSteps);
    EXPECT_EQ(m.reuses, 64 * kSteps);
    EXPECT_EQ(m.by_distance.at(distance), 8 * (kSteps - 1));
    // The first step's 8: since the init line the thread touched its other
    // block granules and its halo cells, not yet its slot: one fewer. (The
    // binary source's frame granules there depend on where the thread's
    // stack lies: not counted by hand.)
    if (!binary) {
      EXPECT_EQ(m.by_distance.at(per_step - 1), 8u);
    }
    EXPECT_EQ(at(mass, t, kRemote).reuses + at(mass, t, kRemote).cold, 0u);
    // The halo cells: the neighbours' granules, remote.
    for (const auto& [line, has] : {std::pair{left, t > 0}, std::pair{right, t + 1 < kThreads}}) {
      const LineHistogram& h = at(line, t, kRemote);
      EXPECT_EQ(h.cold, has ? 1u : 0u) << line;
      EXPECT_EQ(h.reuses, has ? kSteps - 1 : 0u) << line;
      if (has) {
        EXPECT_EQ(h.by_distance.at(distance), kSteps - 1) << line;
      }
      if (!binary) {
        EXPECT_EQ(at(line, t, kLocal).reuses + at(line, t, kLocal).cold, 0u) << line;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Builds, RodHalo,
                         ::testing::Values(Build{"gcc.O2", "compile"}, Build{"clang.O1", "compile"},
                                           Build{"plain.gcc.O1", "valgrind"}),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace weft
