// Tuning hints from decoded memory traces (MAQAO, section 3.3): the stride
// pattern of one instruction's stream (unit / non-unit / large strides,
// column-wise traversal of row-major data), 4K aliasing between a store and
// a load of one thread, and the reuse of a group of loads within one
// execution of their loop nest. Pure analysis on LoopTrace values: no I/O,
// no profile.
#pragma once

#include <cstdint>
#include <vector>

#include "common/loop_trace.h"

namespace weft {

// One memory instruction's address stream in one thread.
struct TracedInstruction {
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint32_t access_size = 0;
  bool reads = false, writes = false;
  uint64_t accesses = 0;  // total executions (the trace may hold fewer: accesses - lost)
  uint64_t lost = 0;
  LoopTrace trace;
};

enum class StrideClass {
  Zero,       // the same address repeated
  Unit,       // 0 < |stride| <= access_size: contiguous (or overlapping) accesses
  NonUnit,    // access_size < |stride| < line_size: several accesses per line, gaps
  Large,      // |stride| >= line_size: every access touches a new line
  Irregular,  // no single innermost stride covers half of the addresses
};

// "zero", "unit", "non-unit", "large", "irregular".
const char* stride_class_name(StrideClass kind);

struct StridePattern {
  StrideClass kind = StrideClass::Irregular;
  // The innermost stride (bytes, signed) that covers the most addresses; for
  // Irregular the best one found (0 when no address is under a loop). When
  // column_wise, this is the row stride (the distance between rows).
  int64_t stride = 0;
  double coverage = 0;     // fraction of the trace's addresses under that stride
  uint64_t addresses = 0;  // addresses in the trace (saturating)
  // Large innermost stride while an enclosing loop of the same values moves
  // by a small stride (0 < |outer_stride| < line_size) over at least half of
  // those addresses: the inner loop walks the wrong dimension of row-major
  // data (MAQAO's ITRLSOL case); interchanging the loops makes the inner
  // stride outer_stride.
  bool column_wise = false;
  int64_t outer_stride = 0;  // column_wise: the small enclosing stride, else 0
};

// The stride of each value node is the coefficient of its innermost
// enclosing loop that actually iterates (count >= 2); the node covers as many
// addresses as it expands to (the product of its enclosing counts). Values
// outside any iterating loop (irregular runs) cover no stride. Strides are
// weighted by the addresses they cover; ties go to the smaller |stride|,
// then the positive one. The class comes from the winner; coverage < 0.5
// makes it Irregular. access_size 0 counts as 1.
StridePattern stride_pattern(const TracedInstruction& instruction, unsigned line_size = 64);
// The same over several streams of one instruction (its threads' streams,
// pooled: every stream's addresses weigh in one tally; access size: the
// largest).
StridePattern stride_pattern(const std::vector<const TracedInstruction*>& streams,
                             unsigned line_size = 64);

struct AliasingPair {
  uint32_t thread = 0;
  uint64_t store_pc = 0;
  uint64_t load_pc = 0;
  double fraction = 0;    // store positions with a hit / store positions compared
  int64_t distance = 0;   // load address - store address at the first hit
  uint64_t compared = 0;  // store positions compared (<= 65536)
};

// 4K aliasing (a load whose address has the low 12 bits of an earlier,
// different store address stalls on Intel cores). `instructions` are one
// thread's streams in one loop region (instructions of different threads
// are never paired). Every writing instruction S is paired with every
// reading instruction L of another pc; over the first min(65536, length)
// positions k of S's stream, position k of S is compared with the `window`
// loads of L issued after it: positions k .. k + window - 1 of L's stream
// when L follows S in the loop's code (a higher pc), k + 1 .. k + window
// when it precedes it (its position k was read before S wrote); a hit is
// addr_S != addr_L with equal low 12 bits. A pair is reported when hits cover at least half of
// the store's positions. Sorted by fraction descending, then thread, store
// pc, load pc.
std::vector<AliasingPair> find_4k_aliasing(const std::vector<TracedInstruction>& instructions,
                                           unsigned window = 8);

// The leading repetition of a stream: its trace's first top-level element
// is a loop whose index no value below it depends on (every iteration
// touches the same addresses, in the same order), and so on into that
// loop's body while the body is one such loop; the other top-level
// elements, if any, must be the first elements of the outermost such
// loop's body (a last, partial iteration). `count` is the product of those
// loops' counts and `unit` the addresses of one iteration of the innermost
// of them. A stream that does not start so has count 1 and unit = its
// length. Examples: for t < 10 { for i < 100 { val a + 8*i } } is 10 x 100;
// for t < 10 { for i < 100 { for k < 16 { val c + 8*k } } } is 1000 x 16;
// for s < 4 { sweep of A; sweep of B } followed by a sweep of A is 4 x (both
// sweeps).
struct Repetition {
  uint64_t count = 1;
  uint64_t unit = 0;
};
Repetition leading_repetition(const LoopTrace& trace);

// The reuse of one group of loads (the loads of one source line in one
// thread) within one execution of their loop nest (`nest`: the thread's
// streams of the loops those loads are in, the group's among them).
//   - Executions: the nest repeats R = gcd over its streams of their
//     leading_repetition counts times on the same data (an enclosing loop,
//     a time step, runs it again; R = 1 when any stream does not repeat).
//     Only the first execution is examined: the first count / R units of
//     each stream.
//   - Order: the streams of that execution are interleaved in proportion
//     to their lengths (the j-th of a stream's m addresses at (j + 1/2) /
//     m, ties to the earlier stream of `nest`); at most `limit` addresses in
//     all, each stream cut in proportion when the execution holds more.
//   - Distance of a load of the group: the distinct lines (address /
//     line_size) the nest touched strictly between the group's previous
//     load of the same address and it (none for a first load).
//   - A reuse is held when its distance is below `capacity_lines` (an LRU
//     cache of that many lines still holds the data).
//   - A load of the group that reads one address throughout the execution
//     (a loop-invariant scalar, a constant) is no data: it is left out of
//     the group (its line still counts in the distances).
// `in_group[i]` tells whether nest[i] is one of the group's loads.
struct NestReuse {
  uint64_t executions = 1;  // R
  uint64_t loads = 0;       // the group's loads examined (scalars left out)
  uint64_t distinct = 0;    // distinct addresses among them
  uint64_t reuses = 0;      // loads of an address the group loaded before
  uint64_t held = 0;        // ... at a distance below capacity_lines
  uint64_t span = 0;        // the largest distance of a held reuse, in lines
  double degree = 0;        // loads / (loads - held); 0 without loads
  // The fewest addresses that take at least half of the loads, and their
  // loads: a reuse concentrated on a few (a candidate centre's coordinates
  // against every point) is the one to keep in registers.
  uint64_t hot_addresses = 0;
  uint64_t hot_loads = 0;
  bool truncated = false;  // the execution holds more than `limit` addresses
};
NestReuse nest_reuse(const std::vector<const TracedInstruction*>& nest,
                     const std::vector<bool>& in_group, unsigned line_size, uint64_t capacity_lines,
                     uint64_t limit = uint64_t{1} << 22);

}  // namespace weft
