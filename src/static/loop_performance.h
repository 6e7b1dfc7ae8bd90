// Static performance of a binary's innermost loops, as MAQAO's performance
// model describes it: the instruction mix of one iteration, how vectorized
// its floating-point work is, and LLVM MCA's steady-state simulation with
// the CPU model's scheduling tables (cycles per iteration with every operand
// in L1, execution-port pressure, the front-end, port and dependence-chain
// bounds, the bottleneck), plus the projection of the loop fully vectorized.
// docs/loops.md defines every number.
//
// LLVM's headers stay in loop_performance.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "static/binary_structure.h"

namespace weft {

// The kinds of floating-point work whose vectorization is measured.
enum class FpKind { kLoad, kStore, kAddSub, kMul, kFma, kDiv };
inline constexpr size_t kFpKindCount = 6;
inline constexpr std::array<FpKind, kFpKindCount> kFpKinds = {
    FpKind::kLoad, FpKind::kStore, FpKind::kAddSub, FpKind::kMul, FpKind::kFma, FpKind::kDiv};
// "load", "store", "add_sub", "mul", "fma", "div" (the JSON keys).
const char* fp_kind_name(FpKind kind);

// Instructions of one kind by the width they work at.
struct VectorizationCounts {
  uint32_t full_width = 0;   // packed, at the CPU's widest vector
  uint32_t below_width = 0;  // packed, narrower than the CPU's widest vector
  uint32_t scalar = 0;       // one element
  uint32_t total() const { return full_width + below_width + scalar; }
  // Share of each; nullopt when the loop has none of this kind.
  std::optional<double> full_width_ratio() const;
  std::optional<double> below_width_ratio() const;
  std::optional<double> scalar_ratio() const;
};

// One iteration's instructions. An instruction may count in several
// columns (`addsd xmm0, [rdi]` is a load and an FP add); `other` counts the
// instructions in none.
struct InstructionMix {
  uint32_t instructions = 0;
  uint32_t loads = 0;   // every instruction that reads memory
  uint32_t stores = 0;  // every instruction that writes memory
  uint32_t fp_add_sub = 0;
  uint32_t fp_mul = 0;
  uint32_t fp_fma = 0;
  uint32_t fp_div = 0;
  uint32_t other = 0;
};

struct PortPressure {
  std::string port;  // the scheduling model's resource name (a unit of a multi-unit one: NAME.N)
  double cycles_per_iteration = 0;
};

// kWindow: the simulated cycles exceed the three bounds (by over 10%): too
// few iterations overlap in the out-of-order window (reorder buffer,
// scheduler, load/store queues), typically behind a long-latency instruction.
enum class BottleneckKind { kFrontEnd, kPort, kDependenceChain, kWindow };
// "front_end", "port", "dependence_chain", "out_of_order_window"
const char* bottleneck_kind_name(BottleneckKind kind);

struct LoopBottleneck {
  BottleneckKind kind = BottleneckKind::kFrontEnd;
  std::string port;         // kPort: the resource of the port bound
  std::string stall;        // kWindow: the simulation's most frequent dispatch stall
  std::string description;  // one line: what limits the loop
  std::string hint;         // one line: what to change
};

// The loop with its scalar FP instructions replaced by packed ones at the
// CPU's widest vector, re-simulated.
struct VectorizationProjection {
  bool projected = false;
  std::string reason;  // why not, when not projected
  uint32_t elements_per_vector = 0;
  uint32_t replaced_instructions = 0;
  uint32_t kept_scalar_instructions = 0;   // scalar FP instructions with no packed form used
  double cycles_per_iteration = 0;         // of the projected loop
  double cycles_per_source_iteration = 0;  // cycles_per_iteration / elements_per_vector
  double speedup = 0;                      // current cycles per iteration / the above
};

// How an access's address moves from one iteration to the next, read from
// its addressing: kStrided, its base and index registers are loop-invariant
// or incremented by constants in the loop (stride = step(base) + scale *
// step(index), bytes per iteration); kIrregular, the address depends on a
// value loaded in the loop (a gather, an indirection, a pointer chase, or a
// vector index); kUnknownStride, a register of the address changes in
// another way (incremented by a register, multiplied, ...). docs/loops.md.
enum class AccessPattern { kStrided, kIrregular, kUnknownStride };
// "strided", "irregular", "unknown_stride"
const char* access_pattern_name(AccessPattern pattern);

// One memory access of an iteration: an instruction that reads and writes
// memory (`add [rdi], eax`) gives a load and a store.
struct MemoryAccess {
  uint32_t instruction = 0;  // index in LoopPerformance::instructions
  bool store = false;
  uint32_t bytes = 0;   // the operand's size; 0: unknown (no memory operand size)
  std::string address;  // "rsi + 8*rax", "rdx + rax": the address registers (its stream)
  int64_t displacement = 0;
  AccessPattern pattern = AccessPattern::kUnknownStride;
  int64_t stride = 0;  // kStrided: bytes per iteration (negative: downwards)
  // What a run's memory traces recorded for this instruction, when a
  // profile is joined (findings/hot_loops.h): the innermost stride that
  // covers the most of its addresses, and the share of its addresses under
  // no such stride (irregular when over half). The L2/RAM estimate then
  // uses it instead of `pattern` and `stride` (docs/loops.md).
  struct Recorded {
    bool irregular = false;
    int64_t stride = 0;
    double irregular_share = 0;
    // The instruction's executions the traces saw, every thread (a
    // read-modify-write's read and write are one execution).
    uint64_t accesses = 0;
    // Its executions per iteration of the loop: accesses over those of the
    // loop's most executed recorded access (1: every iteration; 1/64: a
    // branch taken once in 64). The stride is per execution.
    double per_iteration = 1.0;
    // An irregular access: the bytes (whole lines) one thread touched, the
    // most of any thread (0: not measured). A table that fits in a nearer
    // cache is read from it at every level (docs/loops.md).
    uint64_t footprint_bytes = 0;
  };
  std::optional<Recorded> recorded;
  // The pattern and stride the estimates use: the recorded ones, else the
  // addressing's.
  AccessPattern effective_pattern() const {
    if (!recorded) return pattern;
    return recorded->irregular ? AccessPattern::kIrregular : AccessPattern::kStrided;
  }
  int64_t effective_stride() const { return recorded ? recorded->stride : stride; }
};

// The cycles per iteration with every operand in one level of the memory
// hierarchy (L2, RAM), from the loop's memory accesses and the machine's
// calibration (findings/loop_findings.h computes them; docs/loops.md,
// "L2 and RAM estimates").
struct MemoryLevelEstimate {
  std::string level;  // "L2", "RAM"
  double load_bytes =
      0;  // per iteration, brought from the level by strided and unknown-stride loads
  double store_bytes = 0;  // per iteration, written to the level
  uint32_t irregular_accesses = 0;
  // Accesses whose pattern and stride came from the run's traces, not the
  // addressing (0 without a joined profile).
  uint32_t recorded_strides = 0;
  // Recorded irregular accesses whose footprint fits in a nearer cache,
  // which pay that cache's latency (or none, in L1) instead of the level's.
  uint32_t cached_irregular_accesses = 0;
  // The strided and unknown-stride streams that move those bytes (a stream:
  // one address expression's accesses of one direction, stride not 0).
  uint32_t load_streams = 0;
  uint32_t store_streams = 0;
  // The calibration's bandwidth of that mix of streams (the counts capped at
  // its largest mix), bytes loaded and stored per cycle; 0 when the
  // calibration has no mixes (then the separate load and store figures).
  double stream_mix_bytes_per_cycle = 0;
  // (load_bytes + store_bytes) / stream_mix_bytes_per_cycle, or without
  // mixes load_bytes / load bandwidth + store_bytes / store bandwidth.
  double bandwidth_cycles = 0;
  double latency_cycles = 0;        // irregular accesses x latency / memory-level parallelism
  double cycles_per_iteration = 0;  // max(L1 cycles, bandwidth + latency cycles)
  // "L2 bandwidth", "RAM latency" when the level's cycles exceed the L1
  // cycles; else "core (L1)".
  std::string bottleneck;
};

// The loop run a given number of iterations per entry (`weft loops
// --trip-count`) inside its enclosing loop: LLVM MCA simulates the
// enclosing loop's iteration, its own instructions (outside every loop
// nested in it) with this loop's body repeated trip_count times, so that
// consecutive entries overlap in the out-of-order window as on the core (a
// reduction's chain restarts every entry: the next entry's chain starts
// before this one's ends). docs/loops.md, "Short trip counts".
struct TripCountEstimate {
  uint32_t trip_count = 0;
  // False when trip_count x the body exceeds kMaxTripCountInstructions: an
  // entry then far outlasts the window, and cycles_per_iteration is the
  // endless loop's.
  bool simulated = false;
  uint32_t enclosing_instructions = 0;  // the enclosing loop's own, per entry
  // The inner loops of the enclosing loop simulated with their own trip
  // counts: this one, and its siblings (loops nested directly in the same
  // enclosing loop, innermost) that have a trip count too (clang unrolling
  // the outer loop makes copies of the inner one).
  uint32_t inner_loops = 1;
  // Per iteration of this loop: the simulated cycles per iteration of the
  // enclosing loop / the sum of the inner loops' trip counts (the enclosing
  // loop's own work included, shared among its inner loops' iterations).
  double cycles_per_iteration = 0;
};
// The largest sequence simulated for a trip count (trip count x the body's
// instructions).
inline constexpr uint32_t kMaxTripCountInstructions = 65536;

struct LoopPerformance {
  // Where the loop is.
  std::string function;
  uint64_t function_start = 0;
  uint32_t loop_index = 0;  // in FunctionStructure::loops
  uint64_t header = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint32_t blocks = 0;
  // More than one path through the body (a block of the loop branches to
  // two blocks of the loop): all blocks are analyzed as one sequence.
  bool several_paths = false;
  std::string file;
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::vector<std::string> instructions;        // Intel syntax, in address order
  std::vector<uint64_t> instruction_addresses;  // of each, ELF virtual addresses
  // The header of the smallest loop enclosing this one, when it is nested.
  std::optional<uint64_t> enclosing_loop_header;

  InstructionMix mix;
  std::array<VectorizationCounts, kFpKindCount> vectorization;
  const VectorizationCounts& counts(FpKind kind) const {
    return vectorization[static_cast<size_t>(kind)];
  }
  uint32_t vector_width_used = 0;  // bits of the widest vector register of FP/vector work; 0: none

  // LLVM MCA. When not modeled (an instruction MCA cannot build), only the
  // fields above are set.
  bool modeled = false;
  std::string not_modeled_reason;
  uint32_t micro_ops = 0;
  double cycles_per_iteration = 0;  // steady state, operands in L1
  double front_end_bound = 0;       // micro-ops / dispatch width
  double port_bound = 0;            // max over resources of cycles / units
  std::string port_bound_resource;
  double latency_bound = 0;  // longest loop-carried register dependence cycle, per iteration
  std::vector<std::string> latency_chain;   // the instructions of that cycle, in order
  std::vector<PortPressure> port_pressure;  // every port of the model
  LoopBottleneck bottleneck;
  std::vector<std::string> hints;  // the bottleneck's hint first, then vectorization hints
  VectorizationProjection projection;
  // With a trip count, for a modeled loop nested in another loop.
  std::optional<TripCountEstimate> with_trip_count;
  // The L1 cycles per iteration the memory estimates start from: with a
  // trip count's when there is one, else cycles_per_iteration.
  double effective_cycles_per_iteration() const {
    return with_trip_count ? with_trip_count->cycles_per_iteration : cycles_per_iteration;
  }

  // Every memory access of an iteration, in instruction order (set when
  // the loop decodes, modeled or not).
  std::vector<MemoryAccess> memory_accesses;
  // Set by the findings with a calibration, for a modeled loop: L2, RAM.
  std::vector<MemoryLevelEstimate> memory_levels;
};

struct CpuModel {
  std::string name;
  bool host = false;               // the host's CPU, not --cpu
  uint32_t llvm_version = 0;       // the major version of the LLVM whose tables these are
  uint32_t vector_width_bits = 0;  // 128, 256 or 512
  uint32_t dispatch_width = 0;
  std::vector<std::string> ports;  // the names PortPressure uses, in model order
  // Where the model's tables are known to be wrong for every x86 core, in
  // one sentence each, checked on the tables themselves (docs/loops.md,
  // "Model caveats").
  std::vector<std::string> caveats;
};

// A CPU the linked LLVM does not know, a model without scheduling tables, or a file
// that cannot be read. what() is one line.
class LoopPerformanceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One ELF file and one CPU model. Not thread-safe.
class LoopPerformanceAnalyzer {
 public:
  // cpu: a name the linked LLVM knows; empty: the host's (llvm::sys::getHostCPUName).
  // Throws LoopPerformanceError.
  LoopPerformanceAnalyzer(const std::string& elf_path, const std::string& cpu);
  ~LoopPerformanceAnalyzer();
  LoopPerformanceAnalyzer(const LoopPerformanceAnalyzer&) = delete;
  LoopPerformanceAnalyzer& operator=(const LoopPerformanceAnalyzer&) = delete;

  const CpuModel& cpu() const { return cpu_; }
  // The iterations per entry of the loops analyzed next: `by_header` for
  // the loop with that header, else `every_loop` (0: unknown, the
  // default). With a number, a loop nested in another one gets
  // LoopPerformance::with_trip_count.
  void set_trip_counts(uint32_t every_loop, std::map<uint64_t, uint32_t> by_header) {
    trip_count_ = every_loop;
    trip_counts_ = std::move(by_header);
  }
  uint32_t trip_count_of(uint64_t header) const {
    const auto it = trip_counts_.find(header);
    return it != trip_counts_.end() ? it->second : trip_count_;
  }

  // The innermost loops of `function` (loops no other loop nests in), in
  // address order of their headers.
  std::vector<LoopPerformance> analyze(const FunctionStructure& function);
  LoopPerformance analyze_loop(const FunctionStructure& function, const Loop& loop);

 private:
  struct Backend;
  std::unique_ptr<Backend> backend_;
  CpuModel cpu_;
  uint32_t trip_count_ = 0;
  std::map<uint64_t, uint32_t> trip_counts_;
};

}  // namespace weft
