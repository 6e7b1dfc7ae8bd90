// Sampled CRD (docs/metrics.md, "Sampled CRD"): a reader traces the granules
// a hash selects, halving its rate whenever its traced granules pass the
// budget; short distances stay exact (the recent granules); the histogram
// it estimates is compared with the exact engine's on the same events.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analyzers/crd/communication_reuse_distance.h"

namespace weft {
namespace {

constexpr uint64_t kFirst = PairReuseTrace::kFirstEvent;

TEST(PairReuseTrace, RetainForgetsRejectedGranulesAndKeepsTheOthersDistances) {
  // 300 granules, twice; then the odd ones leave. Granule 1 comes back,
  // new; a sweep of the 150 even ones then has 149 of them and granule 1
  // between two reads of each.
  PairReuseTrace trace(0);
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t g = 0; g < 300; ++g) trace.record(g);
  ASSERT_TRUE(trace.retain([](uint64_t g) { return g % 2 == 0; }));
  EXPECT_EQ(trace.distinct_granules(), 150u);
  EXPECT_EQ(trace.record(1), kFirst);  // forgotten
  for (uint64_t g = 0; g < 300; g += 2) EXPECT_EQ(trace.record(g), 150u);
}

TEST(PairReuseTrace, AWindowAndItsTracedRunOutliveACompaction) {
  // Segment 0 reads granules 0-4 six times (times 0-29); segment 1's
  // window begins at segment 0, its run of traced segments at itself (time
  // 30). Segment 1 reads granules 10-14 twice: at its third event the trace
  // compacts (32 times at first), which renumbers the live times 0-6: the
  // window's and the run's starts move with them (the run's to 5).
  PairReuseTrace trace(0);
  trace.enter_segment(0, 0);
  for (int pass = 0; pass < 6; ++pass)
    for (uint64_t g = 0; g < 5; ++g) trace.record(g);
  trace.enter_segment(1, 0, 1);
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t g = 10; g < 15; ++g) trace.record(g);
  EXPECT_EQ(trace.record(12), 2u);  // 13 and 14 since
  EXPECT_TRUE(trace.previous_in_window());
  EXPECT_TRUE(trace.previous_in_run());
  EXPECT_EQ(trace.record(3), 6u);  // 4 and 10-14 since
  EXPECT_TRUE(trace.previous_in_window());
  EXPECT_FALSE(trace.previous_in_run());
}

// The events of one reader of writer 0: (granule, true communication).
struct Event {
  uint64_t granule;
  bool true_communication;
  uint64_t pc;
};

struct Result {
  std::map<uint64_t, uint64_t> line_bins;  // bin -> events (estimated)
  uint64_t epochs = 0;
  unsigned shift = 0;
  uint64_t traced = 0;
};

Result run(const std::vector<Event>& events, uint64_t sample_granules) {
  CrdConfig config;
  config.max_threads = 2;
  config.max_granules_per_pair = 0;
  config.sample_granules = sample_granules;
  CommunicationReuseDistance crd(config);
  crd.set_granularity_log2(6);
  auto* reader = crd.attach(1);
  for (const Event& e : events)
    crd.on_event(*reader, e.pc, 0, e.granule << 6, e.true_communication);
  Result out;
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
    if (r.distance & kWordDistance) return;
    out.line_bins[std::bit_width(r.distance)] += r.count;
  });
  crd.for_each_reuse_set([&](const ReuseSetNode& n) {
    if (n.kind == kReuseSetCode) out.epochs += n.count;
  });
  out.shift = crd.max_sample_shift();
  out.traced = reader->traced;
  return out;
}

std::string bins_of(const Result& r) {
  std::string out;
  for (const auto& [bin, count] : r.line_bins)
    out += std::to_string(bin) + ":" + std::to_string(count) + " ";
  return out;
}

// Largest difference of a bin's share of the events, in percentage points.
double largest_bin_error(const Result& a, const Result& b) {
  auto total = [](const Result& r) {
    uint64_t n = 0;
    for (const auto& [bin, count] : r.line_bins) n += count;
    return static_cast<double>(n);
  };
  std::set<uint64_t> bins;
  for (const auto& [bin, count] : a.line_bins) bins.insert(bin);
  for (const auto& [bin, count] : b.line_bins) bins.insert(bin);
  double worst = 0;
  for (uint64_t bin : bins) {
    const double share_a = a.line_bins.count(bin) ? a.line_bins.at(bin) / total(a) : 0.0;
    const double share_b = b.line_bins.count(bin) ? b.line_bins.at(bin) / total(b) : 0.0;
    worst = std::max(worst, 100 * std::abs(share_a - share_b));
  }
  return worst;
}

// The bin of the median of the visits (the events of distance > 0).
uint64_t median_visit_bin(const Result& r) {
  uint64_t visits = 0;
  for (const auto& [bin, count] : r.line_bins) visits += bin ? count : 0;
  uint64_t seen = 0;
  for (const auto& [bin, count] : r.line_bins) {
    if (bin == 0) continue;
    seen += count;
    if (2 * seen >= visits) return bin;
  }
  return 0;
}

// A reader in the style of a time-step code: it receives a large array the
// writer filled (40,000 lines) and sweeps it six times; every 8 lines it
// re-reads one of 4 lines of a small table; then a scattered phase reads
// 3,000 lines of a lookup structure at random. Each sweep's first read of a
// line after the writer rewrote it (every other step) is a true
// communication.
std::vector<Event> time_step_reader() {
  std::vector<Event> events;
  constexpr uint64_t kArray = 1'000'000, kTable = 5'000'000, kLookup = 9'000'000;
  for (int step = 0; step < 6; ++step) {
    for (uint64_t line = 0; line < 40'000; ++line) {
      events.push_back({kArray + line, step % 2 == 0, 0x100});
      events.push_back({kArray + line, false, 0x108});  // the line's next element
      if (line % 8 == 0) events.push_back({kTable + (line / 8) % 4, step == 0 && line < 32, 0x200});
    }
  }
  std::mt19937_64 rng(11);
  for (int i = 0; i < 60'000; ++i) events.push_back({kLookup + rng() % 3'000, i < 3'000, 0x300});
  return events;
}

TEST(SampledCrd, BelowItsBudgetAReaderIsExact) {
  std::vector<Event> events;
  for (int pass = 0; pass < 3; ++pass)
    for (uint64_t g = 0; g < 1000; ++g) events.push_back({g * 3, pass == 0, 0x10});
  const Result exact = run(events, 0);
  const Result sampled = run(events, 1000);
  EXPECT_EQ(sampled.shift, 0u);
  EXPECT_EQ(sampled.line_bins, exact.line_bins);
  EXPECT_EQ(sampled.epochs, exact.epochs);
}

TEST(SampledCrd, HistogramWithinTwoPointsAndMedianWithinABin) {
  const std::vector<Event> events = time_step_reader();
  const Result exact = run(events, 0);
  const Result sampled = run(events, 4096);
  // 43,000 distinct lines for a budget of 4,096: the rate fell to 1/16.
  EXPECT_EQ(exact.shift, 0u);
  EXPECT_GE(sampled.shift, 4u);
  EXPECT_LE(sampled.traced, 4096u);
  EXPECT_LE(largest_bin_error(sampled, exact), 2.0) << bins_of(exact) << "\n" << bins_of(sampled);
  const uint64_t exact_median = median_visit_bin(exact);
  const uint64_t sampled_median = median_visit_bin(sampled);
  EXPECT_LE(std::max(exact_median, sampled_median) - std::min(exact_median, sampled_median), 1u);
  // The epochs (CRR's denominators) are estimated too: within 10%.
  EXPECT_NEAR(static_cast<double>(sampled.epochs), static_cast<double>(exact.epochs),
              0.1 * static_cast<double>(exact.epochs));
}

TEST(SampledCrd, DistancesShorterThanTheRecentGranulesStayExact) {
  // Whatever the rate, an event closer than 64 distinct lines is measured
  // exactly, on every line: the counts of bins 0..6 (distances 0..63) are
  // those of the exact engine, event for event.
  const std::vector<Event> events = time_step_reader();
  Result exact = run(events, 0);
  Result sampled = run(events, 256);
  EXPECT_GE(sampled.shift, 7u);
  for (uint64_t bin = 0; bin <= 6; ++bin)
    EXPECT_EQ(sampled.line_bins[bin], exact.line_bins[bin]) << "bin " << bin;
  EXPECT_GT(exact.line_bins[6], 0u);
}

TEST(SampledCrd, AnExitedReaderKeepsItsResultsAndEndsItsEpochs) {
  // Two readers of the same 2,000 lines, each twice; reader 1 exits after
  // its section closed. Its traces go, its distances and epochs stay: the
  // same as reader 2's, which is still running.
  CrdConfig config;
  config.max_threads = 4;
  CommunicationReuseDistance crd(config);
  crd.set_granularity_log2(6);
  auto* one = crd.attach(1);
  auto* two = crd.attach(2);
  for (auto* reader : {one, two}) {
    for (int pass = 0; pass < 2; ++pass)
      for (uint64_t g = 0; g < 2000; ++g) crd.on_event(*reader, 0x40, 0, g << 6, pass == 0);
    crd.close_section(*reader, 0x5000);
  }
  const size_t both = crd.memory_bytes();
  crd.finish_reader(1);
  EXPECT_LT(crd.memory_bytes(), both / 2 + 64 * 1024);
  std::map<uint32_t, std::map<uint64_t, uint64_t>> distances;  // reader -> distance -> events
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
    if (!(r.distance & kWordDistance)) distances[r.reader][r.distance] += r.count;
  });
  EXPECT_EQ(distances[1], (std::map<uint64_t, uint64_t>{{1999, 2000}}));
  EXPECT_EQ(distances[1], distances[2]);
  std::map<uint32_t, uint64_t> code_epochs, section_epochs;
  crd.for_each_reuse_set([&](const ReuseSetNode& n) {
    (n.kind == kReuseSetCode ? code_epochs : section_epochs)[n.reader] += n.count;
  });
  EXPECT_EQ(code_epochs[1], 2000u);
  EXPECT_EQ(code_epochs[2], 2000u);
  EXPECT_EQ(section_epochs[1], 2000u);
  EXPECT_EQ(section_epochs[2], 2000u);
}

// The line distances' counts of every reader and pair, by distance.
std::map<uint64_t, uint64_t> line_distances(const CommunicationReuseDistance& crd) {
  std::map<uint64_t, uint64_t> out;
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
    if (!(r.distance & kWordDistance)) out[r.distance] += r.count;
  });
  return out;
}

// Section instances in which a writer has rewritten 100 lines and the
// reader reads each once (a true communication, at distance 99 from its
// previous read), at 1 in 4 instances; the events' distances and the
// code epochs' count.
struct HundredLineInstances {
  CrdConfig config = [] {
    CrdConfig c;
    c.max_threads = 2;
    c.segment_sampling = 4;
    return c;
  }();
  CommunicationReuseDistance crd{config};
  CommunicationReuseDistance::ReaderState* reader = nullptr;
  HundredLineInstances() {
    crd.set_granularity_log2(6);
    reader = crd.attach(1);
  }
  void instance() {
    for (uint64_t g = 0; g < 100; ++g) crd.on_event(*reader, 0x40, 0, g << 6, true);
    crd.close_section(*reader, 0x5000);
  }
  // An instance the CRD skips: the communication analyzer sends it the
  // events of its long-reuse sample's granules (here every granule).
  void skipped_instance() {
    for (uint64_t g = 0; g < 100; ++g) crd.on_skipped_event(*reader, 0x40, 0, g << 6);
    crd.close_section(*reader, 0x5000);
  }
  std::map<uint64_t, uint64_t> distances() const { return line_distances(crd); }
  uint64_t code_epochs() {
    uint64_t out = 0;
    crd.for_each_reuse_set([&](const ReuseSetNode& n) {
      if (n.kind == kReuseSetCode) out += n.count;
    });
    return out;
  }
};

TEST(SampledCrd, SampledInstancesCountTheirEventsAndEpochsByTheirWeight) {
  // Docs/metrics.md, "Sampled section instances": 1 in 4 instances counted,
  // the one before it traced uncounted. Instance 1 comes before the sample
  // (weight 1), instance 2 is skipped (the CRD sees none of its events),
  // 3 is the warm-up, 4 counted for 4.
  HundredLineInstances run;
  run.instance();
  // Serials 1, 2, 3, each instance's window from the one before.
  run.crd.sample_segment(*run.reader, false, 0, 1, 0);
  run.skipped_instance();
  run.crd.sample_segment(*run.reader, true, 0, 2, 1);
  run.instance();
  run.crd.sample_segment(*run.reader, true, 4, 3, 2);
  run.instance();
  EXPECT_EQ(run.crd.skipped_segments(), 1u);
  // The warm-up's reads counted nothing but set the lines' previous reads:
  // the counted instance's are at 99, each standing for 4. Every read's
  // previous one is in its window (the instance before): the long-reuse
  // sample counts none of them.
  EXPECT_EQ(run.distances(), (std::map<uint64_t, uint64_t>{{99, 400}}));
  // An epoch weighs what the instance it began in stands for, wherever it
  // ends: instance 1's 100 (ended in the warm-up), none of the warm-up's
  // (ended in the counted instance), 4 x 100 of the counted one's (still
  // going): the 5 instances' 500.
  EXPECT_EQ(run.code_epochs(), 500u);
}

TEST(SampledCrd, AnEpochKeepsTheWeightOfAGrownBlock) {
  // Past a key's 128 N-th pass the blocks grow (2N, 4N, ...), and a counted
  // instance stands for its block: instances that stand for 16 and then
  // for 8, each after its warm-up.
  HundredLineInstances run;
  run.instance();
  uint32_t serial = 0;
  for (const uint64_t weight : {16, 8}) {
    ++serial;
    run.crd.sample_segment(*run.reader, true, 0, serial, serial - 1);
    run.instance();
    ++serial;
    run.crd.sample_segment(*run.reader, true, weight, serial, serial - 1);
    run.instance();
  }
  EXPECT_EQ(run.distances(), (std::map<uint64_t, uint64_t>{{99, 1600 + 800}}));
  // Epochs: the first instance's 100, the 16-instance one's 1,600 (ended
  // in the next warm-up), the 8-instance one's 800 (still going); the
  // warm-ups' none.
  EXPECT_EQ(run.code_epochs(), 100u + 1600u + 800u);
}

// A reader's instances sampled 1 in 4: instances 0-7 are analyzed whole;
// then, of each 4, the third is the warm-up and the fourth is counted for
// 4; the other two are skipped. Instance k reads `lines` lines from
// first_line(k) on; the reader's clock (one tick a read) drives the
// stretches, as the communication analyzer's does.
struct OneInFourInstances {
  CrdConfig config;
  CommunicationReuseDistance crd;
  CommunicationReuseDistance::ReaderState* reader = nullptr;
  OneInFourInstances(uint64_t long_sample_granules, uint64_t stretch_events)
      : config([&] {
          CrdConfig c;
          c.max_threads = 2;
          c.segment_sampling = 4;
          c.long_sample_granules = long_sample_granules;
          c.stretch_events = stretch_events;
          return c;
        }()),
        crd(config) {
    crd.set_granularity_log2(6);
    reader = crd.attach(1);
  }
  template <class FirstLine>
  void run(uint32_t instances, uint64_t lines, FirstLine first_line) {
    for (uint32_t k = 0; k < instances; ++k) {
      const bool sampled = k >= 8;
      const bool analyzed = !sampled || k % 4 >= 2;
      const uint64_t weight = !sampled ? 1 : k % 4 == 3 ? 4 : 0;
      uint64_t ends = crd.sample_segment(*reader, analyzed, weight, k, k == 0 ? 0 : k - 1);
      bool traced = analyzed;
      const uint64_t first = first_line(k);
      for (uint64_t line = first, clock = 0; line < first + lines; ++line) {
        if (traced)
          crd.on_event(*reader, 0x40, 0, line << 6, false);
        else
          crd.on_skipped_event(*reader, 0x40, 0, line << 6);
        if (++clock >= ends) ends = crd.next_stretch(*reader, clock, traced);
      }
      crd.close_section(*reader, 0x5000);
    }
  }
  std::map<uint64_t, uint64_t> distances() const { return line_distances(crd); }
};

// Docs/metrics.md, "Long reuses": instance k reads the 100 lines of
// group k % 3 (of 300), so each read's previous one on its line is three
// instances back, at distance 299 (the 299 other lines came between):
// before the window (the instance
// before), where the sampled instances' traces cannot measure it (their
// distance would count only the traced instances between).
struct ThreeGroupInstances : OneInFourInstances {
  explicit ThreeGroupInstances(uint64_t long_sample_granules)
      : OneInFourInstances(long_sample_granules, 0) {}
  void run(uint32_t instances) {
    OneInFourInstances::run(instances, 100, [](uint32_t k) { return 100 * uint64_t{k % 3}; });
  }
};

TEST(SampledCrd, ReusesFromBeforeTheWindowAreMeasuredInEveryInstance) {
  // Below its budget the long-reuse sample traces every line: each of the
  // 21 instances after the first three reads 100 lines at distance 299,
  // exactly as --exact counts them (the whole instances 3-7 by their
  // traces, the 16 sampled ones' by the long sample, skipped ones too).
  ThreeGroupInstances run(0);
  run.run(24);
  EXPECT_EQ(run.crd.max_long_shift(), 0u);
  EXPECT_EQ(run.distances(), (std::map<uint64_t, uint64_t>{{299, 2100}}));
}

TEST(SampledCrd, TheLongSampleKeepsToItsBudget) {
  // 300 lines against a budget of 64: the rate halves to 1/8, where 38 of
  // them are traced (the multiplicative hash is the same on every build).
  // Instances 3-7, analyzed whole before the long sample began, count
  // their 500 reads exactly; the 16 sampled instances' 1,600 are estimated
  // from the traced lines' reads, each counting 8 (202 of them: 1,616), at
  // the 37 other traced lines times 8 (296 for 299).
  ThreeGroupInstances run(64);
  run.run(24);
  EXPECT_EQ(run.crd.max_long_shift(), 3u);
  EXPECT_EQ(run.reader->long_traced, 38u);
  EXPECT_EQ(run.distances(), (std::map<uint64_t, uint64_t>{{296, 1616}, {299, 500}}));
}

// Docs/metrics.md, "Long reuses": two loops take turns, A reading lines
// 0-99, B lines 100-199, so every read's previous one on its line is the
// same loop's previous execution, at distance 199: in the window, which the
// other loop's execution between breaks when the sample skips it. Past
// their first 8 executions A counts 1 in 4 (warm-up at k % 4 == 2, counted
// for 4 at 3) and B too (at 0 and 1), so every counted instance's window
// holds a skipped one. The line traces sample (budget 64 of 200 lines);
// the long sample traces every line.
TEST(SampledCrd, AWindowBrokenByASkippedInstanceIsTheLongSamplesWhole) {
  CrdConfig config;
  config.max_threads = 2;
  config.segment_sampling = 4;
  config.sample_granules = 64;
  config.long_sample_granules = 0;
  CommunicationReuseDistance crd(config);
  crd.set_granularity_log2(6);
  CommunicationReuseDistance::ReaderState* reader = crd.attach(1);
  constexpr uint32_t kExecutions = 24;
  uint64_t sampled_part = 0;  // the reads the counted instances stand for
  for (uint32_t serial = 0; serial < 2 * kExecutions; ++serial) {
    const uint32_t k = serial / 2;
    const bool loop_b = serial % 2 == 1;
    const uint32_t phase = (k + (loop_b ? 2 : 0)) % 4;  // B's warm-up at 0, count at 1
    const bool sampled = k >= 8;
    const bool analyzed = !sampled || phase >= 2;
    const uint64_t weight = !sampled ? 1 : phase == 3 ? 4 : 0;
    if (sampled) sampled_part += 100 * weight;
    crd.sample_segment(*reader, analyzed, weight, serial, serial < 2 ? serial : serial - 2);
    const uint64_t first = loop_b ? 100 : 0;
    for (uint64_t g = first; g < first + 100; ++g) {
      if (analyzed)
        crd.on_event(*reader, 0x40, 0, g << 6, false);
      else
        crd.on_skipped_event(*reader, 0x40, 0, g << 6);
    }
    crd.close_section(*reader, 0x5000);
  }
  EXPECT_EQ(sampled_part, 3200u);
  EXPECT_EQ(crd.max_long_shift(), 0u);
  // The counted instances' 3,200 reads at exactly 199 (the long sample's,
  // every line; a line outside the traces' sample stands in for nothing
  // there), beside the whole executions 1-7's 1,400 reads, which the line
  // traces estimate before the long sample began: their sampled lines'
  // reads in those 7 executions, each counted 4 times (51 of the 200 lines
  // at 1/4, on every build: the sample's hash is a multiply).
  ASSERT_EQ(reader->sample_shift, 2u);
  uint64_t sampled_lines = 0;
  for (uint64_t g = 0; g < 200; ++g) sampled_lines += granule_in_crd_sample(g, 2);
  EXPECT_EQ(sampled_lines, 51u);
  const std::map<uint64_t, uint64_t> distances = line_distances(crd);
  EXPECT_EQ(distances.at(199), 3200u);
  uint64_t total = 0;
  for (const auto& [distance, count] : distances) total += count;
  EXPECT_EQ(total, 3200u + 7 * 4 * sampled_lines);
}

// Docs/metrics.md, "Stretches of long instances": instances that the CRD
// cuts into stretches, sampled 1 in 4 as above. Each instance re-reads the
// same 1,024 lines in order, so every read's previous one is in the loop's
// previous execution, the window, at distance 1,023. The window's start
// must survive the previous execution's stretches (past 256 reads whole,
// a first skipped stretch and one in each of the 48 cycles of 16 reads
// that begin before the instance's end: 49 in each of the 16 analyzed
// instances). When only the latest segments' starts were kept, it moved
// to a late stretch: the skipped instances counted their early reads as
// long reuses from before the window, and the sampled ones counted them
// once instead of 4 times (17,848 reads of 23,552).
TEST(SampledCrd, AWindowBeginsAtThePreviousExecutionWhateverItsStretches) {
  constexpr uint64_t kLines = 1024;
  for (const uint64_t stretch_events : {uint64_t{0}, uint64_t{16}}) {
    OneInFourInstances run(0, stretch_events);
    run.run(24, kLines, [](uint32_t) { return uint64_t{0}; });
    // Instances 1-7 once each, and each of the 4 sampled blocks' counted
    // instance 4 times: 23 re-reads of every line.
    EXPECT_EQ(run.distances(), (std::map<uint64_t, uint64_t>{{1023, 23 * kLines}}))
        << stretch_events;
    EXPECT_EQ(run.crd.skipped_stretches(), stretch_events == 0 ? 0u : 16u * 49) << stretch_events;
  }
}

}  // namespace
}  // namespace weft
