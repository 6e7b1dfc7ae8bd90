// Tuning hints from decoded memory traces (MAQAO, section 3.3): the stride
// pattern of one instruction's stream (unit / non-unit / large strides,
// column-wise traversal of row-major data), 4K aliasing between a store and
// a load of one thread, and the reuse degree of a stream. Pure analysis on
// LoopTrace values: no I/O, no profile.
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
// positions k .. k + window - 1 of L's stream; a hit is addr_S != addr_L with
// equal low 12 bits. A pair is reported when hits cover at least half of
// the store's positions. Sorted by fraction descending, then thread, store
// pc, load pc.
std::vector<AliasingPair> find_4k_aliasing(const std::vector<TracedInstruction>& instructions,
                                           unsigned window = 8);

struct ReuseDegree {
  uint64_t addresses = 0;  // addresses considered (the first `limit` of the trace)
  uint64_t distinct = 0;   // distinct addresses among them
  double degree = 0;       // addresses / distinct (0 for an empty trace)
  bool truncated = false;  // the trace holds more than `limit` addresses
};

// How many times each address is accessed on average by this instruction in
// this thread (for loads: how often loaded data is reloaded), over the first
// `limit` addresses of the trace.
ReuseDegree reuse_degree(const TracedInstruction& instruction, uint64_t limit = uint64_t{1} << 22);

}  // namespace weft
