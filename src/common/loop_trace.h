// LoopTrace: the compressed form of one address stream (the addresses one
// memory instruction accessed in one thread, in order), as nested loops
// (Ketterlin & Clauss, "nested loop recognition"; MAQAO section 3.2).
//
// A trace is a sequence of top-level elements. Each element is a value or a
// loop; a loop runs `count` iterations of its body, itself a sequence of
// elements. A value inside loops is affine in the indices of the loops that
// enclose it within its top-level element:
//
//   address = base + sum_k coefficients[k] * i_k
//
// where i_0 is the index of the outermost enclosing loop and i_{d-1} the
// index of the innermost (d = the value's depth; a top-level value has no
// coefficients). Irregular parts of a stream stay as runs of top-level
// values. Expanding a trace yields the original stream exactly.
//
// The binary encoding (encode_loop_trace / decode_loop_trace) is what the
// profile stores (zstd-compressed) and what the in-program recorder writes;
// docs/profile-format.md describes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weft {

struct TraceNode {
  enum class Kind : uint8_t { Value = 0, Loop = 1 };
  Kind kind = Kind::Value;
  // Value: base + sum_k coefficients[k] * i_k (two's-complement arithmetic,
  // modulo 2^64, so any 64-bit address is representable).
  uint64_t base = 0;
  std::vector<int64_t> coefficients;
  // Loop: `count` (>= 1) iterations of `body` (non-empty).
  uint64_t count = 0;
  std::vector<TraceNode> body;

  bool operator==(const TraceNode&) const = default;
};

// A value node, and a loop node of `count` iterations of `body`.
TraceNode trace_value(uint64_t base, std::vector<int64_t> coefficients = {});
TraceNode trace_loop(uint64_t count, std::vector<TraceNode> body);

struct LoopTrace {
  std::vector<TraceNode> elements;
  bool operator==(const LoopTrace&) const = default;
};

// Number of addresses the trace expands to (saturating at 2^64 - 1).
uint64_t trace_length(const LoopTrace& trace);

// Calls visit(address) for every address of the trace, in order, stopping
// after `limit` addresses.
void expand_loop_trace(const LoopTrace& trace, const std::function<void(uint64_t)>& visit,
                       uint64_t limit = ~uint64_t{0});
std::vector<uint64_t> expand_loop_trace(const LoopTrace& trace, uint64_t limit = ~uint64_t{0});

// `count` addresses spread evenly over the trace: those at positions
// floor(i * length / count) for i = 0 .. count - 1 (every address, in order,
// when the trace has at most `count`). Found from the loop counts, without
// expanding the trace.
std::vector<uint64_t> sample_loop_trace(const LoopTrace& trace, size_t count);

// Nesting depth of the deepest loop (0: only values).
unsigned trace_depth(const LoopTrace& trace);

// The text form, one node per line (each ending in '\n'), two spaces of
// indentation per level:
//   for i0 = 0 to 1023
//     val 0x7f001000 + 8*i0
// Loop bounds are inclusive (count - 1), coefficients in decimal, bases in
// lowercase hex; zero coefficients are omitted, negative ones print as
// "- 8*i0". At most `max_lines` lines, then "... (N more elements)" where N
// counts the top-level elements not printed completely.
std::string format_loop_trace(const LoopTrace& trace, size_t max_lines = ~size_t{0});

// Binary encoding, described in common/loop_trace_format.h. encode throws
// std::invalid_argument when the trace breaks the model (a loop count of 0,
// an empty body, loops nested deeper than 16, a value whose coefficient count
// is not the number of loops enclosing it). decode throws
// std::runtime_error("corrupt memory trace: ...") on malformed input
// (truncated, bad tag, too deep, count 0, empty body, coefficient count not
// equal to the depth, trailing bytes); it never trusts counts to reserve
// memory.
std::vector<uint8_t> encode_loop_trace(const LoopTrace& trace);
LoopTrace decode_loop_trace(const uint8_t* data, size_t size);

// sample_loop_trace(decode_loop_trace(data, size), count), without holding
// the decoded trace: one top-level element at a time (the same errors on
// malformed input).
std::vector<uint64_t> sample_encoded_loop_trace(const uint8_t* data, size_t size, size_t count);

}  // namespace weft
