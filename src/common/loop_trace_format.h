// The binary encoding of a LoopTrace (common/loop_trace.h), shared by the
// offline model (encode_loop_trace / decode_loop_trace) and the in-program
// recorder (analyzers/traces/memory_trace_recorder.h), which writes the very
// same bytes with the allocation-free Writer below.
//
// Encoding
// --------
//
//   trace   := varint(E) element{E}        E = number of top-level elements
//   element := loop | value
//   loop    := 0x01 varint(count) varint(B) element{B}
//                                          count >= 1 iterations of a body of
//                                          B >= 1 elements
//   value   := tag varint(zigzag(base - previous)) varint(zigzag(c_0)) ...
//              varint(zigzag(c_{n-1}))
//              tag = 2 * n (an even byte, 0x00 to 0x20), n = number of
//              coefficients = number of loops enclosing the value within its
//              top-level element (0 to 16)
//
// - varint: unsigned LEB128, 7 bits per byte, least significant group first,
//   high bit set on every byte but the last; at most 10 bytes (64 bits).
// - zigzag: signed to unsigned, (x << 1) ^ (x >> 63): 0, -1, 1, -2, ... map to
//   0, 1, 2, 3, ... so small magnitudes of either sign take few bytes.
// - Bases are delta-coded: `previous` is the base of the value written just
//   before in the encoding (prefix order over the whole trace, any depth), 0
//   before the first value; the difference is taken modulo 2^64 and read as a
//   signed 64-bit number.
// - Coefficient c_k multiplies i_k, the index of the k-th enclosing loop
//   counted from the outermost one (i_0) of the value's top-level element:
//   address = base + c_0 * i_0 + ... + c_{n-1} * i_{n-1} (modulo 2^64).
// - Elements are written in prefix order: a loop's header, then its body.
// - Loops nest at most 16 deep (kMaxDepth), so values have at most 16
//   coefficients.
// - An empty trace is the single byte 0x00.
//
// A decoder rejects (common/loop_trace.h: "corrupt memory trace: ..."): input
// that ends inside the trace, a varint longer than 64 bits, any tag other
// than 0x01 and the even bytes up to 0x20, a loop nested deeper than 16, a
// loop count of 0, an empty loop body, a value whose coefficient count is not
// the number of loops enclosing it, and bytes after the last element.
//
// Everything here is header-only, allocation-free and exception-free, so that
// it can be compiled into the in-program runtime.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::loop_trace_format {

inline constexpr uint8_t kLoopTag = 0x01;
inline constexpr unsigned kMaxDepth = 16;
inline constexpr size_t kMaxVarintBytes = 10;
// The largest encoding of one node (a value with kMaxDepth coefficients).
inline constexpr size_t kMaxNodeBytes = 1 + kMaxVarintBytes * (1 + kMaxDepth);

constexpr uint8_t value_tag(unsigned coefficients) {
  return static_cast<uint8_t>(coefficients << 1);
}
constexpr bool is_value_tag(uint8_t tag) { return (tag & 1) == 0 && (tag >> 1) <= kMaxDepth; }
constexpr unsigned value_tag_coefficients(uint8_t tag) { return tag >> 1; }

constexpr uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t zigzag_decode(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

constexpr size_t varint_bytes(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` at `out` (room for kMaxVarintBytes); returns the bytes written.
inline size_t put_varint(uint8_t* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

enum class VarintStatus { Ok, Truncated, TooLong };

// Reads one varint from [p, end) and advances p past it.
inline VarintStatus get_varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p == end) return VarintStatus::Truncated;
    const uint8_t byte = *p++;
    if (shift == 63 && byte > 1) return VarintStatus::TooLong;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return VarintStatus::Ok;
    if (shift == 63) return VarintStatus::TooLong;
  }
}

// A sink that only counts: the size of an encoding without writing it.
struct ByteCounter {
  uint64_t bytes = 0;
  void operator()(const void*, size_t n) { bytes += n; }
};

// Writes a trace node by node, in prefix order, to `sink`, a callable
// sink(const void* bytes, size_t n) invoked once per header or node. Keeps
// the delta-coding state (the previous value's base) so that a trace can be
// written in several pieces: start the next piece's writer with
// previous_base() of the last one.
//
//   Writer w(sink);
//   w.element_count(1);                    // one top-level element:
//   w.loop(64, 1);                         //   for i0 = 0 to 63
//   int64_t c[] = {8};
//   w.value(0x1000, c, 1);                 //     val 0x1000 + 8*i0
template <class Sink>
class Writer {
 public:
  explicit Writer(Sink& sink, uint64_t previous_base = 0) : sink_(sink), previous_(previous_base) {}

  // The trace header: the number of top-level elements.
  void element_count(uint64_t elements) {
    uint8_t bytes[kMaxVarintBytes];
    sink_(bytes, put_varint(bytes, elements));
  }

  // A loop of `count` iterations whose body (the next `body_elements`
  // elements written) follows.
  void loop(uint64_t count, uint64_t body_elements) {
    uint8_t bytes[1 + 2 * kMaxVarintBytes];
    size_t n = 0;
    bytes[n++] = kLoopTag;
    n += put_varint(bytes + n, count);
    n += put_varint(bytes + n, body_elements);
    sink_(bytes, n);
  }

  // A value; coefficients[k] multiplies i_k (outermost loop first);
  // n <= kMaxDepth.
  void value(uint64_t base, const int64_t* coefficients, unsigned n) {
    write_value(base, coefficients, n, 1);
  }
  // The same with coefficients[0] multiplying the innermost index.
  void value_innermost_first(uint64_t base, const int64_t* coefficients, unsigned n) {
    write_value(base, n ? coefficients + (n - 1) : coefficients, n, -1);
  }

  uint64_t previous_base() const { return previous_; }

 private:
  void write_value(uint64_t base, const int64_t* first, unsigned n, ptrdiff_t step) {
    uint8_t bytes[kMaxNodeBytes];
    size_t size = 0;
    bytes[size++] = value_tag(n);
    size += put_varint(bytes + size, zigzag_encode(static_cast<int64_t>(base - previous_)));
    for (unsigned k = 0; k < n; ++k)
      size += put_varint(bytes + size, zigzag_encode(first[k * step]));
    previous_ = base;
    sink_(bytes, size);
  }

  Sink& sink_;
  uint64_t previous_;
};

}  // namespace weft::loop_trace_format
