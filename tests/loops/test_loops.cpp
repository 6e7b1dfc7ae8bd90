// The static loop performance of hand-written loops whose answers are known
// (tests/loops/programs/loop_kernels.c), on fixed LLVM 14 CPU models so the
// results do not depend on the machine: vectorization ratios of scalar and
// AVX2 builds, a gather, a division-bound loop, a loop-carried FP add, and
// a versioned loop grouped under its one source line.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "findings/finding_error.h"
#include "findings/loop_findings.h"
#include "support/command_runner.h"

namespace weft {
namespace {

// The line marked `// loop: NAME` in loop_kernels.c.
uint32_t line_of(const std::string& name) {
  std::ifstream in(WEFT_LOOP_KERNELS_SOURCE);
  std::string text;
  const std::string marker = "// loop: " + name;
  for (uint32_t number = 1; std::getline(in, text); ++number)
    if (text.size() >= marker.size() &&
        text.compare(text.size() - marker.size(), marker.size(), marker) == 0)
      return number;
  return 0;
}

class LoopPerformanceTest : public ::testing::Test {
 protected:
  // The binary-structure cache goes to a directory of the test's own.
  static void SetUpTestSuite() {
    cache_ = new weft_test::TempDir("weft-test-loops");
    setenv("WEFT_CACHE_DIR", cache_->path.c_str(), 1);
  }
  static void TearDownTestSuite() {
    unsetenv("WEFT_CACHE_DIR");
    delete cache_;
  }

  // `function`'s loops in `binary` on the model `cpu`.
  static LoopFindings findings_of(const std::string& binary, const std::string& function,
                                  const std::string& cpu) {
    LoopQuery query;
    query.binary = binary;
    query.function = function;
    query.cpu = cpu;
    return find_loops(query);
  }

  // The one source loop of `function` (the kernels have one each).
  static SourceLoop source_loop(const std::string& binary, const std::string& function,
                                const std::string& cpu) {
    const LoopFindings findings = findings_of(binary, function, cpu);
    EXPECT_EQ(findings.cpu.name, cpu);
    EXPECT_EQ(findings.source_loops.size(), 1u) << binary << " " << function;
    if (findings.source_loops.empty()) return {};
    return findings.source_loops.front();
  }

  static weft_test::TempDir* cache_;
};
weft_test::TempDir* LoopPerformanceTest::cache_ = nullptr;

#define REQUIRE_PROGRAM(path) \
  if (std::string(path).empty()) GTEST_SKIP() << "compiler missing"

TEST_F(LoopPerformanceTest, ScalarBuildsHaveNoPackedFpAdd) {
  for (const std::string binary : {WEFT_LOOPS_GCC_SCALAR, WEFT_LOOPS_CLANG_SCALAR}) {
    REQUIRE_PROGRAM(binary);
    const SourceLoop loop = source_loop(binary, "add_arrays", "skylake");
    EXPECT_EQ(loop.first_line, line_of("add_arrays"));
    ASSERT_FALSE(loop.versions.empty());
    for (const LoopPerformance& version : loop.versions) {
      const VectorizationCounts& add = version.counts(FpKind::kAddSub);
      EXPECT_GT(add.total(), 0u) << binary;
      EXPECT_EQ(add.full_width_ratio(), 0.0) << binary;
      EXPECT_EQ(add.below_width_ratio(), 0.0) << binary;
      EXPECT_EQ(add.scalar_ratio(), 1.0) << binary;
      EXPECT_EQ(version.counts(FpKind::kLoad).scalar_ratio(), 1.0) << binary;
      EXPECT_EQ(version.counts(FpKind::kStore).scalar_ratio(), 1.0) << binary;
      EXPECT_FALSE(version.counts(FpKind::kMul).full_width_ratio().has_value());
      EXPECT_EQ(version.vector_width_used, 0u);
      // Fully vectorized at 256 bits: four doubles per vector.
      EXPECT_TRUE(version.projection.projected) << version.projection.reason;
      EXPECT_EQ(version.projection.elements_per_vector, 4u);
      EXPECT_EQ(version.projection.kept_scalar_instructions, 0u);
    }
  }
}

TEST_F(LoopPerformanceTest, Avx2BuildsArePackedAtTheCpusFullWidth) {
  for (const std::string binary : {WEFT_LOOPS_GCC_AVX2, WEFT_LOOPS_CLANG_AVX2}) {
    REQUIRE_PROGRAM(binary);
    const SourceLoop loop = source_loop(binary, "add_arrays", "skylake");
    ASSERT_FALSE(loop.versions.empty());
    // Both compilers put the vector body first; clang adds a scalar remainder loop.
    const LoopPerformance& body = loop.versions.front();
    EXPECT_EQ(body.counts(FpKind::kAddSub).full_width_ratio(), 1.0) << binary;
    EXPECT_EQ(body.counts(FpKind::kLoad).full_width_ratio(), 1.0) << binary;
    EXPECT_EQ(body.counts(FpKind::kStore).full_width_ratio(), 1.0) << binary;
    EXPECT_EQ(body.vector_width_used, 256u);
    EXPECT_FALSE(body.projection.projected);
    EXPECT_TRUE(body.modeled);
  }
}

TEST_F(LoopPerformanceTest, TheSameAvx2LoopIsNarrowerThanAnAvx512Cpu) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_AVX2);
  const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_AVX2, "add_arrays", "skylake-avx512");
  ASSERT_EQ(loop.versions.size(), 1u);
  const VectorizationCounts& add = loop.versions[0].counts(FpKind::kAddSub);
  EXPECT_EQ(add.full_width_ratio(), 0.0);
  EXPECT_EQ(add.below_width_ratio(), 1.0);
  EXPECT_EQ(loop.versions[0].vector_width_used, 256u);
}

TEST_F(LoopPerformanceTest, GatherSumIsScalarAndLatencyBound) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_SCALAR, "gather_sum", "skylake");
  ASSERT_EQ(loop.versions.size(), 1u);
  const LoopPerformance& gather = loop.versions[0];
  // movsxd rax, [index]; add; addsd xmm0, [a + 8*rax]; cmp; jne
  EXPECT_EQ(gather.mix.instructions, 5u);
  EXPECT_EQ(gather.mix.loads, 2u);
  EXPECT_EQ(gather.mix.fp_add_sub, 1u);
  // The index load is no FP load: one scalar FP load.
  EXPECT_EQ(gather.counts(FpKind::kLoad).total(), 1u);
  EXPECT_EQ(gather.counts(FpKind::kLoad).scalar, 1u);
  EXPECT_EQ(gather.counts(FpKind::kAddSub).scalar_ratio(), 1.0);
  EXPECT_EQ(gather.latency_bound, 4.0);
  EXPECT_EQ(gather.bottleneck.kind, BottleneckKind::kDependenceChain);
  // Projected: the addsd chain becomes a vaddpd ymm chain of 4 cycles for
  // four elements.
  ASSERT_TRUE(gather.projection.projected);
  EXPECT_EQ(gather.projection.replaced_instructions, 1u);
  EXPECT_DOUBLE_EQ(gather.projection.cycles_per_source_iteration, 1.0);

  // gcc -O3 -mavx2 does not vectorize it either (an ordered FP sum).
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_AVX2);
  const SourceLoop avx2 = source_loop(WEFT_LOOPS_GCC_AVX2, "gather_sum", "skylake");
  ASSERT_FALSE(avx2.versions.empty());
  EXPECT_EQ(avx2.versions[0].counts(FpKind::kAddSub).scalar_ratio(), 1.0);
}

// A fill loop: one store per iteration ties the store port (1 cycle) with
// the counter's 1-cycle chain. The limit named is the store port: "break
// the chain" would be wrong advice for `inc rax`.
TEST_F(LoopPerformanceTest, ACounterChainThatOnlyTiesIsNotTheBottleneck) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_SCALAR, "fill_array", "skylake");
  // gcc peels an unrolled copy (8 stores); the other version stores once.
  const LoopPerformance* tie = nullptr;
  for (const LoopPerformance& version : loop.versions)
    if (version.mix.stores == 1) tie = &version;
  ASSERT_NE(tie, nullptr);
  const LoopPerformance& fill = *tie;
  EXPECT_DOUBLE_EQ(fill.latency_bound, 1.0);
  EXPECT_DOUBLE_EQ(fill.port_bound, 1.0);
  EXPECT_EQ(fill.bottleneck.kind, BottleneckKind::kPort);
  EXPECT_EQ(fill.bottleneck.port, "SKLPort4");
  EXPECT_NE(fill.bottleneck.hint.find("store port"), std::string::npos) << fill.bottleneck.hint;
}

TEST_F(LoopPerformanceTest, DivisionBoundLoopNamesTheDivider) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  // LLVM 14's models: divsd occupies the FP divider 4 cycles on Skylake, 14 on Haswell.
  for (const auto& [cpu, divider, cycles] :
       std::vector<std::tuple<std::string, std::string, double>>{
           {"skylake", "SKLFPDivider", 4.0}, {"haswell", "HWFPDivider", 14.0}}) {
    const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_SCALAR, "divide_arrays", cpu);
    ASSERT_EQ(loop.versions.size(), 1u);
    const LoopPerformance& divide = loop.versions[0];
    EXPECT_EQ(divide.mix.fp_div, 1u);
    EXPECT_EQ(divide.bottleneck.kind, BottleneckKind::kPort) << cpu;
    EXPECT_EQ(divide.bottleneck.port, divider);
    EXPECT_EQ(divide.port_bound, cycles);
    EXPECT_DOUBLE_EQ(divide.cycles_per_iteration, cycles);
    EXPECT_EQ(divide.latency_bound, 1.0);  // only the index increments carry
    EXPECT_NE(divide.bottleneck.hint.find("reciprocal"), std::string::npos);
    bool divider_listed = false;
    for (const PortPressure& port : divide.port_pressure)
      if (port.port == divider) {
        divider_listed = true;
        EXPECT_DOUBLE_EQ(port.cycles_per_iteration, cycles);
      }
    EXPECT_TRUE(divider_listed);
  }
}

// LLVM 19's Sapphire Rapids and Alder Lake tables give divsd one cycle of
// port time and no divider: weft says so once per model and on every loop
// that divides, and names the models that have a divider. The models with
// a divider say nothing.
TEST_F(LoopPerformanceTest, AModelWithoutADividerSaysSo) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  auto findings_on = [](const std::string& cpu, const std::string& function) {
    return findings_of(WEFT_LOOPS_GCC_SCALAR, function, cpu);
  };
  const std::string kNoDivider = "the model has no FP divider (model caveat)";
  for (const std::string cpu : {"sapphirerapids", "alderlake"}) {
    const LoopFindings divide = findings_on(cpu, "divide_arrays");
    ASSERT_EQ(divide.cpu.caveats.size(), 1u) << cpu;
    EXPECT_EQ(divide.cpu.caveats[0].rfind("LLVM 19's " + cpu +
                                              " tables have no FP divider (a divsd takes 1.00 "
                                              "cycles of port time",
                                          0),
              0u)
        << divide.cpu.caveats[0];
    EXPECT_NE(divide.cpu.caveats[0].find("--cpu icelake-server"), std::string::npos);
    ASSERT_EQ(divide.source_loops.size(), 1u);
    const LoopPerformance& loop = divide.source_loops[0].versions.at(0);
    EXPECT_LT(loop.cycles_per_iteration, 2.0) << cpu;  // the model's figure, not the core's
    EXPECT_NE(std::find(loop.hints.begin(), loop.hints.end(),
                        kNoDivider + ": this loop's divisions take longer than predicted"),
              loop.hints.end())
        << cpu;
    // A loop that does not divide gets no such hint.
    const LoopFindings sum = findings_on(cpu, "sum_array");
    for (const std::string& hint : sum.source_loops.at(0).versions.at(0).hints)
      EXPECT_EQ(hint.find(kNoDivider), std::string::npos) << hint;
  }
  for (const std::string cpu : {"skylake", "haswell", "icelake-server", "znver3", "znver4"}) {
    const LoopFindings divide = findings_on(cpu, "divide_arrays");
    EXPECT_TRUE(divide.cpu.caveats.empty()) << cpu << ": " << divide.cpu.caveats[0];
    EXPECT_EQ(divide.source_loops.at(0).versions.at(0).bottleneck.kind, BottleneckKind::kPort)
        << cpu;
  }
}

TEST_F(LoopPerformanceTest, LoopCarriedFpAddIsBoundByTheAddLatency) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  // addsd xmm0, [rdi]: the chain runs through xmm0 only; the folded load's
  // latency (ReadAdvance) is not on it. LLVM 14: addsd is 4 cycles on
  // Skylake, 3 on Haswell.
  for (const auto& [cpu, latency] :
       std::vector<std::pair<std::string, double>>{{"skylake", 4.0}, {"haswell", 3.0}}) {
    const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_SCALAR, "sum_array", cpu);
    ASSERT_EQ(loop.versions.size(), 1u);
    const LoopPerformance& sum = loop.versions[0];
    EXPECT_EQ(sum.latency_bound, latency) << cpu;
    EXPECT_DOUBLE_EQ(sum.cycles_per_iteration, latency) << cpu;
    EXPECT_EQ(sum.bottleneck.kind, BottleneckKind::kDependenceChain);
    ASSERT_EQ(sum.latency_chain.size(), 1u);
    EXPECT_EQ(sum.latency_chain[0].rfind("addsd", 0), 0u) << sum.latency_chain[0];
    EXPECT_NE(sum.bottleneck.hint.find("accumulators"), std::string::npos);
    EXPECT_NE(sum.bottleneck.description.find("FP add"), std::string::npos);
  }
  // clang unrolls the sum: one chain through every addsd of an iteration.
  REQUIRE_PROGRAM(WEFT_LOOPS_CLANG_SCALAR);
  const SourceLoop unrolled = source_loop(WEFT_LOOPS_CLANG_SCALAR, "sum_array", "skylake");
  ASSERT_FALSE(unrolled.versions.empty());
  for (const LoopPerformance& version : unrolled.versions) {
    EXPECT_EQ(version.latency_bound, 4.0 * version.mix.fp_add_sub);
    EXPECT_EQ(version.latency_chain.size(), version.mix.fp_add_sub);
  }
}

TEST_F(LoopPerformanceTest, LongLatencyDivisionLimitsTheOutOfOrderWindow) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  // idiv (LLVM 14 Skylake: 102 cycles, many micro-ops) on no loop-carried
  // chain: no bound explains the simulated cycles; the reorder buffer fills.
  const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_SCALAR, "remainders", "skylake");
  ASSERT_EQ(loop.versions.size(), 1u);
  const LoopPerformance& remainders = loop.versions[0];
  EXPECT_EQ(remainders.bottleneck.kind, BottleneckKind::kWindow);
  EXPECT_EQ(remainders.bottleneck.stall, "reorder buffer full");
  EXPECT_GT(remainders.cycles_per_iteration,
            1.1 * std::max({remainders.front_end_bound, remainders.port_bound,
                            remainders.latency_bound}));
  EXPECT_NE(remainders.bottleneck.description.find("idiv"), std::string::npos);
  EXPECT_EQ(remainders.latency_bound, 1.0);
  // On Zen 3 the model's divider is not pipelined: the port bound explains it.
  const SourceLoop zen = source_loop(WEFT_LOOPS_GCC_SCALAR, "remainders", "znver3");
  ASSERT_EQ(zen.versions.size(), 1u);
  EXPECT_EQ(zen.versions[0].bottleneck.kind, BottleneckKind::kPort);
  EXPECT_NE(zen.versions[0].bottleneck.hint.find("integer divider"), std::string::npos);
}

TEST_F(LoopPerformanceTest, VersionedLoopIsOneSourceLoop) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_AVX2);
  // gcc -O3 checks a, b, c for overlap at run time: a vectorized loop and a
  // scalar one, both from one source line.
  const SourceLoop loop = source_loop(WEFT_LOOPS_GCC_AVX2, "add_arrays_aliased", "skylake");
  const uint32_t line = line_of("add_arrays_aliased");
  EXPECT_EQ(loop.first_line, line);
  EXPECT_EQ(loop.last_line, line);
  ASSERT_EQ(loop.versions.size(), 2u);
  EXPECT_LT(loop.versions[0].header, loop.versions[1].header);
  EXPECT_EQ(loop.versions[0].counts(FpKind::kAddSub).full_width_ratio(), 1.0);
  EXPECT_EQ(loop.versions[1].counts(FpKind::kAddSub).scalar_ratio(), 1.0);
  EXPECT_TRUE(loop.versions[1].projection.projected);
  EXPECT_EQ(loop.versions[1].projection.replaced_instructions, 3u);  // load, add, store
}

TEST_F(LoopPerformanceTest, LineSelectsOneSourceLoop) {
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  LoopQuery query;
  query.binary = WEFT_LOOPS_GCC_SCALAR;
  query.cpu = "skylake";
  query.line_file = "loop_kernels.c";
  query.line = line_of("sum_array");
  const LoopFindings findings = find_loops(query);
  ASSERT_EQ(findings.source_loops.size(), 1u);
  EXPECT_EQ(findings.source_loops[0].function, "sum_array");
  query.line_file = "other.c";
  EXPECT_THROW(find_loops(query), FindingError);
}

TEST_F(LoopPerformanceTest, SharedLibraryNamedDirectly) {
  REQUIRE_PROGRAM(WEFT_LOOPS_LIBLOOP_KERNELS_SO);
  const SourceLoop loop = source_loop(WEFT_LOOPS_LIBLOOP_KERNELS_SO, "sum_array", "haswell");
  ASSERT_EQ(loop.versions.size(), 1u);
  EXPECT_EQ(loop.versions[0].latency_bound, 3.0);
}

TEST_F(LoopPerformanceTest, BadInputsAreOneLineErrors) {
  LoopQuery query;
  query.cpu = "skylake";
  auto message = [&]() -> std::string {
    try {
      find_loops(query);
    } catch (const FindingError& error) {
      return error.what();
    }
    return "no error";
  };
  query.binary = "/nonexistent/loops";
  EXPECT_NE(message().find("no such file"), std::string::npos);
  query.binary = WEFT_LOOP_KERNELS_SOURCE;
  EXPECT_NE(message().find("not an ELF file"), std::string::npos);
  if (!std::string(WEFT_LOOPS_STRIPPED).empty()) {
    query.binary = WEFT_LOOPS_STRIPPED;
    EXPECT_NE(message().find("no function symbols"), std::string::npos);
  }
  REQUIRE_PROGRAM(WEFT_LOOPS_GCC_SCALAR);
  query.binary = WEFT_LOOPS_GCC_SCALAR;
  query.cpu = "pentium9000";
  EXPECT_EQ(message(),
            "unknown CPU 'pentium9000' for LLVM 19 (`llvm-mca-19 -mcpu=help` lists the names it "
            "knows)");
  query.cpu = "skylake";
  query.function = "no_such_function";
  EXPECT_NE(message().find("no function named 'no_such_function'"), std::string::npos);
}

// The L2/RAM estimates of tests/loops/programs/memory_streams.c with the
// fixed calibration of tests/loops/fixed_calibration.json (L2: load 8,
// store 4 B/cycle, latency 20; RAM: load 2, store 1 B/cycle, latency 200;
// lines of 64 B), on LLVM 14's Skylake model. Expected values follow
// docs/loops.md, "L2 and RAM estimates".
class CalibratedLoopEstimates : public LoopPerformanceTest {
 protected:
  static LoopPerformance loop_of(const std::string& function, uint32_t trip_count = 0) {
    LoopQuery query;
    query.binary = WEFT_LOOPS_MEMORY_STREAMS;
    query.function = function;
    query.cpu = "skylake";
    query.calibration_file = WEFT_LOOPS_FIXED_CALIBRATION;
    query.trip_count = trip_count;
    const LoopFindings findings = find_loops(query);
    EXPECT_TRUE(findings.calibration.used);
    EXPECT_EQ(findings.calibration.l2.load_bytes_per_cycle, 8.0);
    EXPECT_EQ(findings.calibration.line_bytes, 64u);
    if (findings.source_loops.size() != 1 || findings.source_loops[0].versions.size() != 1) {
      ADD_FAILURE() << function << ": not one loop";
      return {};
    }
    return findings.source_loops[0].versions[0];
  }
  // (kind, stride) of each access, in instruction order; stride -1:
  // irregular, -2: unknown.
  static std::vector<std::pair<std::string, int64_t>> strides(const LoopPerformance& loop) {
    std::vector<std::pair<std::string, int64_t>> result;
    for (const MemoryAccess& access : loop.memory_accesses)
      result.emplace_back(access.store ? "store" : "load",
                          access.pattern == AccessPattern::kIrregular       ? -1
                          : access.pattern == AccessPattern::kUnknownStride ? -2
                                                                            : access.stride);
    return result;
  }
  static const MemoryLevelEstimate& level(const LoopPerformance& loop, size_t index) {
    static const MemoryLevelEstimate none;
    if (loop.memory_levels.size() != 2) {
      ADD_FAILURE() << loop.function << ": no L2 and RAM estimates";
      return none;
    }
    return loop.memory_levels[index];
  }
};

using Strides = std::vector<std::pair<std::string, int64_t>>;

TEST_F(CalibratedLoopEstimates, StrideOneTriadIsBandwidthBound) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const LoopPerformance triad = loop_of("triad");
  // movsd xmm1, [rdx + rax]; mulsd; addsd xmm1, [rsi + rax]; movsd [rdi + rax], xmm1; add rax, 8
  EXPECT_EQ(strides(triad), (Strides{{"load", 8}, {"load", 8}, {"store", 8}}));
  for (const MemoryAccess& access : triad.memory_accesses) {
    EXPECT_EQ(access.pattern, AccessPattern::kStrided);
    EXPECT_EQ(access.bytes, 8u);
  }
  ASSERT_LT(triad.cycles_per_iteration, 4.0);
  const MemoryLevelEstimate& l2 = level(triad, 0);
  EXPECT_EQ(l2.level, "L2");
  EXPECT_EQ(l2.load_bytes, 16.0);
  EXPECT_EQ(l2.store_bytes, 8.0);
  EXPECT_DOUBLE_EQ(l2.bandwidth_cycles, 16.0 / 8 + 8.0 / 4);  // 4
  EXPECT_DOUBLE_EQ(l2.cycles_per_iteration, 4.0);
  EXPECT_EQ(l2.bottleneck, "L2 bandwidth");
  const MemoryLevelEstimate& ram = level(triad, 1);
  EXPECT_EQ(ram.level, "RAM");
  EXPECT_DOUBLE_EQ(ram.cycles_per_iteration, 16.0 / 2 + 8.0 / 1);  // 16
  EXPECT_EQ(ram.latency_cycles, 0.0);
  EXPECT_EQ(ram.bottleneck, "RAM bandwidth");
}

TEST_F(CalibratedLoopEstimates, StrideTwoBringsTheSkippedElements) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const LoopPerformance loop = loop_of("every_other");
  // movsd xmm0, [rsi]; add rsi, 16; add rdi, 8; ...; movsd [rdi - 8], xmm0
  EXPECT_EQ(strides(loop), (Strides{{"load", 16}, {"store", 8}}));
  // 16 bytes loaded per iteration (the line holds the skipped double too).
  EXPECT_EQ(level(loop, 0).load_bytes, 16.0);
  EXPECT_EQ(level(loop, 0).store_bytes, 8.0);
  EXPECT_DOUBLE_EQ(level(loop, 0).cycles_per_iteration, 16.0 / 8 + 8.0 / 4);
  EXPECT_DOUBLE_EQ(level(loop, 1).cycles_per_iteration, 16.0 / 2 + 8.0 / 1);
  EXPECT_EQ(level(loop, 1).bottleneck, "RAM bandwidth");
}

TEST_F(CalibratedLoopEstimates, ColumnAccessCostsALinePerIteration) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const LoopPerformance loop = loop_of("copy_column");
  // movsd xmm0, [rax]; add rdi, 8; add rax, 4096 (the ADD64i32 encoding,
  // RAX implicit); movsd [rdi - 8], xmm0
  EXPECT_EQ(strides(loop), (Strides{{"load", 512 * 8}, {"store", 8}}));
  // A whole 64-byte line for each 8-byte load.
  EXPECT_EQ(level(loop, 0).load_bytes, 64.0);
  EXPECT_DOUBLE_EQ(level(loop, 0).cycles_per_iteration, 64.0 / 8 + 8.0 / 4);  // 10
  EXPECT_EQ(level(loop, 0).bottleneck, "L2 bandwidth");
  EXPECT_DOUBLE_EQ(level(loop, 1).cycles_per_iteration, 64.0 / 2 + 8.0 / 1);  // 40
}

TEST_F(CalibratedLoopEstimates, GatherPaysTheLatencyOverTheMemoryParallelism) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const LoopPerformance loop = loop_of("gather");
  // movsxd rax, [rsi]; add rsi, 4; addsd xmm0, [rdi + 8*rax]: rax is loaded.
  EXPECT_EQ(strides(loop), (Strides{{"load", 4}, {"load", -1}}));
  EXPECT_EQ(loop.memory_accesses[1].address, "rdi + 8*rax");
  const MemoryLevelEstimate& l2 = level(loop, 0);
  EXPECT_EQ(l2.irregular_accesses, 1u);
  EXPECT_DOUBLE_EQ(l2.bandwidth_cycles, 4.0 / 8);
  EXPECT_DOUBLE_EQ(l2.latency_cycles, 20.0 / kIrregularMemoryParallelism);
  // 2.5 cycles of memory: the addsd chain (4 cycles on Skylake) still bounds it.
  EXPECT_EQ(loop.cycles_per_iteration, 4.0);
  EXPECT_DOUBLE_EQ(l2.cycles_per_iteration, 4.0);
  EXPECT_EQ(l2.bottleneck, "core (L1)");
  const MemoryLevelEstimate& ram = level(loop, 1);
  EXPECT_DOUBLE_EQ(ram.cycles_per_iteration, 4.0 / 2 + 200.0 / kIrregularMemoryParallelism);  // 22
  EXPECT_EQ(ram.bottleneck, "RAM latency");
}

// row_sums: `s += m[i * cols + j]` (addsd xmm0, [rax]; add rax, 8; cmp;
// jne), s reset by a pxor every row. The endless loop is the addsd chain,
// 4 cycles on Skylake; with 4 iterations per entry the rows' chains
// overlap and the enclosing loop's iteration (9 instructions before the
// inner loop: pxor, test, jle, movsxd, pxor, lea, add, lea, nop; the 4
// copies; 5 after: movsd store, add, add, cmp, jne) takes 6.5 cycles, not
// 16 + its own work: llvm-mca-14 -mcpu=skylake -iterations=1000 on those 30
// instructions gives 6.52 (fill and drain included).
TEST_F(CalibratedLoopEstimates, ShortRowsOverlapTheirRestartingChains) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  const LoopPerformance endless = loop_of("row_sums");
  EXPECT_EQ(endless.cycles_per_iteration, 4.0);
  EXPECT_EQ(endless.bottleneck.kind, BottleneckKind::kDependenceChain);
  EXPECT_FALSE(endless.with_trip_count);
  ASSERT_TRUE(endless.enclosing_loop_header);
  EXPECT_GT(*endless.enclosing_loop_header, endless.function_start);
  EXPECT_LT(*endless.enclosing_loop_header, endless.header);

  const LoopPerformance rows = loop_of("row_sums", 4);
  ASSERT_TRUE(rows.with_trip_count);
  const TripCountEstimate& trip = *rows.with_trip_count;
  EXPECT_EQ(trip.trip_count, 4u);
  EXPECT_TRUE(trip.simulated);
  EXPECT_EQ(trip.enclosing_instructions, 14u);
  EXPECT_DOUBLE_EQ(trip.cycles_per_iteration, 6.5 / 4);
  // The endless figures stay as they are.
  EXPECT_EQ(rows.cycles_per_iteration, 4.0);
  EXPECT_EQ(rows.bottleneck.kind, BottleneckKind::kDependenceChain);
  // The memory estimates start from the trip count's cycles: L2 (8 B at 8
  // B/cycle: 1) stays below them, RAM (8 B at 2: 4) is above.
  EXPECT_DOUBLE_EQ(level(rows, 0).cycles_per_iteration, 6.5 / 4);
  EXPECT_EQ(level(rows, 0).bottleneck, "core (L1)");
  EXPECT_DOUBLE_EQ(level(rows, 1).cycles_per_iteration, 4.0);
  EXPECT_EQ(level(rows, 1).bottleneck, "RAM bandwidth");

  // 4 instructions x 100,000 exceed kMaxTripCountInstructions: the
  // endless figure, not simulated.
  const LoopPerformance long_rows = loop_of("row_sums", 100000);
  ASSERT_TRUE(long_rows.with_trip_count);
  EXPECT_FALSE(long_rows.with_trip_count->simulated);
  EXPECT_EQ(long_rows.with_trip_count->cycles_per_iteration, 4.0);
  EXPECT_EQ(long_rows.with_trip_count->enclosing_instructions, 14u);

  // A loop nested in no loop has no trip count figure.
  const LoopPerformance triad = loop_of("triad", 4);
  EXPECT_FALSE(triad.enclosing_loop_header);
  EXPECT_FALSE(triad.with_trip_count);
}

// pair_sums: two inner loops (s += m[...]; t += w[...]) in every row. With
// 4 iterations each, the row is 11 own instructions, 4 x 4, 4 own, 4 x 4,
// 6 own (21 own): 11.75 cycles on Skylake (llvm-mca-14 -iterations=1000
// on those 53 instructions: 11.78), 11.75 / 8 per inner iteration for
// both loops. One loop's trip count alone simulates that loop only.
TEST_F(CalibratedLoopEstimates, InnerLoopsOfOneRowAreSimulatedTogether) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  auto versions = [](const std::map<uint64_t, uint32_t>& by_header, uint32_t every) {
    LoopQuery query;
    query.binary = WEFT_LOOPS_MEMORY_STREAMS;
    query.function = "pair_sums";
    query.cpu = "skylake";
    query.trip_count = every;
    query.trip_counts = by_header;
    std::vector<LoopPerformance> result;
    for (const SourceLoop& loop : find_loops(query).source_loops)
      for (const LoopPerformance& version : loop.versions) result.push_back(version);
    return result;
  };
  const std::vector<LoopPerformance> both = versions({}, 4);
  ASSERT_EQ(both.size(), 2u);
  ASSERT_EQ(both[0].enclosing_loop_header, both[1].enclosing_loop_header);
  for (const LoopPerformance& loop : both) {
    ASSERT_TRUE(loop.with_trip_count) << loop.header;
    EXPECT_EQ(loop.with_trip_count->inner_loops, 2u);
    EXPECT_EQ(loop.with_trip_count->enclosing_instructions, 21u);
    EXPECT_DOUBLE_EQ(loop.with_trip_count->cycles_per_iteration, 11.75 / 8);
  }
  // The first loop's trip count only: the second is left out of the row
  // (its 4 x 4 instructions and chain gone): 7.75 cycles per row
  // (llvm-mca-14 on those 37 instructions: 7.78).
  const std::vector<LoopPerformance> first = versions({{both[0].header, 4}}, 0);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_TRUE(first[0].with_trip_count);
  EXPECT_EQ(first[0].with_trip_count->inner_loops, 1u);
  EXPECT_DOUBLE_EQ(first[0].with_trip_count->cycles_per_iteration, 7.75 / 4);
  EXPECT_FALSE(first[1].with_trip_count);
}

TEST(CalibratedLoopEstimate, StreamsOfUnrolledAndUnknownStrides) {
  LoopPerformance loop;
  loop.cycles_per_iteration = 1.0;
  auto access = [](bool store, const std::string& address, int64_t displacement,
                   AccessPattern pattern, int64_t stride) {
    MemoryAccess result;
    result.store = store;
    result.bytes = 8;
    result.address = address;
    result.displacement = displacement;
    result.pattern = pattern;
    result.stride = stride;
    return result;
  };
  loop.memory_accesses = {
      // Unrolled by 4, stride 32: one stream of 32 bytes per iteration.
      access(false, "rsi", 0, AccessPattern::kStrided, 32),
      access(false, "rsi", 8, AccessPattern::kStrided, 32),
      access(false, "rsi", 16, AccessPattern::kStrided, 32),
      access(false, "rsi", 24, AccessPattern::kStrided, 32),
      // Two rows of a column loop unrolled by 2: two lines per iteration.
      access(false, "rdx", 0, AccessPattern::kStrided, 8192),
      access(false, "rdx", 4096, AccessPattern::kStrided, 8192),
      // Loop-invariant address: stays in L1.
      access(false, "rip", 0, AccessPattern::kStrided, 0),
      // Incremented by a register: counted as stride 1 (its 8 bytes).
      access(true, "rcx", 0, AccessPattern::kUnknownStride, 0),
      // Downwards, stride -8.
      access(true, "rdi", 0, AccessPattern::kStrided, -8),
  };
  MemoryLevelCalibration ram;
  ram.level = "RAM";
  ram.load_bytes_per_cycle = 4;
  ram.store_bytes_per_cycle = 2;
  ram.latency_cycles = 100;
  const MemoryLevelEstimate estimate = estimate_memory_level(loop, ram, 64);
  EXPECT_EQ(estimate.load_bytes, 32.0 + 128.0);
  EXPECT_EQ(estimate.store_bytes, 16.0);
  // rsi and rdx; rcx and rdi (the invariant rip moves nothing).
  EXPECT_EQ(estimate.load_streams, 2u);
  EXPECT_EQ(estimate.store_streams, 2u);
  // No stream mixes in the calibration: the separate figures.
  EXPECT_EQ(estimate.stream_mix_bytes_per_cycle, 0.0);
  EXPECT_DOUBLE_EQ(estimate.cycles_per_iteration, 160.0 / 4 + 16.0 / 2);
  EXPECT_EQ(estimate.bottleneck, "RAM bandwidth");

  // With the mixes: 2 load and 2 store streams move 176 bytes at their
  // mix's 8 bytes per cycle (the separate figures said 48 cycles).
  ram.stream_mixes = {{1, 0, 5.0}, {2, 2, 8.0}, {4, 2, 10.0}};
  const MemoryLevelEstimate mixed = estimate_memory_level(loop, ram, 64);
  EXPECT_EQ(mixed.stream_mix_bytes_per_cycle, 8.0);
  EXPECT_DOUBLE_EQ(mixed.bandwidth_cycles, (160.0 + 16.0) / 8);
  EXPECT_DOUBLE_EQ(mixed.cycles_per_iteration, 22.0);
  // More streams than the largest mix (5 loads, 3 stores): as that mix.
  loop.memory_accesses.push_back(access(false, "rax", 0, AccessPattern::kStrided, 8));
  loop.memory_accesses.push_back(access(false, "rbx", 0, AccessPattern::kStrided, 8));
  loop.memory_accesses.push_back(access(false, "r8", 0, AccessPattern::kStrided, 8));
  loop.memory_accesses.push_back(access(true, "r9", 0, AccessPattern::kStrided, 8));
  const MemoryLevelEstimate many = estimate_memory_level(loop, ram, 64);
  EXPECT_EQ(many.load_streams, 5u);
  EXPECT_EQ(many.store_streams, 3u);
  EXPECT_EQ(many.stream_mix_bytes_per_cycle, 10.0);
  EXPECT_DOUBLE_EQ(many.bandwidth_cycles, (184.0 + 24.0) / 10);
  // A mix the calibration lacks (1 load, 1 store): the separate figures.
  loop.memory_accesses = {access(false, "rsi", 0, AccessPattern::kStrided, 8),
                          access(true, "rdi", 0, AccessPattern::kStrided, 8)};
  const MemoryLevelEstimate copy = estimate_memory_level(loop, ram, 64);
  EXPECT_EQ(copy.stream_mix_bytes_per_cycle, 0.0);
  EXPECT_DOUBLE_EQ(copy.bandwidth_cycles, 8.0 / 4 + 8.0 / 2);
}

// The calibration file keeps the stream mixes and reads them back; a file
// without them (written before weft measured them) is still read, and a
// mix without streams is refused.
TEST(CalibrationFile, StreamMixesRoundTrip) {
  MachineCalibration calibration;
  calibration.key = {"test machine", 32768, 524288, 0, 64};
  calibration.tsc_hz = 2e9;
  calibration.measured_at = "2026-01-01T00:00:00Z";
  calibration.repetitions = 3;
  MemoryLevelCalibration ram;
  ram.level = "RAM";
  ram.working_set = 1 << 27;
  ram.load_bytes_per_cycle = 6.0;
  ram.store_bytes_per_cycle = 3.5;
  ram.latency_cycles = 380;
  ram.stream_mixes = {{1, 1, 5.75}, {2, 1, 6.5}, {0, 2, 4.5}};
  calibration.levels = {ram};
  const MachineCalibration back = parse_calibration(calibration_json(calibration), "test");
  ASSERT_EQ(back.levels.size(), 1u);
  ASSERT_EQ(back.levels[0].stream_mixes.size(), 3u);
  ASSERT_NE(back.levels[0].stream_mix(2, 1), nullptr);
  EXPECT_EQ(back.levels[0].stream_mix(2, 1)->bytes_per_cycle, 6.5);
  EXPECT_EQ(back.levels[0].stream_mix(0, 2)->bytes_per_cycle, 4.5);
  EXPECT_EQ(back.levels[0].stream_mix(1, 0), nullptr);

  calibration.levels[0].stream_mixes.clear();
  const std::string without = calibration_json(calibration);
  EXPECT_EQ(without.find("stream_mixes"), std::string::npos);
  EXPECT_TRUE(parse_calibration(without, "test").levels[0].stream_mixes.empty());

  calibration.levels[0].stream_mixes = {{0, 0, 5.0}};
  try {
    parse_calibration(calibration_json(calibration), "bad.json");
    ADD_FAILURE() << "a mix without streams was read";
  } catch (const CalibrationError& error) {
    EXPECT_EQ(std::string(error.what()),
              "bad.json: level RAM has a stream mix without streams or bandwidth");
  }
}

// A calibration with its TSC ticks per core cycle: the figures are per
// tick, MCA's cycles core cycles; at 0.5 ticks per core cycle (a core twice
// the TSC's rate) L2 moves 8 x 0.5 = 4 B loaded and 2 B stored per core
// cycle, and its 20-tick latency is 40 core cycles.
TEST_F(CalibratedLoopEstimates, TicksPerCoreCycleConvertToCoreCycles) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  std::ifstream in(WEFT_LOOPS_FIXED_CALIBRATION);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"tsc_hz\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"tsc_ticks_per_core_cycle\": 0.5, ");
  const weft_test::TempDir dir("weft-test-ticks");
  const std::string path = (dir.path / "calibration.json").string();
  std::ofstream(path) << text;

  const LoopCalibration calibration = resolve_calibration(path);
  ASSERT_TRUE(calibration.used);
  EXPECT_EQ(calibration.tsc_ticks_per_core_cycle, 0.5);
  EXPECT_EQ(calibration.l2.load_bytes_per_cycle, 4.0);
  EXPECT_EQ(calibration.l2.store_bytes_per_cycle, 2.0);
  EXPECT_EQ(calibration.l2.latency_cycles, 40.0);
  EXPECT_EQ(calibration.ram.load_bytes_per_cycle, 1.0);
  EXPECT_EQ(calibration.ram.latency_cycles, 400.0);

  LoopQuery query;
  query.binary = WEFT_LOOPS_MEMORY_STREAMS;
  query.function = "triad";
  query.cpu = "skylake";
  query.calibration_file = path;
  const LoopFindings findings = find_loops(query);
  ASSERT_EQ(findings.source_loops.size(), 1u);
  const LoopPerformance& triad = findings.source_loops[0].versions[0];
  // 16 B loaded and 8 stored per iteration: 16/4 + 8/2 = 8 core cycles in
  // L2 (4 without the conversion), 16/1 + 8/0.5 = 32 in RAM.
  EXPECT_DOUBLE_EQ(level(triad, 0).cycles_per_iteration, 8.0);
  EXPECT_DOUBLE_EQ(level(triad, 1).cycles_per_iteration, 32.0);
  // Without the ratio (the fixed file) the figures stay per tick.
  EXPECT_EQ(resolve_calibration(WEFT_LOOPS_FIXED_CALIBRATION).tsc_ticks_per_core_cycle, 0.0);
}

TEST_F(CalibratedLoopEstimates, WithoutACalibrationOneNoteAndNoFigures) {
  REQUIRE_PROGRAM(WEFT_LOOPS_MEMORY_STREAMS);
  LoopQuery query;
  query.binary = WEFT_LOOPS_MEMORY_STREAMS;
  query.cpu = "skylake";
  // The suite's cache directory holds no calibration.
  const LoopFindings findings = find_loops(query);
  EXPECT_FALSE(findings.calibration.used);
  EXPECT_NE(findings.calibration.note.find("weft calibrate"), std::string::npos);
  for (const SourceLoop& loop : findings.source_loops)
    for (const LoopPerformance& version : loop.versions) {
      EXPECT_TRUE(version.memory_levels.empty());
      EXPECT_FALSE(version.memory_accesses.empty());  // the streams need no calibration
    }
  // Another machine's calibration in the cache directory is not used.
  const std::string stored = std::string(getenv("WEFT_CACHE_DIR")) + "/calibration.json";
  std::filesystem::copy_file(WEFT_LOOPS_FIXED_CALIBRATION, stored);
  const LoopFindings foreign = find_loops(query);
  std::filesystem::remove(stored);
  EXPECT_FALSE(foreign.calibration.used);
  EXPECT_NE(foreign.calibration.note.find("another machine"), std::string::npos);
  // A named file that is no calibration fails the command.
  query.calibration_file = WEFT_LOOP_KERNELS_SOURCE;
  EXPECT_THROW(find_loops(query), FindingError);
}

TEST(SourceLoopGrouping, OverlappingRangesOfOneFunctionAndFileAreOneLoop) {
  auto loop = [](uint64_t function, const std::string& file, uint32_t first, uint32_t last,
                 uint64_t header) {
    LoopPerformance result;
    result.function = "f" + std::to_string(function);
    result.function_start = function;
    result.file = file;
    result.first_line = first;
    result.last_line = last;
    result.header = header;
    return result;
  };
  const std::vector<SourceLoop> groups = group_by_source_loop({
      loop(0x100, "a.c", 10, 12, 0x180),  // the scalar epilogue, after the body
      loop(0x100, "a.c", 11, 11, 0x140),  // the vector body
      loop(0x100, "a.c", 13, 14, 0x1c0),  // the next source loop
      loop(0x100, "b.c", 11, 11, 0x1e0),  // inlined from another file
      loop(0x200, "a.c", 11, 11, 0x240),  // another function
      loop(0x200, "", 0, 0, 0x260),       // no line information
      loop(0x200, "", 0, 0, 0x280),
  });
  ASSERT_EQ(groups.size(), 6u);
  EXPECT_EQ(groups[0].file, "a.c");
  EXPECT_EQ(groups[0].first_line, 10u);
  EXPECT_EQ(groups[0].last_line, 12u);
  ASSERT_EQ(groups[0].versions.size(), 2u);
  EXPECT_EQ(groups[0].versions[0].header, 0x140u);  // in address order
  EXPECT_EQ(groups[1].first_line, 13u);
  EXPECT_EQ(groups[2].file, "b.c");
  // Loops without lines are never grouped (they sort first in their function).
  EXPECT_EQ(groups[3].file, "");
  EXPECT_EQ(groups[3].versions.size(), 1u);
  EXPECT_EQ(groups[4].versions.size(), 1u);
  EXPECT_EQ(groups[5].function, "f512");
  EXPECT_EQ(groups[5].file, "a.c");
}

}  // namespace
}  // namespace weft
