// crd_sampling_error on two hand-made profiles whose CRD histograms differ
// by known amounts (src/findings/crd_sampling_error.h).
#include <gtest/gtest.h>

#include "analyzers/communication/communication_records.h"
#include "analyzers/crd/crd_records.h"
#include "findings/crd_sampling_error.h"
#include "findings/finding_error.h"
#include "profile/profile_writer.h"
#include "support/hand_made_profile.h"

namespace weft_sampling_test {
__attribute__((noinline)) int gather(const volatile int* cell) { return *cell + 2; }
__attribute__((noinline)) int extra(const volatile int* cell) { return *cell + 3; }
}  // namespace weft_sampling_test

namespace weft {
namespace {

const uint64_t kGatherPc = reinterpret_cast<uint64_t>(&weft_sampling_test::gather);
const uint64_t kExtraPc = reinterpret_cast<uint64_t>(&weft_sampling_test::extra);
constexpr const char* kGather = "weft_sampling_test::gather(int const volatile*)";
constexpr const char* kExtra = "weft_sampling_test::extra(int const volatile*)";

struct Count {
  uint64_t distance;
  uint64_t count;
};

// Three threads; gather: pair 0 -> 1, extra: pair 0 -> 2.
RunCapture capture(const std::vector<Count>& gather, const std::vector<Count>& extra,
                   bool with_crd = true) {
  RunCapture capture = weft_test::capture_of_this_process(64, 3);
  capture.analyses = {AnalysisId::Communication};
  if (with_crd) capture.analyses.add(AnalysisId::Crd);
  capture.threads = {{.id = 0}, {.id = 1, .parent = 0}, {.id = 2, .parent = 0}};
  capture.set_records(kCommunicationCounts,
                      {
                          {.pc = kGatherPc, .thread = 1, .peer = 0, .raw = 10, .rar = 90},
                          {.pc = kExtraPc, .thread = 2, .peer = 0, .raw = 10, .rar = 90},
                      });
  std::vector<PcDistanceCount> distances;
  for (const Count& c : gather)
    distances.push_back(
        {.pc = kGatherPc, .reader = 1, .writer = 0, .distance = c.distance, .count = c.count});
  for (const Count& c : extra)
    distances.push_back(
        {.pc = kExtraPc, .reader = 2, .writer = 0, .distance = c.distance, .count = c.count});
  if (with_crd) capture.set_records(kCrdDistances, distances);
  return capture;
}

class CrdSamplingErrorTest : public weft_test::TempDirTest {
 protected:
  std::string write(const std::string& name, const RunCapture& run) {
    const std::string path = dir_ + "/" + name + ".weft";
    build_profile(run, weft_test::hand_made_run_info(8192), path);
    return path;
  }
};

const RegionCrdError& region(const CrdSamplingError& error, const std::string& name) {
  for (const RegionCrdError& r : error.regions)
    if (r.name == name) return r;
  ADD_FAILURE() << "no region " << name;
  static const RegionCrdError none;
  return none;
}

// Exact:   gather 0 x50, 1 x25, 100 x25; extra 5 x100.
// Sampled: gather 0 x60, 1 x15, 100 x25; extra 5 x80, 40 x20.
// Bins: 0 -> 0, 1 -> 1, 5 -> 3, 40 -> 6, 100 -> 7.
TEST_F(CrdSamplingErrorTest, KnownDifferences) {
  const std::string exact = write("exact", capture({{0, 50}, {1, 25}, {100, 25}}, {{5, 100}}));
  const std::string sampled =
      write("sampled", capture({{0, 60}, {1, 15}, {100, 25}}, {{5, 80}, {40, 20}}));
  const CrdSamplingError error = crd_sampling_error(Profile::open(sampled), Profile::open(exact));

  // Whole program, 200 events each: bin 0 30% vs 25%, bin 1 7.5% vs 12.5%,
  // bin 3 40% vs 50%, bin 6 10% vs 0, bin 7 12.5% both: 10 points (bin 3
  // first). Medians of the visits: 5 (of 140: 15 at 1, 80 at 5) and 5.
  EXPECT_EQ(error.program.events, 200u);
  EXPECT_EQ(error.program.reference_events, 200u);
  EXPECT_DOUBLE_EQ(error.program.max_bin_error_pp, 10.0);
  EXPECT_EQ(error.program.worst_bin, 3u);
  ASSERT_TRUE(error.program.median_bin_difference);
  EXPECT_EQ(*error.program.median_bin_difference, 0);

  ASSERT_EQ(error.regions.size(), 2u);
  // gather: bin 0 60% vs 50%, bin 1 15% vs 25%: 10 points; visits' median
  // 100 (15 of 40 at 1) against 1 (25 of 50): bin 7 - bin 1 = +6.
  const RegionCrdError& gather = region(error, kGather);
  EXPECT_EQ(gather.kind, "function");
  EXPECT_DOUBLE_EQ(gather.error.max_bin_error_pp, 10.0);
  EXPECT_EQ(gather.error.worst_bin, 0u);
  ASSERT_TRUE(gather.error.median_bin_difference);
  EXPECT_EQ(*gather.error.median_bin_difference, 6);
  // extra: bin 3 80% vs 100%: 20 points; medians both 5.
  const RegionCrdError& extra = region(error, kExtra);
  EXPECT_DOUBLE_EQ(extra.error.max_bin_error_pp, 20.0);
  EXPECT_EQ(extra.error.worst_bin, 3u);
  EXPECT_EQ(*extra.error.median_bin_difference, 0);

  ASSERT_TRUE(error.worst_mass_region);
  EXPECT_EQ(error.regions[*error.worst_mass_region].name, kExtra);
  ASSERT_TRUE(error.worst_median_region);
  EXPECT_EQ(error.regions[*error.worst_median_region].name, kGather);
}

TEST_F(CrdSamplingErrorTest, IdenticalProfilesHaveNoError) {
  const auto run = capture({{0, 7}, {3, 9}, {1000, 2}}, {{64, 5}});
  const CrdSamplingError error =
      crd_sampling_error(Profile::open(write("a", run)), Profile::open(write("b", run)));
  EXPECT_DOUBLE_EQ(error.program.max_bin_error_pp, 0.0);
  EXPECT_EQ(*error.program.median_bin_difference, 0);
  for (const RegionCrdError& r : error.regions) {
    EXPECT_DOUBLE_EQ(r.error.max_bin_error_pp, 0.0) << r.name;
    EXPECT_EQ(*r.error.median_bin_difference, 0) << r.name;
  }
}

// A region with events on one side only: its fullest bin is the error.
TEST_F(CrdSamplingErrorTest, RegionMissingOnOneSide) {
  const std::string exact = write("exact", capture({{4, 10}}, {{8, 30}, {9, 10}}));
  const std::string sampled = write("sampled", capture({{4, 10}}, {}));
  const CrdSamplingError error = crd_sampling_error(Profile::open(sampled), Profile::open(exact));
  const RegionCrdError& extra = region(error, kExtra);
  EXPECT_EQ(extra.error.events, 0u);
  EXPECT_EQ(extra.error.reference_events, 40u);
  EXPECT_DOUBLE_EQ(extra.error.max_bin_error_pp, 100.0);  // bin 4 holds 8 and 9
  EXPECT_FALSE(extra.error.median_bin_difference);
  EXPECT_EQ(error.regions[*error.worst_mass_region].name, kExtra);
}

TEST_F(CrdSamplingErrorTest, RefusesAProfileWithoutCrd) {
  const std::string exact = write("exact", capture({{4, 10}}, {}));
  const std::string plain = write("plain", capture({}, {}, false));
  EXPECT_THROW(crd_sampling_error(Profile::open(plain), Profile::open(exact)), FindingError);
}

}  // namespace
}  // namespace weft
