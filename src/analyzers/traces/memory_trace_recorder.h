// MemoryTraceRecorder: the address streams of a run, one per (thread, memory
// instruction), compressed online into nested loops (Ketterlin & Clauss,
// "nested loop recognition", NLR; MAQAO section 3.2) and stored as the
// LoopTrace encoding (common/loop_trace_format.h).
//
// Each stream keeps an NLR stack of elements (values and loops, the model of
// common/loop_trace.h). Every address is pushed as a value, then reductions
// are tried for k = 1 .. max_body, smallest first, restarting from k = 1
// after each success:
//   - extension: the element just below the top k elements is a loop whose
//     body has k elements, and those top k elements are its next iteration
//     (same shape, values at the predicted addresses): they are popped and
//     its count grows by one;
//   - folding: the top 3k elements are three blocks of k elements with the
//     same shape (kinds, loop counts, inner coefficients) whose values are in
//     arithmetic progression from block to block: they become a loop of count
//     3 over the first block, each value gaining the difference as the
//     coefficient of the new (outermost) index.
// Folding needs three blocks, not two: two values always fit an affine
// function, so folding pairs would turn every irregular stretch into bogus
// loops of two and hide patterns whose body has several values (an
// instruction alternating between two arrays with different strides).
// Reductions cascade into loops of loops, up to max_depth levels. When the
// stack holds more than stack_length elements, the bottom flush_count move to
// the stream's output, encoded: they are final (the bottom elements also
// go when the stack's nodes reach their cap, 8 nodes per element of
// stack_length). Nothing is ever lost but to the memory budget.
//
// Cost per access: the common case, the top element being a loop over one
// value and the address the one it predicts, is a compare, an add and an
// increment (the fast path in access()): the recorder precomputes at which
// count that loop could take part in a reduction (`next_check`) and only then
// runs the general step. A nest's rows take the same path: once the top
// element is an outer loop over one finished row (a loop over one value),
// the next row's addresses are predicted and only counted, and the row's
// last one extends the outer loop (the nested fast path; any other access
// first records the counted ones through the general step, so the encoding
// is the one the general step builds). Any other access runs the general
// step, which does at most max_body extension and folding attempts per
// reduction; reductions only remove nodes, so their number is bounded by
// the pushes.
//
// Segments: the capture calls close_segment() at each of the thread's
// logged section-closing records (the segments of docs/metrics.md, "Parallel
// section"). Each stream notes where its accesses cross from one segment to
// the next, as arithmetic runs (TraceSegmentRun: a loop run once per time
// step in every thread is one run): the schedule recovery splits a stream
// into the executions of its loop with them. The test costs the access a
// compare; a run is appended only when a crossing breaks the previous run's
// progression.
//
// Traced segments: a long run need not be traced whole. The schedule, the
// strides and the footprint of a loop run once per time step are the same in
// every step. The capture may pause a thread's tracing for a segment
// (trace_segment): the same segments in every thread, each traced whole or
// not at all; a paused access costs one test.
//
// Memory: per thread, a budget of max_bytes_per_thread for the streams'
// stacks, outputs and segment runs, from mmap'ed blocks (page_memory.h); the
// per-thread table of streams (PagedHashTable) is outside the budget. When
// the budget is exhausted, all the thread's streams stop recording: each
// keeps a trace of its first accesses - lost addresses, and counts the rest
// as lost; a stream that could not keep a segment run says so
// (kTraceSegmentsLost). One stream alone stops so at its share of the
// budget (its output past 1/kStreamShare of it): an irregular stream (a
// gather through an index array) otherwise spent the whole budget and left
// every later loop of the thread without a trace.
//
// This file is compiled into the in-program runtime: no exceptions, no RTTI,
// no malloc, no locks, no virtual calls. Each thread updates only its own
// state; for_each_stream() and finish() run when no thread is recording.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/traces/traces_records.h"
#include "common/loop_trace_format.h"
#include "common/run_capture.h"

namespace weft {

struct MemoryTraceConfig {
  unsigned max_threads = 1024;
  size_t max_bytes_per_thread = size_t{256} << 20;  // arena budget per thread (streams' stacks +
                                                    // output)
  unsigned stack_length = 64;  // max elements on a stream's stack (K&C "length")
  unsigned max_body = 8;       // max elements in a loop body  (K&C "breadth")
  unsigned flush_count = 16;   // elements moved off the stack bottom to the stream's output when
                               // the stack is full (K&C "elements to throw": here they are
                               // emitted, not lost)
  unsigned max_depth = 8;      // max loop nesting (at most loop_trace_format::kMaxDepth)
  // 1 in how many segments a long run traces (the capture decides which:
  // docs/metrics.md, "Sampled section instances"); 1: every one.
  uint32_t segment_sampling = 1;
};

namespace memory_trace_detail {

inline constexpr uint8_t kValueNode = 0;
inline constexpr uint8_t kLoopNode = 1;

// One element of an NLR stack, or a node inside one: a stack stores its
// elements' nodes in prefix order, each top-level element contiguous.
struct Node {
  uint64_t value;     // value: its base; loop: its count
  uint32_t size;      // nodes in the subtree, this one included (1 for a value)
  uint16_t children;  // loop: elements in its body
  uint8_t kind;       // kValueNode or kLoopNode
  uint8_t level;      // value: its coefficients (one per enclosing loop within its top-level
                      // element); loop: loops on the deepest path of its subtree, itself included
};
static_assert(sizeof(Node) == 16);

// A stream's stack, in one arena allocation: the header, `capacity` nodes,
// their coefficient rows (`coefficient_stride` = max_depth slots each, the
// innermost loop's coefficient first, so that a new outer loop appends) and
// the first node of each element (capacity + 1 slots).
struct Stack {
  Node* node;
  int64_t* coefficients;
  uint32_t* start;
  uint32_t capacity;
  uint32_t nodes;
  uint32_t elements;
  uint32_t size_class;  // capacity = 1 << size_class
  // The nested fast path's count (Stream::fast_count): here, not in the
  // stream, whose table entry moves when the table grows. In the header's
  // padding (the nodes start 16-aligned after it).
  uint64_t pending;
};
static_assert(sizeof(Stack) == 48, "a stack's header stays in its 16-aligned 48 bytes");

// Encoded output, in a list of chunks; `capacity` bytes follow the header.
struct OutputChunk {
  OutputChunk* next;
  uint32_t used;
  uint32_t capacity;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this + 1); }
};

// A stream's segment runs, in a list of chunks; `capacity` runs follow the
// header.
struct SegmentRunChunk {
  SegmentRunChunk* next;
  uint32_t used;
  uint32_t capacity;
  TraceSegmentRun* runs() { return reinterpret_cast<TraceSegmentRun*>(this + 1); }
  const TraceSegmentRun* runs() const { return reinterpret_cast<const TraceSegmentRun*>(this + 1); }
};
static_assert(sizeof(SegmentRunChunk) % alignof(TraceSegmentRun) == 0);

// In Stream::kinds: the stream reached its share of the budget and records
// no more (the rest of its accesses are lost). Never in a header's kinds.
inline constexpr uint32_t kStreamFull = 1u << 31;

// One (thread, pc) stream: a PagedHashTable entry, zero when new.
struct Stream {
  uint64_t key;  // pc
  // Fast path, valid when fast_count != nullptr: the top element is a loop
  // over one value, whose count is *fast_count; `predicted` is the address
  // its next iteration reads, `stride` its coefficient, and `next_check` the
  // count at which it could take part in a reduction (~0: never).
  // Or (fast_count == &stack->pending, nested_pending) the top element is a
  // loop whose body is one such loop (a nest's outer loop, its inner loop
  // done): the accesses that read its next iteration's addresses are only
  // counted in stack->pending, `next_check` being the inner loop's count;
  // when they complete it the outer loop's count grows by one
  // (MemoryTraceRecorder::checkpoint), and any other access first pushes
  // them one by one (settle).
  uint64_t* fast_count;
  uint64_t predicted;
  uint64_t stride;
  uint64_t next_check;
  uint64_t accesses;
  uint64_t lost;
  uint32_t access_size;
  uint32_t kinds;  // kTraceRead | kTraceWrite, and kStreamFull
  Stack* stack;
  OutputChunk* output_head;
  OutputChunk* output_tail;
  uint64_t output_bytes;          // bytes in the chunks (the trace header excluded)
  uint64_t output_elements;       // top-level elements in the chunks
  uint64_t output_previous_base;  // delta-coding state after the chunks
  uint64_t stack_bytes;           // set by finish(): the stack's encoded size
  // The thread's segment at the stream's latest access, and where its
  // accesses crossed segments (TraceSegmentRun; the last run is
  // segments_tail's last one).
  uint32_t segment;
  uint32_t segment_runs;
  bool segments_lost;
  SegmentRunChunk* segments_head;
  SegmentRunChunk* segments_tail;
};

// Per-thread memory: bump allocation in mmap'ed blocks, a budget on the
// bytes handed out, and free lists of stacks by size class.
class Arena {
 public:
  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void set_budget(size_t bytes) { budget_ = bytes; }
  // `bytes` (16-aligned, zeroed if never used before); nullptr when over
  // budget or out of memory.
  void* allocate(size_t bytes);
  void* take_free(unsigned size_class);
  void give_free(unsigned size_class, void* p);
  // Gives every block back (nothing may point into them any more); the
  // budget stays charged.
  void release_blocks();
  size_t charged() const { return charged_; }

 private:
  struct Block {
    Block* next;
    size_t bytes;
  };
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static constexpr size_t kFirstBlockBytes = 2048;
  static constexpr unsigned kClasses = 32;

  Block* blocks_ = nullptr;
  uint8_t* cursor_ = nullptr;
  uint8_t* limit_ = nullptr;
  size_t budget_ = 0;
  size_t charged_ = 0;
  void* free_[kClasses] = {};
};

// Writes elements [first, last) of `stack` in prefix order.
template <class Sink>
void encode_elements(const Stack& stack, uint32_t first, uint32_t last, unsigned coefficient_stride,
                     loop_trace_format::Writer<Sink>& writer) {
  const uint32_t begin = first < stack.elements ? stack.start[first] : stack.nodes;
  const uint32_t end = last < stack.elements ? stack.start[last] : stack.nodes;
  for (uint32_t i = begin; i < end; ++i) {
    const Node& n = stack.node[i];
    if (n.kind == kLoopNode)
      writer.loop(n.value, n.children);
    else
      writer.value_innermost_first(n.value, stack.coefficients + size_t{i} * coefficient_stride,
                                   n.level);
  }
}

}  // namespace memory_trace_detail

class MemoryTraceRecorder {
 public:
  // One stream records until its output holds this part of the thread's
  // budget (memory_trace_detail::kStreamFull).
  static constexpr size_t kStreamShare = 16;
  // Opaque to callers: pass it back to access().
  struct ThreadState {
    uint32_t tid = 0;
    uint32_t segment = 0;           // section-closing records logged so far (close_segment)
    bool exhausted = false;         // the budget ran out: no stream of the thread records any more
    bool paused = false;            // the open segment is not traced (trace_segment)
    uint32_t skipped_segments = 0;  // segments begun paused
    uint64_t untracked = 0;         // accesses of no stream (pc 0, or the table out of memory)
    uint64_t general_steps = 0;     // accesses that took the general step (push): its cost
    PagedHashTable<memory_trace_detail::Stream> streams;
    memory_trace_detail::Arena arena;
  };

  // One stream's encoding, for for_each_stream's visitor.
  class Body {
   public:
    // Calls out(const void* bytes, size_t n), possibly several times, with
    // the stream's LoopTrace encoding (header.encoded_bytes bytes in all).
    // Allocates nothing; may be called any number of times.
    // write_segments(out) then writes its header.segment_runs
    // TraceSegmentRun records the same way.
    template <class Out>
    void write_segments(Out&& out) const {
      for (const memory_trace_detail::SegmentRunChunk* c = stream_->segments_head; c; c = c->next)
        if (c->used) out(static_cast<const void*>(c->runs()), c->used * sizeof(TraceSegmentRun));
    }
    template <class Out>
    void write(Out&& out) const {
      using Sink = std::remove_reference_t<Out>;
      loop_trace_format::Writer<Sink> writer(out, stream_->output_previous_base);
      const memory_trace_detail::Stack* stack = stream_->stack;
      writer.element_count(stream_->output_elements + (stack ? stack->elements : 0));
      for (const memory_trace_detail::OutputChunk* c = stream_->output_head; c; c = c->next)
        if (c->used) out(static_cast<const void*>(c->data()), size_t{c->used});
      if (stack) encode_elements(*stack, 0, stack->elements, coefficient_stride_, writer);
    }

   private:
    friend class MemoryTraceRecorder;
    Body(const memory_trace_detail::Stream* stream, unsigned coefficient_stride)
        : stream_(stream), coefficient_stride_(coefficient_stride) {}
    const memory_trace_detail::Stream* stream_;
    unsigned coefficient_stride_;
  };

  // The configuration is clamped: max_depth to 1 .. 16, max_body to
  // 1 .. 256, stack_length to 1 .. 65536, flush_count to 1 .. stack_length.
  explicit MemoryTraceRecorder(const MemoryTraceConfig& config);
  ~MemoryTraceRecorder();
  MemoryTraceRecorder(const MemoryTraceRecorder&) = delete;
  MemoryTraceRecorder& operator=(const MemoryTraceRecorder&) = delete;

  const MemoryTraceConfig& config() const { return config_; }

  // The state of thread `tid`, created on first call (lock-free; racing
  // callers get the same state); nullptr beyond max_threads or when out of
  // memory.
  ThreadState* attach(uint32_t tid);

  // The thread exited: each stream's stack, output and segment runs move
  // into packed blocks of their size, the thread's arena blocks are given
  // back, and its streams' table moves into packed memory of its size. A
  // later access grows them again.
  void finish_thread(ThreadState& t);

  // Thread t's instruction `pc` accessed [address, address + size). Only the
  // thread owning `t` may call it. pc 0 is not recorded (counted in
  // dropped() only).
  void access(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size, bool is_write) {
    if (t.paused) return;
    memory_trace_detail::Stream* s = pc ? t.streams.find_or_insert(pc) : nullptr;
    if (__builtin_expect(s == nullptr, 0)) {
      ++t.untracked;
      return;
    }
    if (__builtin_expect(s->segment != t.segment, 0)) cross_segment(t, *s);
    ++s->accesses;
    s->kinds |= is_write ? kTraceWrite : kTraceRead;
    if (size > s->access_size) s->access_size = size;
    if (__builtin_expect(t.exhausted || (s->kinds & memory_trace_detail::kStreamFull), 0)) {
      if (nested_pending(*s)) settle(t, *s);  // the trace keeps a prefix
      ++s->lost;
      return;
    }
    record(t, *s, address);
  }

  // access(t, pc, address, size, is_write) when it only continues a
  // recently seen stream's regular stride short of its next checkpoint, or
  // only counts a lost access once the budget ran out (true); otherwise
  // nothing is changed (false): call access(). For an inline caller.
  static bool access_fast(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size,
                          bool is_write) {
    if (t.paused) return true;
    memory_trace_detail::Stream* s = t.streams.find_recent(pc);
    if (__builtin_expect(s == nullptr || s->segment != t.segment, 0)) return false;
    // Past the budget an access only counts, as in access(): inline, not a
    // call out of line per access for the rest of the run (an irregular
    // stream of streamcluster's gain loop spent the budget in its first
    // traced passes).
    const bool lost = t.exhausted || (s->kinds & memory_trace_detail::kStreamFull);
    if (lost ? nested_pending(*s)
             : (s->fast_count == nullptr || address != s->predicted ||
                *s->fast_count + 1 == s->next_check))
      return false;
    ++s->accesses;
    s->kinds |= is_write ? kTraceWrite : kTraceRead;
    if (size > s->access_size) s->access_size = size;
    if (__builtin_expect(lost, 0)) {
      ++s->lost;
      return true;
    }
    s->predicted += s->stride;
    ++*s->fast_count;
    return true;
  }

  // Thread t logged a section-closing record: its next accesses are in its
  // next segment. Only the thread owning `t` may call it.
  static void close_segment(ThreadState& t) { ++t.segment; }
  // Whether the thread's accesses from now on, a segment it begins, are
  // traced (the capture's choice of segments). Only the thread owning `t`
  // may call it.
  static void trace_segment(ThreadState& t, bool traced) {
    t.paused = !traced;
    t.skipped_segments += !traced;
  }

  // Segments no thread traced (segment_sampling), over all threads.
  uint64_t skipped_segments() const;

  // After the run (no thread recording): closes every stream (its remaining
  // stack is the end of its encoding, written by Body::write straight from
  // the stack). Idempotent; allocates nothing. Do not call access() after.
  void finish();

  // visit(const TraceStreamHeader& header, const Body& body) for every
  // stream, thread by thread. Call when no thread is recording.
  template <class Visitor>
  void for_each_stream(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) {
      t.streams.for_each([&](const memory_trace_detail::Stream& s) {
        TraceStreamHeader header;
        header.thread = t.tid;
        header.access_size = s.access_size;
        header.pc = s.key;
        header.kinds = (s.kinds & ~memory_trace_detail::kStreamFull) |
                       (s.segments_lost ? kTraceSegmentsLost : 0);
        header.segment_runs = s.segments_lost ? 0 : s.segment_runs;
        header.accesses = s.accesses;
        header.lost = s.lost;
        header.encoded_bytes = encoded_bytes(s);
        const Body body(&s, config_.max_depth);
        visit(static_cast<const TraceStreamHeader&>(header), body);
      });
    });
  }

  // Addresses lost to the memory budget across all streams (the sum of
  // their headers' `lost`), plus accesses no stream could hold (pc 0, or the
  // stream table out of memory).
  uint64_t dropped() const;

 private:
  template <class Visitor>
  void for_each_thread(Visitor&& visit) const {
    threads_.for_each(visit);
  }

  uint64_t encoded_bytes(const memory_trace_detail::Stream& s) const;
  uint64_t stack_encoded_bytes(const memory_trace_detail::Stream& s) const;

  // The stream's first access in the thread's current segment: notes it in
  // its segment runs.
  void cross_segment(ThreadState& t, memory_trace_detail::Stream& s) const;
  // `address` goes into the stream: the fast path where it predicts it,
  // the general step otherwise (access(), and settle's replay).
  void record(ThreadState& t, memory_trace_detail::Stream& s, uint64_t address) {
    if (s.fast_count != nullptr && address == s.predicted) {
      s.predicted += s.stride;
      if (__builtin_expect(++*s.fast_count != s.next_check, 1)) return;
      checkpoint(s);
      return;
    }
    push(t, s, address);
  }
  // The general step: push `address` on the stack, reduce, flush.
  void push(ThreadState& t, memory_trace_detail::Stream& s, uint64_t address);
  // The fast path's loop reached next_check: reduce (the nested fast path:
  // its outer loop gains the iteration, then reduce).
  void checkpoint(memory_trace_detail::Stream& s);
  static bool nested_pending(const memory_trace_detail::Stream& s) {
    return s.stack != nullptr && s.fast_count == &s.stack->pending;
  }
  // Leaves the nested fast path: the accesses it counted are recorded as
  // the general step would have, one by one.
  void settle(ThreadState& t, memory_trace_detail::Stream& s);
  void reduce(memory_trace_detail::Stack& stack) const;
  bool try_extend(memory_trace_detail::Stack& stack, uint32_t k) const;
  bool try_fold(memory_trace_detail::Stack& stack, uint32_t k) const;
  void update_fast_path(memory_trace_detail::Stream& s) const;
  memory_trace_detail::Stack* allocate_stack(ThreadState& t, unsigned size_class) const;
  bool grow(ThreadState& t, memory_trace_detail::Stream& s) const;
  // Moves the bottom `count` elements to the output; false (nothing done)
  // when out of budget.
  bool flush(ThreadState& t, memory_trace_detail::Stream& s, uint32_t count) const;
  size_t stack_bytes(unsigned size_class) const;

  MemoryTraceConfig config_;
  unsigned max_size_class_ = 0;  // stacks hold at most 1 << max_size_class_ nodes
  bool finished_ = false;
  PerThreadStates<ThreadState> threads_;
};

}  // namespace weft
