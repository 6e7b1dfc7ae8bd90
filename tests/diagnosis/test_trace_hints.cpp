// Tests of src/diagnosis/trace_hints: stride classes (MAQAO's RECOM and
// ITRLSOL cases), 4K aliasing between a store and a load, the leading
// repetition of a stream and the reuse of loads within their loop nest.
#include <gtest/gtest.h>

#include <random>

#include "diagnosis/trace_hints.h"

namespace weft {
namespace {

TracedInstruction traced(std::vector<TraceNode> elements, uint32_t access_size = 8,
                         bool reads = true, bool writes = false, uint64_t pc = 0x400000,
                         uint32_t thread = 0) {
  TracedInstruction instruction;
  instruction.thread = thread;
  instruction.pc = pc;
  instruction.access_size = access_size;
  instruction.reads = reads;
  instruction.writes = writes;
  instruction.trace.elements = std::move(elements);
  instruction.accesses = trace_length(instruction.trace);
  return instruction;
}

constexpr uint64_t kA = 0x7f0000100000;

// ---------------------------------------------------------------- strides

TEST(StridePattern, StrideTwoOnDoublesIsNonUnit) {
  // for (i = 0; i < n; i += 2) x += a[i]: MAQAO's RECOM case.
  const StridePattern p = stride_pattern(traced({trace_loop(1000, {trace_value(kA, {16})})}));
  EXPECT_EQ(p.kind, StrideClass::NonUnit);
  EXPECT_EQ(p.stride, 16);
  EXPECT_EQ(p.coverage, 1.0);
  EXPECT_EQ(p.addresses, 1000u);
  EXPECT_FALSE(p.column_wise);
  EXPECT_STREQ(stride_class_name(p.kind), "non-unit");
}

TEST(StridePattern, ColumnWiseNestIsLargeAndColumnWise) {
  // for i0 < 64 / for i1 < 64 / val B + 8*i0 + 512*i1: the inner loop walks
  // a column of a 64 x 64 row-major double matrix (ITRLSOL).
  const StridePattern p =
      stride_pattern(traced({trace_loop(64, {trace_loop(64, {trace_value(kA, {8, 512})})})}));
  EXPECT_EQ(p.kind, StrideClass::Large);
  EXPECT_EQ(p.stride, 512);
  EXPECT_TRUE(p.column_wise);
  EXPECT_EQ(p.outer_stride, 8);
  EXPECT_EQ(p.coverage, 1.0);
  EXPECT_EQ(p.addresses, 4096u);
}

TEST(StridePattern, RowWiseNestIsUnit) {
  const StridePattern p =
      stride_pattern(traced({trace_loop(64, {trace_loop(64, {trace_value(kA, {512, 8})})})}));
  EXPECT_EQ(p.kind, StrideClass::Unit);
  EXPECT_EQ(p.stride, 8);
  EXPECT_FALSE(p.column_wise);
  EXPECT_EQ(p.outer_stride, 0);
}

TEST(StridePattern, LargeStrideWithoutSmallOuterStrideIsNotColumnWise) {
  EXPECT_FALSE(stride_pattern(traced({trace_loop(1000, {trace_value(kA, {4096})})})).column_wise);
  // The outer stride is not smaller than a line: not column-wise either.
  const StridePattern p =
      stride_pattern(traced({trace_loop(8, {trace_loop(64, {trace_value(kA, {128, 4096})})})}));
  EXPECT_EQ(p.kind, StrideClass::Large);
  EXPECT_FALSE(p.column_wise);
}

TEST(StridePattern, UnitStreams) {
  const StridePattern up = stride_pattern(traced({trace_loop(1024, {trace_value(kA, {8})})}));
  EXPECT_EQ(up.kind, StrideClass::Unit);
  EXPECT_EQ(up.stride, 8);
  EXPECT_STREQ(stride_class_name(up.kind), "unit");
  const StridePattern down = stride_pattern(traced({trace_loop(1024, {trace_value(kA, {-4})})}, 4));
  EXPECT_EQ(down.kind, StrideClass::Unit);
  EXPECT_EQ(down.stride, -4);
}

TEST(StridePattern, RandomStreamIsIrregular) {
  std::mt19937_64 rng(7);
  std::vector<TraceNode> values;
  for (int i = 0; i < 1000; ++i) values.push_back(trace_value(kA + (rng() % (1 << 20)) * 8));
  const StridePattern p = stride_pattern(traced(values));
  EXPECT_EQ(p.kind, StrideClass::Irregular);
  EXPECT_EQ(p.coverage, 0.0);
  EXPECT_EQ(p.addresses, 1000u);
  EXPECT_EQ(stride_pattern(traced({})).kind, StrideClass::Irregular);
}

TEST(StridePattern, SameAddressRepeatedIsZero) {
  // MAQAO's figure 13: each thread stores c[i] 128 times in a row.
  const StridePattern p = stride_pattern(
      traced({trace_loop(128, {trace_loop(128, {trace_value(0x45255b0, {1024, 0})})})}));
  EXPECT_EQ(p.kind, StrideClass::Zero);
  EXPECT_EQ(p.stride, 0);
  EXPECT_FALSE(p.column_wise);
}

TEST(StridePattern, StridesAreWeightedByTheAddressesTheyCover) {
  // 700 addresses at stride 8, 300 at stride 16: unit, coverage 0.7.
  const StridePattern p = stride_pattern(
      traced({trace_loop(300, {trace_value(kA, {16})}),
              trace_loop(7, {trace_loop(100, {trace_value(kA + 0x10000, {4096, 8})})})}));
  EXPECT_EQ(p.kind, StrideClass::Unit);
  EXPECT_EQ(p.stride, 8);
  EXPECT_DOUBLE_EQ(p.coverage, 0.7);
  // 400 under a loop, 600 irregular: Irregular, the best stride still reported.
  std::vector<TraceNode> elements{trace_loop(400, {trace_value(kA, {8})})};
  for (int i = 0; i < 600; ++i) elements.push_back(trace_value(kA + 0x100000 + 24 * (i % 7) * i));
  const StridePattern q = stride_pattern(traced(elements));
  EXPECT_EQ(q.kind, StrideClass::Irregular);
  EXPECT_EQ(q.stride, 8);
  EXPECT_DOUBLE_EQ(q.coverage, 0.4);
}

TEST(StridePattern, ThreadsStreamsArePooled) {
  // One instruction's streams in two threads (a column sweep of a 512 x 512
  // double matrix split by columns): thread 0's 3 columns and thread 1's 1
  // column at stride 4096, and 256 irregular addresses of thread 1 (a
  // remainder it reads through an index): 2304 addresses, 2048 at 4096.
  const TracedInstruction t0 =
      traced({trace_loop(3, {trace_loop(512, {trace_value(kA, {8, 4096})})})}, 8, true, false,
             0x400000, 0);
  std::vector<TraceNode> elements{trace_loop(512, {trace_value(kA + 24, {4096})})};
  for (int i = 0; i < 256; ++i) elements.push_back(trace_value(kA + 8 * ((i * 37) % 509)));
  const TracedInstruction t1 = traced(elements, 8, true, false, 0x400000, 1);
  const StridePattern pooled = stride_pattern(std::vector<const TracedInstruction*>{&t0, &t1});
  EXPECT_EQ(pooled.kind, StrideClass::Large);
  EXPECT_EQ(pooled.stride, 4096);
  EXPECT_EQ(pooled.addresses, 2304u);
  EXPECT_DOUBLE_EQ(pooled.coverage, 2048.0 / 2304.0);
  // Thread 1 alone: 512 of 768 at 4096.
  EXPECT_DOUBLE_EQ(stride_pattern(t1).coverage, 512.0 / 768.0);
}

TEST(StridePattern, InnermostLoopThatIteratesGivesTheStride) {
  // for i0 < 100 / for i1 = 0 to 0 / val A + 16*i0 + 4*i1: i1 never moves.
  const StridePattern p =
      stride_pattern(traced({trace_loop(100, {trace_loop(1, {trace_value(kA, {16, 4})})})}));
  EXPECT_EQ(p.kind, StrideClass::NonUnit);
  EXPECT_EQ(p.stride, 16);
  // Two values per iteration: each has the loop's stride.
  const StridePattern q = stride_pattern(
      traced({trace_loop(100, {trace_value(kA, {128}), trace_value(kA + 8, {128})})}));
  EXPECT_EQ(q.kind, StrideClass::Large);
  EXPECT_EQ(q.stride, 128);
  EXPECT_EQ(q.addresses, 200u);
}

TEST(StridePattern, LineSizeBoundary) {
  EXPECT_EQ(stride_pattern(traced({trace_loop(10, {trace_value(kA, {64})})})).kind,
            StrideClass::Large);
  EXPECT_EQ(stride_pattern(traced({trace_loop(10, {trace_value(kA, {56})})})).kind,
            StrideClass::NonUnit);
  EXPECT_EQ(stride_pattern(traced({trace_loop(10, {trace_value(kA, {64})})}), 128).kind,
            StrideClass::NonUnit);
}

// ---------------------------------------------------------------- 4K aliasing

TEST(Aliasing4k, TheNextIterationsLoadAliasesTheStore) {
  // for i: b[i] = 2 * a[i], b = a + 4096 + 8: b[i] has the page offset of
  // a[i + 1], which the next iteration loads after the store.
  const uint64_t b = kA + 4096 + 8;
  std::vector<TracedInstruction> region{
      traced({trace_loop(1000, {trace_value(kA, {8})})}, 8, true, false, 0x401000),
      traced({trace_loop(1000, {trace_value(b, {8})})}, 8, false, true, 0x401008)};
  const std::vector<AliasingPair> pairs = find_4k_aliasing(region);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].store_pc, 0x401008u);
  EXPECT_EQ(pairs[0].load_pc, 0x401000u);
  EXPECT_EQ(pairs[0].thread, 0u);
  EXPECT_EQ(pairs[0].fraction, 0.999);  // the last store has no later load
  EXPECT_EQ(pairs[0].distance, -4096);  // load address - store address
  EXPECT_EQ(pairs[0].compared, 1000u);
}

TEST(Aliasing4k, OneIterationsLoadBeforeItsStoreDoesNotWait) {
  // b[i] = 2 * a[i], b = a + 4096: a[i] shares its low 12 bits with b[i]
  // only, and is loaded before b[i] is stored (a lower pc): no later load
  // aliases. The same streams with the load after the store in the code
  // (y = a[i] after b[i] = x) do.
  const uint64_t b = kA + 4096;
  std::vector<TracedInstruction> load_first{
      traced({trace_loop(1000, {trace_value(kA, {8})})}, 8, true, false, 0x401000),
      traced({trace_loop(1000, {trace_value(b, {8})})}, 8, false, true, 0x401008)};
  EXPECT_TRUE(find_4k_aliasing(load_first).empty());
  std::vector<TracedInstruction> store_first{
      traced({trace_loop(1000, {trace_value(kA, {8})})}, 8, true, false, 0x401010),
      traced({trace_loop(1000, {trace_value(b, {8})})}, 8, false, true, 0x401008)};
  const std::vector<AliasingPair> pairs = find_4k_aliasing(store_first);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].fraction, 1.0);
  EXPECT_EQ(pairs[0].distance, -4096);
}

TEST(Aliasing4k, OneLineFurtherDoesNotAlias) {
  // b = a + 4096 + 72: b[i] shares its page offset with a[i + 9], beyond the
  // next 8 loads.
  const uint64_t b = kA + 4096 + 72;
  std::vector<TracedInstruction> region{
      traced({trace_loop(1000, {trace_value(kA, {8})})}, 8, true, false, 0x401000),
      traced({trace_loop(1000, {trace_value(b, {8})})}, 8, false, true, 0x401008)};
  EXPECT_TRUE(find_4k_aliasing(region).empty());
  // A window of 9 reaches a[i + 9].
  const std::vector<AliasingPair> wide = find_4k_aliasing(region, 9);
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_EQ(wide[0].distance, -4096);
}

TEST(Aliasing4k, SameAddressSamePcOtherThreadAreNotPairs) {
  // The same address is a dependence, not aliasing.
  std::vector<TracedInstruction> same{
      traced({trace_loop(100, {trace_value(kA, {8})})}, 8, true, false, 0x1),
      traced({trace_loop(100, {trace_value(kA, {8})})}, 8, false, true, 0x2)};
  EXPECT_TRUE(find_4k_aliasing(same).empty());
  // A read-modify-write instruction is not paired with itself.
  std::vector<TracedInstruction> rmw{
      traced({trace_loop(100, {trace_value(kA, {8})})}, 8, true, true, 0x1)};
  EXPECT_TRUE(find_4k_aliasing(rmw).empty());
  // Streams of different threads are never compared.
  std::vector<TracedInstruction> threads{
      traced({trace_loop(100, {trace_value(kA, {8})})}, 8, true, false, 0x1, 0),
      traced({trace_loop(100, {trace_value(kA + 4096, {8})})}, 8, false, true, 0x2, 1)};
  EXPECT_TRUE(find_4k_aliasing(threads).empty());
  // Two loads: no store, no pair.
  std::vector<TracedInstruction> loads{
      traced({trace_loop(100, {trace_value(kA, {8})})}, 8, true, false, 0x1),
      traced({trace_loop(100, {trace_value(kA + 4096, {8})})}, 8, true, false, 0x2)};
  EXPECT_TRUE(find_4k_aliasing(loads).empty());
}

TEST(Aliasing4k, HalfOfTheStorePositionsIsEnough) {
  // The store aliases the next iteration's load for its first `aliased`
  // positions of 1000, then moves to an address 0x800 off in the page.
  for (uint64_t aliased : {500u, 499u}) {
    const uint64_t far = kA + 0x100000 + 0x800 + 8 * aliased;
    std::vector<TracedInstruction> region{
        traced({trace_loop(1000, {trace_value(kA, {8})})}, 8, true, false, 0x10),
        traced({trace_loop(aliased, {trace_value(kA + 8192 + 8, {8})}),
                trace_loop(1000 - aliased, {trace_value(far, {8})})},
               8, false, true, 0x20)};
    const std::vector<AliasingPair> pairs = find_4k_aliasing(region);
    if (aliased == 500) {
      ASSERT_EQ(pairs.size(), 1u);
      EXPECT_EQ(pairs[0].fraction, 0.5);
      EXPECT_EQ(pairs[0].distance, -8192);
    } else {
      EXPECT_TRUE(pairs.empty());
    }
  }
}

TEST(Aliasing4k, RmwInstructionIsBothStoreAndLoad) {
  // a[i] += b[i] with b = a + 4096 - 8: the rmw on a is the store, b the
  // load; b[i + 1], loaded in the next iteration, shares a[i]'s low bits.
  std::vector<TracedInstruction> region{
      traced({trace_loop(256, {trace_value(kA + 4096 - 8, {8})})}, 8, true, false, 0x10),
      traced({trace_loop(256, {trace_value(kA, {8})})}, 8, true, true, 0x20)};
  const std::vector<AliasingPair> pairs = find_4k_aliasing(region);
  ASSERT_EQ(pairs.size(), 1u);  // 0x10 only reads; 0x20 against itself is no pair
  EXPECT_EQ(pairs[0].store_pc, 0x20u);
  EXPECT_EQ(pairs[0].load_pc, 0x10u);
  EXPECT_EQ(pairs[0].distance, 4096);
}

// ---------------------------------------------------------------- reuse

TEST(LeadingRepetition, TimeStepLoopsAroundASweep) {
  // for t < 10 { for i < 100: a[i] }: 10 replays of 100 addresses.
  Repetition r =
      leading_repetition(LoopTrace{{trace_loop(10, {trace_loop(100, {trace_value(kA, {0, 8})})})}});
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(r.unit, 100u);
  // for t < 10 { for i < 100 { for k < 16: c[k] } }: the i loop replays too.
  r = leading_repetition(LoopTrace{
      {trace_loop(10, {trace_loop(100, {trace_loop(16, {trace_value(kA, {0, 0, 8})})})})}});
  EXPECT_EQ(r.count, 1000u);
  EXPECT_EQ(r.unit, 16u);
  // for t < 10 { for i < 100 { for k < 16: x[i + k] } }: only t replays.
  r = leading_repetition(LoopTrace{
      {trace_loop(10, {trace_loop(100, {trace_loop(16, {trace_value(kA, {0, 8, 8})})})})}});
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(r.unit, 1600u);
  // No leading replay: the outer loop moves.
  r = leading_repetition(LoopTrace{{trace_loop(10, {trace_loop(4, {trace_value(kA, {64, 8})})})}});
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.unit, 40u);
  r = leading_repetition(LoopTrace{});
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.unit, 0u);
}

TEST(LeadingRepetition, DoubleBufferedStepsWithAPartialLastPair) {
  // A Jacobi sweep over A, then over B, 3 times, then a last sweep over A
  // (7 time steps): 3 replays of both sweeps.
  const TraceNode sweep_a = trace_loop(4, {trace_loop(5, {trace_value(kA, {0, 64, 8})})});
  const TraceNode sweep_b = trace_loop(4, {trace_loop(5, {trace_value(kA + 4096, {0, 64, 8})})});
  const TraceNode last_a = trace_loop(4, {trace_loop(5, {trace_value(kA, {64, 8})})});
  Repetition r = leading_repetition(LoopTrace{{trace_loop(3, {sweep_a, sweep_b}), last_a}});
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.unit, 40u);
  // A last element that does not start another pair: no repetition.
  const TraceNode other = trace_loop(4, {trace_loop(5, {trace_value(kA + 64, {64, 8})})});
  r = leading_repetition(LoopTrace{{trace_loop(3, {sweep_a, sweep_b}), other}});
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.unit, 140u);
}

// A filter over 6 time steps: out[i] = sum_k taps[k] * sig[i + k], i < 128,
// k < 8; taps and sig on one line. Within a step each tap is reloaded 127
// times and each sample up to 8 times.
TEST(NestReuseTest, TimeStepsAreNotReuse) {
  constexpr uint64_t kSig = kA + 4096;
  const TracedInstruction taps =
      traced({trace_loop(6, {trace_loop(128, {trace_loop(8, {trace_value(kA, {0, 0, 8})})})})});
  const TracedInstruction sig =
      traced({trace_loop(6, {trace_loop(128, {trace_loop(8, {trace_value(kSig, {0, 8, 8})})})})});
  const NestReuse r = nest_reuse({&taps, &sig}, {true, true}, 64, 512);
  EXPECT_EQ(r.executions, 6u);
  EXPECT_EQ(r.loads, 2048u);
  EXPECT_EQ(r.distinct, 8u + 135u);
  EXPECT_EQ(r.reuses, 2048u - 143u);
  EXPECT_EQ(r.held, r.reuses);
  EXPECT_DOUBLE_EQ(r.degree, 2048.0 / 143.0);
  EXPECT_FALSE(r.truncated);

  // The copy-back of each step, sig[i] = out[i]: loaded once per step.
  const TracedInstruction out =
      traced({trace_loop(6, {trace_loop(128, {trace_value(kA + 8192, {0, 8})})})});
  const TracedInstruction store =
      traced({trace_loop(6, {trace_loop(128, {trace_value(kSig, {0, 8})})})}, 8, false, true);
  const NestReuse copy = nest_reuse({&out, &store}, {true, false}, 64, 512);
  EXPECT_EQ(copy.executions, 6u);
  EXPECT_EQ(copy.loads, 128u);
  EXPECT_EQ(copy.distinct, 128u);
  EXPECT_EQ(copy.reuses, 0u);
  EXPECT_EQ(copy.degree, 1.0);
}

TEST(NestReuseTest, AStreamThatMovesMakesTheOuterLoopPartOfTheNest) {
  // C[i][j] += A[i][k] * B[k][j] on 8 x 8 doubles (a row is a line): B is
  // reloaded for every i, with at most the 8 lines of B and the rows i - 1
  // and i of A between; A moves with i.
  constexpr uint64_t kB = kA + 4096;
  const TracedInstruction a =
      traced({trace_loop(8, {trace_loop(8, {trace_loop(8, {trace_value(kA, {64, 0, 8})})})})});
  const TracedInstruction b =
      traced({trace_loop(8, {trace_loop(8, {trace_loop(8, {trace_value(kB, {0, 8, 64})})})})});
  const NestReuse held = nest_reuse({&a, &b}, {false, true}, 64, 512);
  EXPECT_EQ(held.executions, 1u);
  EXPECT_EQ(held.loads, 512u);
  EXPECT_EQ(held.distinct, 64u);
  EXPECT_EQ(held.held, 448u);
  EXPECT_EQ(held.span, 10u);
  EXPECT_DOUBLE_EQ(held.degree, 8.0);
  // A cache of 8 lines holds none of them.
  const NestReuse small = nest_reuse({&a, &b}, {false, true}, 64, 8);
  EXPECT_EQ(small.reuses, 448u);
  EXPECT_EQ(small.held, 0u);
  EXPECT_EQ(small.degree, 1.0);
}

TEST(NestReuseTest, StreamsInterleaveInProportionToTheirLengths) {
  // Group: p q p (lines 0, 1, 0); the other stream: 6 accesses to lines
  // 2..7. Order: o0 p o1 o2 q o3 o4 p o5: 5 lines between the two p.
  const TracedInstruction group = traced({trace_value(kA), trace_value(kA + 64), trace_value(kA)});
  std::vector<TraceNode> lines;
  for (uint64_t i = 2; i < 8; ++i) lines.push_back(trace_value(kA + 64 * i));
  const TracedInstruction other = traced(lines, 8, false, true);
  NestReuse r = nest_reuse({&group, &other}, {true, false}, 64, 6);
  EXPECT_EQ(r.loads, 3u);
  EXPECT_EQ(r.distinct, 2u);
  EXPECT_EQ(r.reuses, 1u);
  EXPECT_EQ(r.held, 1u);
  EXPECT_EQ(r.span, 5u);
  EXPECT_DOUBLE_EQ(r.degree, 1.5);
  r = nest_reuse({&group, &other}, {true, false}, 64, 5);  // 5 lines: evicted
  EXPECT_EQ(r.held, 0u);
  // Equal lengths: ties go to the earlier stream, p o q o p: 3 lines.
  const TracedInstruction three =
      traced({trace_value(kA + 128), trace_value(kA + 192), trace_value(kA + 256)}, 8, false, true);
  r = nest_reuse({&group, &three}, {true, false}, 64, 512);
  EXPECT_EQ(r.span, 3u);
}

TEST(NestReuseTest, ScalarsAndLimits) {
  // A constant loaded in every iteration is no data.
  const TracedInstruction constant = traced({trace_loop(1000, {trace_value(kA, {0})})});
  const TracedInstruction data = traced({trace_loop(1000, {trace_value(kA + 4096, {8})})});
  NestReuse r = nest_reuse({&constant, &data}, {true, true}, 64, 512);
  EXPECT_EQ(r.loads, 1000u);
  EXPECT_EQ(r.distinct, 1000u);
  EXPECT_EQ(r.degree, 1.0);
  // At most `limit` addresses, each stream cut in proportion: 2000 and
  // 1000 addresses to 666 and 333.
  const TracedInstruction twice =
      traced({trace_loop(2, {trace_loop(500, {trace_value(kA, {0, 8})})}),
              trace_loop(1000, {trace_value(kA + 8192, {8})})});
  r = nest_reuse({&twice, &data}, {true, false}, 64, 512, 1000);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.executions, 1u);  // the trailing loop is not another replay
  EXPECT_EQ(r.loads, 666u);
  EXPECT_EQ(r.distinct, 500u);
  EXPECT_EQ(r.reuses, 166u);
  EXPECT_EQ(nest_reuse({}, {}, 64, 512).loads, 0u);
  EXPECT_EQ(nest_reuse({}, {}, 64, 512).degree, 0.0);
}

}  // namespace
}  // namespace weft
