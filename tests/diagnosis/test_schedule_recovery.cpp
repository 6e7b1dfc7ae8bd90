// Tests of src/diagnosis/schedule_recovery: inference of the OpenMP schedule
// from synthetic assignments (libgomp / libomp rules, random thread order,
// random back-to-back grabs that merge into one run), the runtime-kind path,
// the recovery of the chunks from hand-compressed memory traces, per
// execution of a loop run several times, and the merge of the executions'
// schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>

#include "diagnosis/schedule_recovery.h"

namespace weft {
namespace {

using Chunks = std::vector<std::vector<IterationChunk>>;

// ---------------------------------------------------------------- assignments

// libgomp's static split: the first N % T threads get one more iteration.
Chunks static_balanced(int64_t n, int threads) {
  Chunks chunks(threads);
  const int64_t q = n / threads, r = n % threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = t * q + std::min(t, r);
    const int64_t size = q + (t < r ? 1 : 0);
    if (size > 0) chunks[t].push_back({begin, begin + size});
  }
  return chunks;
}

// libomp's greedy split: blocks of ceil(N/T), the last short.
Chunks static_greedy(int64_t n, int threads) {
  Chunks chunks(threads);
  const int64_t block = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads && t * block < n; ++t) {
    chunks[t].push_back({t * block, std::min(n, (t + 1) * block)});
  }
  return chunks;
}

Chunks static_chunked(int64_t n, int threads, int64_t chunk) {
  Chunks chunks(threads);
  for (int64_t k = 0; k * chunk < n; ++k) {
    chunks[k % threads].push_back({k * chunk, std::min(n, (k + 1) * chunk)});
  }
  return chunks;
}

// Hands out chunks of the given sizes in iteration order: each goes to the
// thread that took the previous one with probability `stay` percent (a
// back-to-back grab: the two merge into one run in a trace), else to a
// random thread (which may also be the previous one). stay < 0: never to
// the previous thread (no merges at all).
Chunks hand_out(const std::vector<int64_t>& sizes, int threads, uint32_t seed, int stay) {
  std::mt19937 rng(seed);
  Chunks chunks(threads);
  int64_t begin = 0;
  uint32_t previous = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    uint32_t t = rng() % threads;
    if (k > 0 && stay < 0 && t == previous) t = (t + 1 + rng() % (threads - 1)) % threads;
    if (k > 0 && stay > 0 && rng() % 100 < static_cast<unsigned>(stay)) t = previous;
    chunks[t].push_back({begin, begin + sizes[k]});
    begin += sizes[k];
    previous = t;
  }
  return chunks;
}

std::vector<int64_t> dynamic_sizes(int64_t n, int64_t chunk) {
  std::vector<int64_t> sizes;
  for (int64_t left = n; left > 0; left -= std::min(left, chunk)) {
    sizes.push_back(std::min(left, chunk));
  }
  return sizes;
}

enum class Rule { Libgomp, LibompCeil, Libomp };

// Guided chunk sizes: libgomp max(ceil(R/T), min); the libomp-style
// max(ceil(R/(2T)), min); libomp's actual kmp_sch_guided_iterative_chunked
// (chunks of min below 2T(min + 1) iterations left, else floor(R/(2T))).
std::vector<int64_t> guided_sizes(Rule rule, int64_t n, int64_t threads, int64_t min_chunk) {
  std::vector<int64_t> sizes;
  for (int64_t left = n; left > 0;) {
    int64_t q = 0;
    if (rule == Rule::Libgomp) {
      q = std::max((left + threads - 1) / threads, min_chunk);
    } else if (rule == Rule::LibompCeil) {
      q = std::max((left + 2 * threads - 1) / (2 * threads), min_chunk);
    } else {
      q = left < 2 * threads * (min_chunk + 1) ? min_chunk : left / (2 * threads);
    }
    q = std::min(q, left);
    sizes.push_back(q);
    left -= q;
  }
  return sizes;
}

// A thread's adjacent chunks merged: what a trace shows.
Chunks merged(const Chunks& chunks) {
  Chunks runs(chunks.size());
  for (size_t t = 0; t < chunks.size(); ++t) {
    for (const IterationChunk& c : chunks[t]) {
      if (!runs[t].empty() && runs[t].back().end == c.begin) {
        runs[t].back().end = c.end;
      } else {
        runs[t].push_back(c);
      }
    }
  }
  return runs;
}

int64_t smallest_non_final(const Chunks& chunks) {
  int64_t n = 0, smallest = std::numeric_limits<int64_t>::max();
  for (const auto& thread : chunks) {
    for (const IterationChunk& c : thread) n = std::max(n, c.end);
  }
  for (const auto& thread : merged(chunks)) {
    for (const IterationChunk& c : thread) {
      if (c.end != n) smallest = std::min(smallest, c.end - c.begin);
    }
  }
  return smallest;
}

size_t run_count(const Chunks& chunks) {
  size_t n = 0;
  for (const auto& thread : chunks) n += thread.size();
  return n;
}

// ---------------------------------------------------------------- inference

TEST(ClassifySchedule, StaticUnchunked) {
  const RecoveredSchedule s = classify_schedule(static_balanced(1024, 4));
  EXPECT_EQ(s.kind, ScheduleKind::Static);
  EXPECT_EQ(s.chunk, 0);
  EXPECT_EQ(s.iterations, 1024);
  EXPECT_EQ(s.threads, 4u);
  EXPECT_EQ(schedule_name(s), "static");
  EXPECT_NE(s.evidence.find("one block per thread in thread order"), std::string::npos)
      << s.evidence;
  for (int64_t n : {1023, 1001, 1000, 7, 3}) {
    for (int threads : {3, 4}) {
      EXPECT_EQ(schedule_name(classify_schedule(static_balanced(n, threads))), "static")
          << n << " " << threads;
      EXPECT_EQ(schedule_name(classify_schedule(static_greedy(n, threads))), "static")
          << n << " " << threads;
    }
  }
  // Greedy with an idle thread: 9 iterations on 4 threads = 3, 3, 3, 0.
  const RecoveredSchedule idle = classify_schedule(static_greedy(9, 4));
  EXPECT_EQ(schedule_name(idle), "static");
  EXPECT_EQ(idle.threads, 3u);
}

TEST(ClassifySchedule, StaticUnchunkedNeedsThreadOrder) {
  Chunks chunks = static_balanced(1024, 4);
  std::swap(chunks[1], chunks[2]);
  EXPECT_NE(classify_schedule(chunks).kind, ScheduleKind::Static);
}

TEST(ClassifySchedule, StaticChunked) {
  const RecoveredSchedule s = classify_schedule(static_chunked(1024, 4, 4));
  EXPECT_EQ(s.kind, ScheduleKind::Static);
  EXPECT_EQ(s.chunk, 4);
  EXPECT_EQ(schedule_name(s), "static,4");
  EXPECT_EQ(s.evidence, "4 threads, 1024 iterations, 256 chunks of 4, round-robin in thread order");
  EXPECT_EQ(schedule_name(classify_schedule(static_chunked(1023, 4, 4))), "static,4");
  EXPECT_EQ(schedule_name(classify_schedule(static_chunked(1000, 3, 7))), "static,7");
  EXPECT_EQ(schedule_name(classify_schedule(static_chunked(1001, 4, 1))), "static,1");
}

TEST(ClassifySchedule, DynamicWithRandomOrderAndMerges) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    const Chunks chunks = hand_out(dynamic_sizes(1024, 16), 4, seed, 30);
    const RecoveredSchedule s = classify_schedule(chunks);
    EXPECT_EQ(schedule_name(s), "dynamic,16") << "seed " << seed << ": " << s.evidence;
    EXPECT_EQ(s.iterations, 1024);
    // N not divisible by T nor by the chunk: the last chunk has 8.
    const RecoveredSchedule odd = classify_schedule(hand_out(dynamic_sizes(1000, 16), 3, seed, 30));
    EXPECT_EQ(schedule_name(odd), "dynamic,16") << "seed " << seed << ": " << odd.evidence;
    // Larger chunks relative to the loop.
    const RecoveredSchedule big = classify_schedule(hand_out(dynamic_sizes(1024, 64), 4, seed, 30));
    EXPECT_EQ(schedule_name(big), "dynamic,64") << "seed " << seed << ": " << big.evidence;
    const RecoveredSchedule one = classify_schedule(hand_out(dynamic_sizes(1024, 1), 4, seed, 30));
    EXPECT_EQ(schedule_name(one), "dynamic,1") << "seed " << seed << ": " << one.evidence;
  }
}

TEST(ClassifySchedule, DynamicEvidenceCountsRuns) {
  const Chunks chunks = hand_out(dynamic_sizes(1024, 16), 4, 3, 30);
  const RecoveredSchedule s = classify_schedule(chunks);
  const std::string runs = std::to_string(run_count(merged(chunks))) + " runs";
  EXPECT_EQ(s.evidence.rfind("4 threads, 1024 iterations, " + runs + ", all multiples of 16", 0),
            0u)
      << s.evidence;
  EXPECT_NE(s.evidence.find("not round-robin"), std::string::npos);
}

struct GuidedCase {
  Rule rule;
  int64_t n;
  int threads;
  int64_t min_chunk;
};

// The minimum chunk only shows in the last few chunks (about T of them);
// when merges hide their boundaries the fit may explain the runs with a
// larger minimum (it picks the guided sequence implying the fewest merges),
// so with merges the chunk is checked to lie between the true minimum and
// the smallest non-final run; without merges it must be exact.
TEST(ClassifySchedule, GuidedWithRandomMerges) {
  const GuidedCase cases[] = {
      {Rule::Libgomp, 1024, 4, 1},    {Rule::Libgomp, 1024, 4, 4},
      {Rule::Libgomp, 1001, 3, 2},    {Rule::Libgomp, 100000, 8, 1},
      {Rule::LibompCeil, 1024, 4, 1}, {Rule::LibompCeil, 1024, 4, 4},
      {Rule::LibompCeil, 1001, 3, 2}, {Rule::Libomp, 1024, 4, 1},
      {Rule::Libomp, 1001, 3, 3},     {Rule::Libomp, 100000, 8, 16},
  };
  for (const GuidedCase& c : cases) {
    const std::vector<int64_t> sizes = guided_sizes(c.rule, c.n, c.threads, c.min_chunk);
    for (uint32_t seed = 1; seed <= 50; ++seed) {
      const Chunks chunks = hand_out(sizes, c.threads, seed, 30);
      const RecoveredSchedule s = classify_schedule(chunks);
      EXPECT_EQ(s.kind, ScheduleKind::Guided)
          << "rule " << static_cast<int>(c.rule) << " n " << c.n << " min " << c.min_chunk
          << " seed " << seed << ": " << s.evidence;
      EXPECT_GE(s.chunk, c.min_chunk) << s.evidence;
      EXPECT_LE(s.chunk, smallest_non_final(chunks)) << s.evidence;
      EXPECT_EQ(s.iterations, c.n);
      const RecoveredSchedule exact = classify_schedule(hand_out(sizes, c.threads, seed, -1));
      EXPECT_EQ(exact.kind, ScheduleKind::Guided) << exact.evidence;
      EXPECT_EQ(exact.chunk, c.min_chunk)
          << "rule " << static_cast<int>(c.rule) << " n " << c.n << " min " << c.min_chunk
          << " seed " << seed << ": " << exact.evidence;
    }
  }
}

TEST(ClassifySchedule, GuidedSpecialShapes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    // 512, 256, ..., 8, 4, 4: all multiples of the smallest, yet guided.
    const RecoveredSchedule halving =
        classify_schedule(hand_out(guided_sizes(Rule::Libgomp, 1024, 2, 4), 2, seed, -1));
    EXPECT_EQ(schedule_name(halving), "guided,4") << halving.evidence;
    // First chunk 32 = 2 x the minimum 16.
    const RecoveredSchedule flat =
        classify_schedule(hand_out(guided_sizes(Rule::LibompCeil, 1024, 16, 16), 16, seed, -1));
    EXPECT_EQ(schedule_name(flat), "guided,16") << flat.evidence;
  }
  // A guided loop whose first chunk is already the minimum is dynamic.
  EXPECT_EQ(
      schedule_name(classify_schedule(hand_out(guided_sizes(Rule::Libgomp, 100, 8, 16), 8, 1, -1))),
      "dynamic,16");
}

TEST(ClassifySchedule, GuidedWithoutMerges) {
  const Chunks chunks = hand_out(guided_sizes(Rule::Libgomp, 1024, 4, 1), 4, 5, 0);
  const RecoveredSchedule s = classify_schedule(chunks);
  EXPECT_EQ(schedule_name(s), "guided,1") << s.evidence;
  EXPECT_NE(s.evidence.find("libgomp"), std::string::npos) << s.evidence;
}

TEST(ClassifySchedule, RuntimeKindOnlyDerivesTheChunk) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Chunks chunks = hand_out(dynamic_sizes(1000, 16), 4, seed, 30);
    // Exact chunks: the mode.
    const RecoveredSchedule d = classify_schedule(chunks, ScheduleKind::Dynamic);
    EXPECT_EQ(schedule_name(d), "dynamic,16") << d.evidence;
    EXPECT_EQ(d.evidence.rfind("runtime dynamic: ", 0), 0u) << d.evidence;
    // Merged runs: some sizes are not multiples of the mode, or the mode is.
    EXPECT_EQ(schedule_name(classify_schedule(merged(chunks), ScheduleKind::Dynamic)),
              "dynamic,16");
    const Chunks guided = hand_out(guided_sizes(Rule::Libgomp, 1000, 4, 5), 4, seed, 30);
    EXPECT_EQ(schedule_name(classify_schedule(guided, ScheduleKind::Guided)), "guided,5");
  }
  EXPECT_EQ(schedule_name(classify_schedule(static_chunked(1024, 4, 8), ScheduleKind::Static)),
            "static,8");
  EXPECT_EQ(schedule_name(classify_schedule(static_balanced(1024, 4), ScheduleKind::Static)),
            "static");
  // The runtime's word is kept even when the chunks look static.
  EXPECT_EQ(schedule_name(classify_schedule(static_chunked(1024, 4, 8), ScheduleKind::Dynamic)),
            "dynamic,8");
  // Mode with ties: the smaller size.
  const Chunks tie{{{0, 4}, {12, 20}}, {{4, 12}, {20, 24}, {24, 26}}};
  EXPECT_EQ(schedule_name(classify_schedule(tie, ScheduleKind::Dynamic)), "dynamic,4");
}

TEST(ClassifySchedule, IterationsNeedNotStartAtZero) {
  Chunks chunks = static_chunked(1024, 4, 4);
  for (auto& thread : chunks) {
    for (IterationChunk& c : thread) c.begin += 100, c.end += 100;
  }
  const RecoveredSchedule s = classify_schedule(chunks);
  EXPECT_EQ(schedule_name(s), "static,4");
  EXPECT_EQ(s.iterations, 1024);
}

TEST(ClassifySchedule, BadInputIsUnknown) {
  const RecoveredSchedule overlap = classify_schedule({{{0, 10}}, {{5, 20}}});
  EXPECT_EQ(overlap.kind, ScheduleKind::Unknown);
  EXPECT_EQ(overlap.evidence, "chunks overlap at iteration 5");
  const RecoveredSchedule gap = classify_schedule({{{0, 10}}, {{12, 20}}});
  EXPECT_EQ(gap.kind, ScheduleKind::Unknown);
  EXPECT_EQ(gap.evidence, "no chunk holds iteration 10");
  EXPECT_EQ(classify_schedule({{}, {}}).evidence, "no iterations");
  EXPECT_EQ(classify_schedule({{{5, 3}}}).kind, ScheduleKind::Unknown);
  EXPECT_EQ(schedule_name(classify_schedule({})), "unknown");
  // A runtime kind survives bad chunks, without a chunk.
  const RecoveredSchedule runtime = classify_schedule({{{0, 10}}, {{5, 20}}}, ScheduleKind::Guided);
  EXPECT_EQ(schedule_name(runtime), "guided");
  // One thread ran everything of a 4-thread team: not a static block.
  EXPECT_EQ(classify_schedule({{}, {{0, 100}}, {}, {}}).kind, ScheduleKind::Unknown);
}

TEST(ScheduleName, Forms) {
  RecoveredSchedule s;
  EXPECT_EQ(schedule_name(s), "unknown");
  s.kind = ScheduleKind::Static;
  EXPECT_EQ(schedule_name(s), "static");
  s.chunk = 4;
  EXPECT_EQ(schedule_name(s), "static,4");
  s.kind = ScheduleKind::Dynamic;
  s.chunk = 16;
  EXPECT_EQ(schedule_name(s), "dynamic,16");
  s.kind = ScheduleKind::Guided;
  s.chunk = 1;
  EXPECT_EQ(schedule_name(s), "guided,1");
}

// ---------------------------------------------------------------- traces

constexpr uint64_t kArray = 0x7f3a00010000;

uint64_t address(int64_t iteration, int64_t stride) {
  return kArray + static_cast<uint64_t>(iteration * stride);
}

// The streams of a[i] (address kArray + stride * i) under an assignment:
// one loop node per chunk (`for i0 = 0 to c-1 / val base + stride*i0`), a
// literal value for a chunk of one iteration.
std::vector<TracedInstruction> streams_of(const Chunks& chunks, int64_t stride) {
  std::vector<TracedInstruction> streams;
  for (size_t t = 0; t < chunks.size(); ++t) {
    if (chunks[t].empty()) continue;
    TracedInstruction stream;
    stream.thread = static_cast<uint32_t>(t);
    stream.pc = 0x401234;
    stream.access_size = static_cast<uint32_t>(std::abs(stride));
    stream.reads = true;
    for (const IterationChunk& c : chunks[t]) {
      const uint64_t base = address(c.begin, stride);
      if (c.end - c.begin == 1) {
        stream.trace.elements.push_back(trace_value(base));
      } else {
        stream.trace.elements.push_back(
            trace_loop(static_cast<uint64_t>(c.end - c.begin), {trace_value(base, {stride})}));
      }
    }
    stream.accesses = trace_length(stream.trace);
    streams.push_back(std::move(stream));
  }
  return streams;
}

TEST(ChunksFromTraces, EndToEnd) {
  struct Case {
    std::string name;
    Chunks chunks;
  };
  std::vector<Case> cases{{"static", static_balanced(1024, 4)},
                          {"static", static_balanced(1023, 4)},
                          {"static,4", static_chunked(1024, 4, 4)},
                          {"static,4", static_chunked(1022, 4, 4)}};
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    cases.push_back({"dynamic,16", hand_out(dynamic_sizes(1024, 16), 4, seed, 30)});
  }
  for (const Case& c : cases) {
    for (int64_t stride : {8, -8, 4}) {
      const auto recovered = chunks_from_traces(streams_of(c.chunks, stride), 4);
      ASSERT_TRUE(recovered.has_value()) << c.name << " stride " << stride;
      EXPECT_EQ(*recovered, merged(c.chunks)) << c.name << " stride " << stride;
      const RecoveredSchedule s = classify_schedule(*recovered);
      EXPECT_EQ(schedule_name(s), c.name) << "stride " << stride << ": " << s.evidence;
    }
  }
}

TEST(ChunksFromTraces, GuidedEndToEnd) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Chunks chunks = hand_out(guided_sizes(Rule::Libgomp, 1000, 4, 2), 4, seed, 30);
    const auto recovered = chunks_from_traces(streams_of(chunks, -8), 4);
    ASSERT_TRUE(recovered.has_value());
    const RecoveredSchedule s = classify_schedule(*recovered);
    EXPECT_EQ(s.kind, ScheduleKind::Guided) << s.evidence;
    EXPECT_GE(s.chunk, 2);
    const auto exact = chunks_from_traces(
        streams_of(hand_out(guided_sizes(Rule::Libgomp, 1000, 4, 2), 4, seed, -1), -8), 4);
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(schedule_name(classify_schedule(*exact)), "guided,2");
  }
}

TEST(ChunksFromTraces, CompressedRoundRobin) {
  // static,4 on 4 threads over 1024 doubles, as the compressor writes it:
  //   for i0 = 0 to 63 / for i1 = 0 to 3 / val a + 32*t + 128*i0 + 8*i1
  std::vector<TracedInstruction> streams;
  for (uint32_t t = 0; t < 4; ++t) {
    TracedInstruction stream;
    stream.thread = t;
    stream.access_size = 8;
    stream.writes = true;
    stream.trace.elements.push_back(
        trace_loop(64, {trace_loop(4, {trace_value(kArray + 32 * t, {128, 8})})}));
    stream.accesses = 256;
    streams.push_back(stream);
  }
  const auto recovered = chunks_from_traces(streams, 4);
  ASSERT_TRUE(recovered.has_value());
  EXPECT_EQ(*recovered, static_chunked(1024, 4, 4));
  EXPECT_EQ(schedule_name(classify_schedule(*recovered)), "static,4");
}

TEST(ChunksFromTraces, InstructionsThatDoNotQualify) {
  const Chunks chunks = static_balanced(64, 4);
  ASSERT_TRUE(chunks_from_traces(streams_of(chunks, 8), 4).has_value());
  // A thread number beyond the team.
  EXPECT_FALSE(chunks_from_traces(streams_of(chunks, 8), 3).has_value());
  // Lost accesses: iterations missing.
  auto lost = streams_of(chunks, 8);
  lost[1].lost = 1;
  EXPECT_FALSE(chunks_from_traces(lost, 4).has_value());
  // Two streams of one thread.
  auto twice = streams_of(chunks, 8);
  twice[1].thread = 0;
  EXPECT_FALSE(chunks_from_traces(twice, 4).has_value());
  // The same address every iteration (a reduction variable).
  auto same = streams_of(chunks, 8);
  for (auto& s : same) s.trace.elements = {trace_loop(16, {trace_value(kArray, {0})})};
  EXPECT_FALSE(chunks_from_traces(same, 4).has_value());
  // Not one progression: thread 0 skips a[15] and reads a[64] instead.
  auto gap = streams_of(chunks, 8);
  gap[0].trace.elements = {trace_loop(15, {trace_value(address(0, 8), {8})}),
                           trace_value(address(64, 8))};
  EXPECT_FALSE(chunks_from_traces(gap, 4).has_value());
  // Distinct addresses but not evenly spaced: a[2i] on thread 3.
  auto spaced = streams_of(chunks, 8);
  spaced[3].trace.elements = {trace_loop(16, {trace_value(address(48, 8), {16})})};
  EXPECT_FALSE(chunks_from_traces(spaced, 4).has_value());
  // A thread meeting its iterations out of order (they must increase):
  // a[40..47], then a[32..39].
  auto backwards = streams_of(chunks, 8);
  backwards[2].trace.elements = {trace_loop(8, {trace_value(address(40, 8), {8})}),
                                 trace_loop(8, {trace_value(address(32, 8), {8})})};
  EXPECT_FALSE(chunks_from_traces(backwards, 4).has_value());
  // Threads disagreeing on the direction.
  auto mixed = streams_of(chunks, 8);
  mixed[0].trace.elements = {trace_loop(16, {trace_value(address(15, 8), {-8})})};
  EXPECT_FALSE(chunks_from_traces(mixed, 4).has_value());
  // A single address.
  EXPECT_FALSE(chunks_from_traces(streams_of({{{0, 1}}}, 8), 1).has_value());
  EXPECT_FALSE(chunks_from_traces({}, 4).has_value());
}

TEST(ChunksFromTraces, SingleIterationChunksDefaultToAPositiveStride) {
  // static,1 over 4 iterations on 4 threads: no thread ran two iterations.
  const auto recovered = chunks_from_traces(streams_of(static_chunked(4, 4, 1), -8), 4);
  ASSERT_TRUE(recovered.has_value());
  // Read with s > 0: iteration k is the k-th lowest address (thread 3 first).
  const Chunks expected{{{3, 4}}, {{2, 3}}, {{1, 2}}, {{0, 1}}};
  EXPECT_EQ(*recovered, expected);
}

// Iterations handed out one or two at a time (the Thue-Morse order over 2
// threads): chunks of about one iteration, which traces cannot tell from an
// inner-loop instruction's: not trusted, Unknown (classify_schedule alone
// says dynamic,1).
TEST(ScheduleFromTraces, ChunksOfAboutOneIterationAreUnknown) {
  Chunks chunks(2);
  const int owner[16] = {0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0};
  for (int64_t i = 0; i < 16; ++i) {
    auto& mine = chunks[static_cast<size_t>(owner[i])];
    if (!mine.empty() && mine.back().end == i) {
      ++mine.back().end;
    } else {
      mine.push_back({i, i + 1});
    }
  }
  const std::vector<TracedInstruction> streams = streams_of(chunks, 8);
  ASSERT_TRUE(chunks_from_traces(streams, 2).has_value());
  EXPECT_EQ(schedule_name(classify_schedule(*chunks_from_traces(streams, 2))), "dynamic,1");
  const RecoveredSchedule s = schedule_from_traces(streams, 2);
  EXPECT_EQ(s.kind, ScheduleKind::Unknown);
  EXPECT_EQ(schedule_name(s), "unknown");
}

TEST(ScheduleFromTraces, LoopBodyInstructionKeepsItsSchedule) {
  const RecoveredSchedule s = schedule_from_traces(streams_of(static_chunked(1024, 4, 4), 8), 4);
  EXPECT_EQ(schedule_name(s), "static,4");
}

// Whole streams as the pieces of execution 0.
std::vector<StreamPiece> whole(const std::vector<TracedInstruction>& streams) {
  std::vector<StreamPiece> pieces;
  for (size_t s = 0; s < streams.size(); ++s) pieces.push_back({s, 0, 0, streams[s].accesses});
  return pieces;
}

TEST(PickRepresentative, FewestAccessesAmongQualifying) {
  const Chunks chunks = static_chunked(256, 4, 4);
  // An inner-loop instruction (a[i][j], 8 per iteration): qualifies too,
  // with 8 times the accesses.
  std::vector<TracedInstruction> inner;
  for (uint32_t t = 0; t < 4; ++t) {
    TracedInstruction s;
    s.thread = t;
    s.trace.elements.push_back(trace_loop(
        16, {trace_loop(4, {trace_loop(8, {trace_value(kArray + 256 * t, {1024, 64, 8})})})}));
    s.accesses = trace_length(s.trace);
    inner.push_back(s);
  }
  ASSERT_TRUE(chunks_from_traces(inner, 4).has_value());
  // A reduction variable: fewest accesses but does not qualify.
  std::vector<TracedInstruction> reduction = streams_of(chunks, 8);
  for (auto& s : reduction) {
    s.trace.elements = {trace_value(kArray)};
    s.accesses = 1;
  }
  auto candidate = [](const std::vector<TracedInstruction>& streams) {
    return TracedCandidate{streams, whole(streams)};
  };
  const std::vector<TracedCandidate> candidates{
      candidate(inner), candidate(reduction), candidate(streams_of(chunks, 8)), {}};
  const auto pick = pick_representative(candidates, 1, 4);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->candidate, 2u);
  ASSERT_EQ(pick->chunks.size(), 1u);
  EXPECT_EQ(pick->chunks[0], std::optional<ThreadChunks>(chunks));
  EXPECT_EQ(pick_representative({candidate(inner), candidate(reduction)}, 1, 4)->candidate, 0u);
  EXPECT_EQ(pick_representative({candidate(reduction)}, 1, 4), std::nullopt);
  EXPECT_EQ(pick_representative({}, 1, 4), std::nullopt);
}

// ---------------------------------------------------------------- executions

// The streams of a loop run once per `assignments` entry (execution e at
// base `bases[e]`), each thread's executions one after the other in one
// stream per thread, with the pieces of each execution.
struct Repeated {
  std::vector<TracedInstruction> streams;
  std::vector<StreamPiece> pieces;
};

Repeated repeated(const std::vector<Chunks>& assignments, const std::vector<uint64_t>& bases,
                  int64_t stride, uint32_t threads) {
  Repeated r;
  std::vector<TracedInstruction> by_thread(threads);
  for (uint32_t t = 0; t < threads; ++t) by_thread[t].thread = t;
  std::vector<std::vector<StreamPiece>> pieces(threads);
  for (size_t e = 0; e < assignments.size(); ++e) {
    for (uint32_t t = 0; t < threads && t < assignments[e].size(); ++t) {
      TracedInstruction& stream = by_thread[t];
      const uint64_t begin = trace_length(stream.trace);
      for (const IterationChunk& c : assignments[e][t])
        stream.trace.elements.push_back(trace_loop(
            static_cast<uint64_t>(c.end - c.begin),
            {trace_value(bases[e] + static_cast<uint64_t>(c.begin * stride), {stride})}));
      const uint64_t end = trace_length(stream.trace);
      if (end > begin) pieces[t].push_back({0, e, begin, end});
    }
  }
  for (uint32_t t = 0; t < threads; ++t) {
    if (by_thread[t].trace.elements.empty()) continue;
    by_thread[t].accesses = trace_length(by_thread[t].trace);
    for (StreamPiece& p : pieces[t]) {
      p.stream = r.streams.size();
      r.pieces.push_back(p);
    }
    r.streams.push_back(std::move(by_thread[t]));
  }
  return r;
}

// The cause of issue 18's loops without a schedule: a loop run several
// times revisits its addresses, so its whole-run streams never qualify;
// per execution they do.
TEST(ChunksPerExecution, RepeatedStaticLoopQualifiesPerExecution) {
  const Chunks blocks = static_balanced(1000, 4), chunked = static_chunked(1000, 4, 8);
  for (const Chunks& chunks : {blocks, chunked}) {
    const Repeated r = repeated({chunks, chunks, chunks}, {kArray, kArray, kArray}, 8, 4);
    EXPECT_FALSE(chunks_from_traces(r.streams, 4).has_value());  // the whole run mixed
    const auto per = chunks_per_execution(r.streams, r.pieces, 3, 4);
    ASSERT_EQ(per.size(), 3u);
    for (const auto& e : per) EXPECT_EQ(e, std::optional<ThreadChunks>(merged(chunks)));
  }
}

// Time-stepping codes write the other buffer every step: per execution the
// addresses are one progression, over the run two.
TEST(ChunksPerExecution, ArraysThatAlternateFromExecutionToExecution) {
  const Chunks chunks = static_chunked(512, 4, 8);
  const uint64_t other = kArray + 512 * 8 + 64;
  const Repeated r =
      repeated({chunks, chunks, chunks, chunks}, {kArray, other, kArray, other}, 8, 4);
  const auto per = chunks_per_execution(r.streams, r.pieces, 4, 4);
  for (const auto& e : per) {
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(schedule_name(classify_traced_chunks(*e)), "static,8");
  }
  // Downwards too.
  const Repeated down = repeated({chunks, chunks}, {other, kArray}, -8, 4);
  for (const auto& e : chunks_per_execution(down.streams, down.pieces, 2, 4)) {
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(*e, chunks);
  }
}

// A triangular nest: the parallel loop's trip count shrinks from one
// execution to the next; a thread may have nothing to do in the last ones.
TEST(ChunksPerExecution, TripCountsMayDiffer) {
  std::vector<Chunks> assignments;
  std::vector<uint64_t> bases;
  for (int64_t n : {64, 40, 9, 3}) {
    assignments.push_back(static_balanced(n, 4));
    bases.push_back(kArray);
  }
  const Repeated r = repeated(assignments, bases, 8, 4);
  const auto per = chunks_per_execution(r.streams, r.pieces, 4, 4);
  for (size_t e = 0; e < assignments.size(); ++e) {
    ASSERT_TRUE(per[e].has_value()) << e;
    EXPECT_EQ(*per[e], assignments[e]) << e;
    EXPECT_EQ(schedule_name(classify_traced_chunks(*per[e])), "static") << e;
  }
}

TEST(ChunksPerExecution, EachExecutionQualifiesOnItsOwn) {
  const Chunks chunks = static_balanced(64, 4);
  const Repeated r = repeated({chunks, chunks, chunks}, {kArray, kArray, kArray}, 8, 4);
  // Execution 1 of thread 2 reads one address twice: only execution 1 fails.
  Repeated twice = r;
  twice.streams[2].trace.elements[1] = trace_loop(16, {trace_value(address(32, 8), {0})});
  auto per = chunks_per_execution(twice.streams, twice.pieces, 3, 4);
  EXPECT_TRUE(per[0].has_value());
  EXPECT_FALSE(per[1].has_value());
  EXPECT_TRUE(per[2].has_value());
  // A piece past the trace (its accesses lost): that execution only.
  Repeated past = r;
  past.streams[3].trace.elements.pop_back();
  per = chunks_per_execution(past.streams, past.pieces, 3, 4);
  EXPECT_TRUE(per[0].has_value());
  EXPECT_TRUE(per[1].has_value());
  EXPECT_FALSE(per[2].has_value());
  // A stream that lost accesses kept its first ones (the budget, a long
  // instance's limit): the executions past them fail, those before qualify.
  // Thread 0 ran 16 accesses per execution; 17 lost cut into execution 1.
  Repeated lost = r;
  ASSERT_EQ(lost.streams[0].accesses, 48u);
  lost.streams[0].lost = 17;
  per = chunks_per_execution(lost.streams, lost.pieces, 3, 4);
  EXPECT_EQ(per[0], std::optional<ThreadChunks>(chunks));
  EXPECT_FALSE(per[1].has_value());
  EXPECT_FALSE(per[2].has_value());
  lost.streams[0].lost = 16;  // execution 1 ends where the trace does
  per = chunks_per_execution(lost.streams, lost.pieces, 3, 4);
  EXPECT_TRUE(per[1].has_value());
  EXPECT_FALSE(per[2].has_value());
  // An execution without pieces, and pieces out of range, are ignored.
  std::vector<StreamPiece> pieces = r.pieces;
  pieces.push_back({9, 0, 0, 4});
  pieces.push_back({0, 7, 0, 4});
  per = chunks_per_execution(r.streams, pieces, 4, 4);
  ASSERT_EQ(per.size(), 4u);
  EXPECT_TRUE(per[0].has_value());
  EXPECT_FALSE(per[3].has_value());
  // Accesses in no piece are ignored: execution 1 alone.
  std::vector<StreamPiece> middle;
  for (const StreamPiece& p : r.pieces)
    if (p.execution == 1) middle.push_back({p.stream, 0, p.begin, p.end});
  per = chunks_per_execution(r.streams, middle, 1, 4);
  EXPECT_EQ(per[0], std::optional<ThreadChunks>(chunks));
  // Two pieces of one thread's execution that overlap.
  pieces = r.pieces;
  pieces.push_back({0, 0, 0, 2});
  per = chunks_per_execution(r.streams, pieces, 3, 4);
  EXPECT_FALSE(per[0].has_value());
  EXPECT_TRUE(per[1].has_value());
}

TEST(ChunksPerExecution, PicksTheInstructionThatQualifiesMostOften) {
  const Chunks chunks = static_balanced(64, 4);
  const Repeated body = repeated({chunks, chunks, chunks}, {kArray, kArray, kArray}, 8, 4);
  // Qualifies in executions 0 and 2 only, with fewer accesses (an
  // instruction of a branch that a[..] of execution 1 did not take).
  Repeated branch = repeated({chunks, chunks, chunks}, {kArray, kArray, kArray}, 8, 4);
  branch.streams[1].trace.elements[1] = trace_loop(16, {trace_value(address(16, 8), {0})});
  branch.pieces.erase(std::remove_if(branch.pieces.begin(), branch.pieces.end(),
                                     [](const StreamPiece& p) { return p.stream == 0; }),
                      branch.pieces.end());
  const auto pick =
      pick_representative({{branch.streams, branch.pieces}, {body.streams, body.pieces}}, 3, 4);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->candidate, 1u);
  EXPECT_EQ(pick->chunks.size(), 3u);
}

RecoveredSchedule execution(ScheduleKind kind, int64_t chunk, int64_t iterations = 1024,
                            unsigned threads = 4, const std::string& evidence = "") {
  RecoveredSchedule s;
  s.kind = kind;
  s.chunk = chunk;
  s.iterations = iterations;
  s.threads = threads;
  s.evidence = evidence;
  return s;
}

TEST(MergeExecutions, AllAgree) {
  const RecoveredSchedule m = merge_executions(
      std::vector<RecoveredSchedule>(12, execution(ScheduleKind::Static, 8, 4096, 4, "first")));
  EXPECT_EQ(schedule_name(m), "static,8");
  EXPECT_EQ(m.executions, 12);
  EXPECT_EQ(m.agreeing, 12);
  EXPECT_TRUE(m.others.empty());
  EXPECT_EQ(m.iterations, 4096);
  EXPECT_EQ(m.evidence, "first");
  const RecoveredSchedule one = merge_executions({execution(ScheduleKind::Guided, 2)});
  EXPECT_EQ(schedule_name(one), "guided,2");
  EXPECT_EQ(one.executions, 1);
  EXPECT_EQ(one.agreeing, 1);
}

TEST(MergeExecutions, TheMostFrequentScheduleWinsAndTheOthersAreCounted) {
  std::vector<RecoveredSchedule> e;
  e.push_back(execution(ScheduleKind::Static, 16, 512, 3, "round-robin by chance"));
  for (int i = 0; i < 7; ++i)
    e.push_back(execution(ScheduleKind::Dynamic, 16, 1000 + i, 4, "dynamic " + std::to_string(i)));
  e.push_back(RecoveredSchedule{});
  e.push_back(execution(ScheduleKind::Static, 16, 512, 3));
  const RecoveredSchedule m = merge_executions(e);
  EXPECT_EQ(schedule_name(m), "dynamic,16");
  EXPECT_EQ(m.executions, 10);
  EXPECT_EQ(m.agreeing, 7);
  EXPECT_EQ(m.others, (std::vector<ScheduleTally>{{"static,16", 2}, {"unknown", 1}}));
  EXPECT_EQ(m.evidence, "dynamic 0");
  EXPECT_EQ(m.iterations, 1006);  // the largest among the agreeing ones
  EXPECT_EQ(m.threads, 4u);
}

TEST(MergeExecutions, TiesGoToTheFirstAndUnknownNeverWinsOverASchedule) {
  const RecoveredSchedule tie =
      merge_executions({execution(ScheduleKind::Guided, 4), execution(ScheduleKind::Guided, 8),
                        execution(ScheduleKind::Guided, 8), execution(ScheduleKind::Guided, 4)});
  EXPECT_EQ(schedule_name(tie), "guided,4");
  EXPECT_EQ(tie.agreeing, 2);
  const RecoveredSchedule rare = merge_executions(
      {RecoveredSchedule{}, RecoveredSchedule{}, execution(ScheduleKind::Static, 0)});
  EXPECT_EQ(schedule_name(rare), "static");
  EXPECT_EQ(rare.agreeing, 1);
  EXPECT_EQ(rare.others, (std::vector<ScheduleTally>{{"unknown", 2}}));
  const RecoveredSchedule none = merge_executions({RecoveredSchedule{}, RecoveredSchedule{}});
  EXPECT_EQ(none.kind, ScheduleKind::Unknown);
  EXPECT_EQ(none.executions, 2);
  EXPECT_EQ(none.agreeing, 2);
  const RecoveredSchedule empty = merge_executions({});
  EXPECT_EQ(empty.kind, ScheduleKind::Unknown);
  EXPECT_EQ(empty.executions, 0);
  EXPECT_EQ(empty.agreeing, 0);
}

}  // namespace
}  // namespace weft
