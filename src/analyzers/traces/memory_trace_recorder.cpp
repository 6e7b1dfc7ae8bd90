#include "analyzers/traces/memory_trace_recorder.h"

#include <algorithm>

#include "analyzers/state/page_memory.h"
#include "analyzers/state/per_thread_slot.h"

namespace weft {

using memory_trace_detail::Arena;
using memory_trace_detail::kLoopNode;
using memory_trace_detail::kValueNode;
using memory_trace_detail::Node;
using memory_trace_detail::OutputChunk;
using memory_trace_detail::SegmentRunChunk;
using memory_trace_detail::Stack;
using memory_trace_detail::Stream;

namespace {

constexpr size_t align16(size_t n) { return (n + 15) & ~size_t{15}; }

constexpr unsigned kInitialSizeClass = 3;  // 8 nodes
constexpr uint32_t kFirstChunkBytes = 256;
constexpr uint32_t kMaxChunkBytes = 64 << 10;
constexpr uint32_t kFirstSegmentRuns = 4;
constexpr uint32_t kMaxSegmentRuns = 1024;

unsigned clamp(unsigned v, unsigned low, unsigned high) {
  return v < low ? low : v > high ? high : v;
}

// Appends to a stream's output chunks, spilling from one to the next; the
// caller made room for everything it writes.
struct ChunkAppender {
  OutputChunk* chunk;
  void operator()(const void* data, size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    while (n) {
      if (chunk->used == chunk->capacity) chunk = chunk->next;
      size_t m = chunk->capacity - chunk->used;
      if (m > n) m = n;
      __builtin_memcpy(chunk->data() + chunk->used, bytes, m);
      chunk->used += static_cast<uint32_t>(m);
      bytes += m;
      n -= m;
    }
  }
};

// Moves nodes [from, from + count) of `stack` to `to` (ranges may overlap)
// with their coefficients: only the slots in use, not whole rows.
void move_nodes(Stack& stack, unsigned stride, uint32_t to, uint32_t from, uint32_t count) {
  if (to == from || count == 0) return;
  __builtin_memmove(stack.node + to, stack.node + from, size_t{count} * sizeof(Node));
  auto move_row = [&](uint32_t j) {
    const Node& n = stack.node[to + j];
    if (n.kind == kValueNode && n.level)
      __builtin_memmove(stack.coefficients + size_t{to + j} * stride,
                        stack.coefficients + size_t{from + j} * stride,
                        size_t{n.level} * sizeof(int64_t));
  };
  if (to < from)
    for (uint32_t j = 0; j < count; ++j) move_row(j);
  else
    for (uint32_t j = count; j-- > 0;) move_row(j);
}

}  // namespace

namespace memory_trace_detail {

Arena::~Arena() { release_blocks(); }

void Arena::release_blocks() {
  for (Block* b = blocks_; b != nullptr;) {
    Block* next = b->next;
    release(b, b->bytes);
    b = next;
  }
  blocks_ = nullptr;
  cursor_ = limit_ = nullptr;
  for (void*& f : free_) f = nullptr;
}

void* Arena::allocate(size_t bytes) {
  bytes = align16(bytes);
  if (bytes > budget_ - charged_ || charged_ > budget_) return nullptr;
  if (static_cast<size_t>(limit_ - cursor_) < bytes) {
    const size_t header = align16(sizeof(Block));
    // The first block is small and packed beside other threads' (a short
    // thread's streams fit it); the next ones are pages touched as they fill.
    size_t block_bytes = blocks_ ? kBlockBytes : kFirstBlockBytes;
    if (block_bytes < header + bytes) block_bytes = header + bytes;
    auto* block = static_cast<Block*>(blocks_ || block_bytes > kFirstBlockBytes
                                          ? reserve_zeroed(block_bytes)
                                          : reserve_packed(block_bytes));
    if (block == nullptr) return nullptr;
    block->next = blocks_;
    block->bytes = block_bytes;
    blocks_ = block;
    cursor_ = reinterpret_cast<uint8_t*>(block) + header;
    limit_ = reinterpret_cast<uint8_t*>(block) + block_bytes;
  }
  void* p = cursor_;
  cursor_ += bytes;
  charged_ += bytes;
  return p;
}

void* Arena::take_free(unsigned size_class) {
  void* p = free_[size_class];
  if (p) free_[size_class] = *static_cast<void**>(p);
  return p;
}

void Arena::give_free(unsigned size_class, void* p) {
  *static_cast<void**>(p) = free_[size_class];
  free_[size_class] = p;
}

}  // namespace memory_trace_detail

MemoryTraceRecorder::MemoryTraceRecorder(const MemoryTraceConfig& config)
    : config_(config), threads_(config.max_threads) {
  config_.max_depth = clamp(config_.max_depth, 1, loop_trace_format::kMaxDepth);
  config_.max_body = clamp(config_.max_body, 1, 256);
  config_.stack_length = clamp(config_.stack_length, 1, 1u << 16);
  config_.flush_count = clamp(config_.flush_count, 1, config_.stack_length);
  // Room for stack_length + 1 elements of 8 nodes on average, at least 16
  // nodes; a full stack flushes its bottom elements.
  const size_t nodes = (size_t{config_.stack_length} + 1) * 8;
  max_size_class_ = 4;
  while ((size_t{1} << max_size_class_) < nodes) ++max_size_class_;
}

MemoryTraceRecorder::~MemoryTraceRecorder() = default;

MemoryTraceRecorder::ThreadState* MemoryTraceRecorder::attach(uint32_t tid) {
  return threads_.attach(tid, [&](ThreadState& t) {
    t.tid = tid;
    t.arena.set_budget(config_.max_bytes_per_thread);
    return true;
  });
}

void MemoryTraceRecorder::finish_thread(ThreadState& t) {
  const unsigned stride = config_.max_depth;
  bool moved_all = true;
  t.streams.for_each([&](Stream& s) {
    if (nested_pending(s)) settle(t, s);  // its accesses go on the stack that moves
    if (Stack* old = s.stack) {
      unsigned size_class = 0;
      while ((uint32_t{1} << size_class) < std::max(old->nodes, old->elements)) ++size_class;
      const size_t bytes = stack_bytes(size_class);
      void* memory = reserve_packed(bytes);
      if (!memory) {
        moved_all = false;
        return;
      }
      const uint32_t capacity = uint32_t{1} << size_class;
      auto* stack = static_cast<Stack*>(memory);
      auto* base = static_cast<uint8_t*>(memory) + align16(sizeof(Stack));
      stack->node = reinterpret_cast<Node*>(base);
      stack->coefficients = reinterpret_cast<int64_t*>(base + capacity * sizeof(Node));
      stack->start = reinterpret_cast<uint32_t*>(base + capacity * sizeof(Node) +
                                                 size_t{capacity} * stride * sizeof(int64_t));
      stack->capacity = capacity;
      stack->nodes = old->nodes;
      stack->elements = old->elements;
      stack->size_class = size_class;
      stack->pending = 0;  // settled above
      __builtin_memcpy(stack->node, old->node, size_t{old->nodes} * sizeof(Node));
      __builtin_memcpy(stack->coefficients, old->coefficients,
                       size_t{old->nodes} * stride * sizeof(int64_t));
      __builtin_memcpy(stack->start, old->start, size_t{old->elements} * sizeof(uint32_t));
      s.stack = stack;
      update_fast_path(s);  // its count pointed into the old stack
    }
    if (s.output_head) {
      uint64_t used = 0;
      for (const OutputChunk* c = s.output_head; c; c = c->next) used += c->used;
      auto* chunk = static_cast<OutputChunk*>(reserve_packed(sizeof(OutputChunk) + used));
      if (!chunk) {
        moved_all = false;
        return;
      }
      chunk->next = nullptr;
      chunk->used = 0;
      chunk->capacity = static_cast<uint32_t>(used);
      for (const OutputChunk* c = s.output_head; c; c = c->next) {
        __builtin_memcpy(chunk->data() + chunk->used, c->data(), c->used);
        chunk->used += c->used;
      }
      s.output_head = s.output_tail = chunk;
    }
    if (s.segments_head) {
      uint32_t used = 0;
      for (const SegmentRunChunk* c = s.segments_head; c; c = c->next) used += c->used;
      auto* chunk = static_cast<SegmentRunChunk*>(
          reserve_packed(sizeof(SegmentRunChunk) + size_t{used} * sizeof(TraceSegmentRun)));
      if (!chunk) {
        moved_all = false;
        return;
      }
      chunk->next = nullptr;
      chunk->used = 0;
      chunk->capacity = used;
      for (const SegmentRunChunk* c = s.segments_head; c; c = c->next) {
        __builtin_memcpy(chunk->runs() + chunk->used, c->runs(), c->used * sizeof(TraceSegmentRun));
        chunk->used += c->used;
      }
      s.segments_head = s.segments_tail = chunk;
    }
  });
  // Only when nothing points into the arena any more.
  if (moved_all) t.arena.release_blocks();
  t.streams.shrink_to_fit();
}

void MemoryTraceRecorder::finish() {
  if (finished_) return;
  for_each_thread([&](const ThreadState& state) {
    // Every state is the recorder's own, and no thread records now.
    auto& t = const_cast<ThreadState&>(state);
    t.streams.for_each([&](Stream& s) {
      if (nested_pending(s)) settle(t, s);
      s.stack_bytes = stack_encoded_bytes(s);
    });
  });
  finished_ = true;
}

uint64_t MemoryTraceRecorder::skipped_segments() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) { n += t.skipped_segments; });
  return n;
}

uint64_t MemoryTraceRecorder::dropped() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) {
    n += t.untracked;
    t.streams.for_each([&](const Stream& s) { n += s.lost; });
  });
  return n;
}

uint64_t MemoryTraceRecorder::stack_encoded_bytes(const Stream& s) const {
  if (!s.stack) return 0;
  loop_trace_format::ByteCounter counter;
  loop_trace_format::Writer<loop_trace_format::ByteCounter> writer(counter, s.output_previous_base);
  encode_elements(*s.stack, 0, s.stack->elements, config_.max_depth, writer);
  return counter.bytes;
}

uint64_t MemoryTraceRecorder::encoded_bytes(const Stream& s) const {
  const uint64_t elements = s.output_elements + (s.stack ? s.stack->elements : 0);
  return loop_trace_format::varint_bytes(elements) + s.output_bytes +
         (finished_ ? s.stack_bytes : stack_encoded_bytes(s));
}

size_t MemoryTraceRecorder::stack_bytes(unsigned size_class) const {
  const size_t capacity = size_t{1} << size_class;
  return align16(sizeof(Stack)) + capacity * sizeof(Node) +
         capacity * config_.max_depth * sizeof(int64_t) + (capacity + 1) * sizeof(uint32_t);
}

Stack* MemoryTraceRecorder::allocate_stack(ThreadState& t, unsigned size_class) const {
  void* memory = t.arena.take_free(size_class);
  if (!memory) memory = t.arena.allocate(stack_bytes(size_class));
  if (!memory) return nullptr;
  auto* stack = static_cast<Stack*>(memory);
  const size_t capacity = size_t{1} << size_class;
  auto* base = static_cast<uint8_t*>(memory) + align16(sizeof(Stack));
  stack->node = reinterpret_cast<Node*>(base);
  stack->coefficients = reinterpret_cast<int64_t*>(base + capacity * sizeof(Node));
  stack->start = reinterpret_cast<uint32_t*>(base + capacity * sizeof(Node) +
                                             capacity * config_.max_depth * sizeof(int64_t));
  stack->capacity = static_cast<uint32_t>(capacity);
  stack->nodes = 0;
  stack->elements = 0;
  stack->size_class = size_class;
  stack->pending = 0;
  return stack;
}

bool MemoryTraceRecorder::grow(ThreadState& t, Stream& s) const {
  Stack* old = s.stack;
  Stack* fresh = allocate_stack(t, old->size_class + 1);
  if (!fresh) return false;
  const unsigned stride = config_.max_depth;
  __builtin_memcpy(fresh->node, old->node, size_t{old->nodes} * sizeof(Node));
  for (uint32_t i = 0; i < old->nodes; ++i)
    if (old->node[i].kind == kValueNode && old->node[i].level)
      __builtin_memcpy(fresh->coefficients + size_t{i} * stride,
                       old->coefficients + size_t{i} * stride,
                       size_t{old->node[i].level} * sizeof(int64_t));
  __builtin_memcpy(fresh->start, old->start, size_t{old->elements} * sizeof(uint32_t));
  fresh->nodes = old->nodes;
  fresh->elements = old->elements;
  t.arena.give_free(old->size_class, old);
  s.stack = fresh;
  return true;
}

bool MemoryTraceRecorder::flush(ThreadState& t, Stream& s, uint32_t count) const {
  Stack& stack = *s.stack;
  if (count > stack.elements) count = stack.elements;
  if (count == 0) return true;
  const unsigned stride = config_.max_depth;

  // Measure, make room (all or nothing), then write.
  loop_trace_format::ByteCounter counter;
  {
    loop_trace_format::Writer<loop_trace_format::ByteCounter> writer(counter,
                                                                     s.output_previous_base);
    encode_elements(stack, 0, count, stride, writer);
  }
  const uint64_t need = counter.bytes;
  OutputChunk* tail = s.output_tail;
  const uint64_t room = tail ? tail->capacity - tail->used : 0;
  if (need > room) {
    uint64_t capacity = tail ? uint64_t{tail->capacity} * 2 : kFirstChunkBytes;
    if (capacity > kMaxChunkBytes) capacity = kMaxChunkBytes;
    if (capacity < need - room) capacity = need - room;
    auto* chunk = static_cast<OutputChunk*>(t.arena.allocate(sizeof(OutputChunk) + capacity));
    if (!chunk) return false;
    chunk->next = nullptr;
    chunk->used = 0;
    chunk->capacity = static_cast<uint32_t>(capacity);
    if (tail)
      tail->next = chunk;
    else
      s.output_head = chunk;
    s.output_tail = chunk;
    if (!tail) tail = chunk;
  }
  ChunkAppender appender{tail};
  loop_trace_format::Writer<ChunkAppender> writer(appender, s.output_previous_base);
  encode_elements(stack, 0, count, stride, writer);
  s.output_previous_base = writer.previous_base();
  s.output_bytes += need;
  s.output_elements += count;

  // Shift the remaining elements down.
  const uint32_t offset = count < stack.elements ? stack.start[count] : stack.nodes;
  const uint32_t nodes = stack.nodes - offset;
  move_nodes(stack, stride, 0, offset, nodes);
  for (uint32_t e = count; e < stack.elements; ++e)
    stack.start[e - count] = stack.start[e] - offset;
  stack.nodes = nodes;
  stack.elements -= count;
  return true;
}

void MemoryTraceRecorder::cross_segment(ThreadState& t, Stream& s) const {
  const uint32_t segment = t.segment;
  const uint64_t at = s.accesses;
  s.segment = segment;
  if (s.segments_lost) return;
  SegmentRunChunk* tail = s.segments_tail;
  if (tail && tail->used) {
    TraceSegmentRun& run = tail->runs()[tail->used - 1];
    if (run.count == 1) {
      run.segment_step = segment - run.first_segment;
      run.access_step = at - run.first_access;
      run.count = 2;
      return;
    }
    if (segment == run.first_segment + run.count * run.segment_step &&
        at == run.first_access + run.count * run.access_step) {
      ++run.count;
      return;
    }
  }
  if (!tail || tail->used == tail->capacity) {
    uint32_t capacity = tail ? tail->capacity * 2 : kFirstSegmentRuns;
    if (capacity > kMaxSegmentRuns) capacity = kMaxSegmentRuns;
    auto* chunk = static_cast<SegmentRunChunk*>(
        t.arena.allocate(sizeof(SegmentRunChunk) + capacity * sizeof(TraceSegmentRun)));
    if (!chunk) {
      s.segments_lost = true;
      return;
    }
    chunk->next = nullptr;
    chunk->used = 0;
    chunk->capacity = capacity;
    if (tail)
      tail->next = chunk;
    else
      s.segments_head = chunk;
    s.segments_tail = tail = chunk;
  }
  TraceSegmentRun& run = tail->runs()[tail->used++];
  run = TraceSegmentRun{};
  run.first_access = at;
  run.first_segment = segment;
  run.count = 1;
  ++s.segment_runs;
}

void MemoryTraceRecorder::settle(ThreadState& t, Stream& s) {
  // The row's addresses, taken before the replay changes the fast path's
  // prediction and stride.
  const uint64_t pending = s.stack->pending;
  const uint64_t step = s.stride;
  const uint64_t first = s.predicted - pending * step;
  s.fast_count = nullptr;
  s.stack->pending = 0;
  for (uint64_t j = 0; j < pending; ++j) record(t, s, first + j * step);
}

void MemoryTraceRecorder::push(ThreadState& t, Stream& s, uint64_t address) {
  if (nested_pending(s)) settle(t, s);
  ++t.general_steps;
  if (!s.stack) {
    s.stack = allocate_stack(t, kInitialSizeClass);
    if (!s.stack) {
      ++s.lost;
      t.exhausted = true;
      return;
    }
  }
  if (s.stack->nodes == s.stack->capacity) {
    const bool room =
        (s.stack->size_class < max_size_class_ && grow(t, s)) || flush(t, s, config_.flush_count);
    if (!room) {
      ++s.lost;
      t.exhausted = true;
      return;
    }
  }
  Stack& stack = *s.stack;
  const uint32_t i = stack.nodes++;
  stack.start[stack.elements++] = i;
  stack.node[i] = Node{address, 1, 0, kValueNode, 0};
  reduce(stack);
  // The address is in; failing to flush only stops the thread's recording.
  if (stack.elements > config_.stack_length && !flush(t, s, config_.flush_count))
    t.exhausted = true;
  // Past its share, the stream alone stops.
  if (s.output_bytes > config_.max_bytes_per_thread / kStreamShare)
    s.kinds |= memory_trace_detail::kStreamFull;
  update_fast_path(s);
}

void MemoryTraceRecorder::checkpoint(Stream& s) {
  if (nested_pending(s)) {
    // The outer loop's next iteration, read whole: what the general step
    // would have reached by extension (try_extend), without its pushes.
    Stack& stack = *s.stack;
    ++stack.node[stack.start[stack.elements - 1]].value;
    stack.pending = 0;
  }
  reduce(*s.stack);
  update_fast_path(s);
}

void MemoryTraceRecorder::reduce(Stack& stack) const {
  for (;;) {
    const uint32_t n = stack.elements;
    if (n < 2) return;
    // Cheap necessary conditions first, on the head nodes of the elements
    // that end the blocks: most attempts fail there. Top-level values have
    // no coefficients, so two of them always have the same shape.
    const Node& z = stack.node[stack.start[n - 1]];
    const uint32_t max_k = config_.max_body < n - 1 ? config_.max_body : n - 1;
    bool reduced = false;
    for (uint32_t k = 1; k <= max_k && !reduced; ++k) {
      const Node& y = stack.node[stack.start[n - 1 - k]];
      if (y.kind == kLoopNode && y.children == k && try_extend(stack, k)) {
        reduced = true;
        break;
      }
      if (3 * k > n || y.kind != z.kind || y.size != z.size) continue;
      const Node& x = stack.node[stack.start[n - 1 - 2 * k]];
      if (x.kind != z.kind || x.size != z.size) continue;
      if (z.kind == kValueNode ? y.value - x.value != z.value - y.value
                               : x.value != z.value || y.value != z.value)
        continue;
      reduced = try_fold(stack, k);
    }
    if (!reduced) return;
  }
}

bool MemoryTraceRecorder::try_extend(Stack& stack, uint32_t k) const {
  const uint32_t e = stack.elements - 1 - k;
  const uint32_t loop = stack.start[e];
  Node& outer = stack.node[loop];
  if (outer.kind != kLoopNode || outer.children != k) return false;
  const uint32_t top = stack.start[e + 1];
  const uint32_t m = stack.nodes - top;
  if (m != outer.size - 1) return false;
  const unsigned stride = config_.max_depth;
  const uint64_t count = outer.value;
  for (uint32_t j = 0; j < m; ++j) {
    const Node& b = stack.node[loop + 1 + j];
    const Node& x = stack.node[top + j];
    if (b.kind != x.kind || b.size != x.size) return false;
    if (b.kind == kLoopNode) {
      if (b.value != x.value || b.children != x.children) return false;
      continue;
    }
    if (b.level != x.level + 1) return false;
    const int64_t* bc = stack.coefficients + size_t{loop + 1 + j} * stride;
    const int64_t* xc = stack.coefficients + size_t{top + j} * stride;
    for (unsigned l = 0; l < x.level; ++l)
      if (bc[l] != xc[l]) return false;
    if (x.value != b.value + count * static_cast<uint64_t>(bc[x.level])) return false;
  }
  outer.value = count + 1;
  stack.nodes = top;
  stack.elements = e + 1;
  return true;
}

bool MemoryTraceRecorder::try_fold(Stack& stack, uint32_t k) const {
  const uint32_t e0 = stack.elements - 3 * k;
  const uint32_t a0 = stack.start[e0];
  const uint32_t a1 = stack.start[e0 + k];
  const uint32_t a2 = stack.start[e0 + 2 * k];
  const uint32_t m = a1 - a0;
  if (a2 - a1 != m || stack.nodes - a2 != m) return false;
  const unsigned stride = config_.max_depth;
  for (uint32_t j = 0; j < m; ++j) {
    const Node& x = stack.node[a0 + j];
    const Node& y = stack.node[a1 + j];
    const Node& z = stack.node[a2 + j];
    if (x.kind != y.kind || x.kind != z.kind || x.size != y.size || x.size != z.size) return false;
    if (x.kind == kLoopNode) {
      if (x.value != y.value || x.value != z.value || x.children != y.children ||
          x.children != z.children)
        return false;
      continue;
    }
    if (x.level != y.level || x.level != z.level) return false;
    if (y.value - x.value != z.value - y.value) return false;
    const int64_t* xc = stack.coefficients + size_t{a0 + j} * stride;
    const int64_t* yc = stack.coefficients + size_t{a1 + j} * stride;
    const int64_t* zc = stack.coefficients + size_t{a2 + j} * stride;
    for (unsigned l = 0; l < x.level; ++l)
      if (xc[l] != yc[l] || xc[l] != zc[l]) return false;
  }
  unsigned height = 0;
  for (uint32_t i = a0; i < a1; i += stack.node[i].size)
    if (stack.node[i].kind == kLoopNode && stack.node[i].level > height)
      height = stack.node[i].level;
  if (height + 1 > config_.max_depth) return false;

  // Each value of the first block gains the new outermost coefficient.
  for (uint32_t j = 0; j < m; ++j) {
    Node& x = stack.node[a0 + j];
    if (x.kind != kValueNode) continue;
    stack.coefficients[size_t{a0 + j} * stride + x.level] =
        static_cast<int64_t>(stack.node[a1 + j].value - x.value);
    ++x.level;
  }
  // The first block moves up one node, under the new loop.
  move_nodes(stack, stride, a0 + 1, a0, m);
  stack.node[a0] =
      Node{3, m + 1, static_cast<uint16_t>(k), kLoopNode, static_cast<uint8_t>(height + 1)};
  stack.nodes = a0 + m + 1;
  stack.elements = e0 + 1;
  return true;
}

void MemoryTraceRecorder::update_fast_path(Stream& s) const {
  s.fast_count = nullptr;
  const Stack& stack = *s.stack;
  const uint32_t n = stack.elements;
  if (n == 0) return;
  const uint32_t top = stack.start[n - 1];
  Node& loop = stack.node[top];
  const unsigned stride = config_.max_depth;
  if (loop.kind == kLoopNode && loop.size == 3 && loop.children == 1) {
    // A nest's outer loop over one inner loop over one value (a row loop
    // whose row is done): the next row's addresses are predicted. Without
    // this, each row took three general steps before its loop formed again.
    const Node& inner = stack.node[top + 1];
    const Node& value = stack.node[top + 2];
    // (The outer loop's three nodes and one child: the inner one, a loop
    // over the value.)
    if (inner.kind != kLoopNode || value.kind != kValueNode || value.level != 2) return;
    const int64_t* coefficients = stack.coefficients + size_t{top + 2} * stride;
    s.stride = static_cast<uint64_t>(coefficients[0]);
    s.predicted = value.value + loop.value * static_cast<uint64_t>(coefficients[1]);
    s.next_check = inner.value;
    s.stack->pending = 0;
    s.fast_count = &s.stack->pending;
    return;
  }
  if (loop.kind != kLoopNode || loop.size != 2) return;
  const int64_t coefficient = stack.coefficients[size_t{top + 1} * stride];
  const uint64_t count = loop.value;
  // A reduction involving the top element needs, k elements below it, an
  // element of the same shape (folding) or a loop of k elements whose last
  // one has that shape (extension): a loop over one value with the same
  // coefficient and the same count. Those with a larger count are where the
  // fast path must stop and try.
  uint64_t next = ~uint64_t{0};
  auto candidate = [&](uint32_t i) {
    const Node& c = stack.node[i];
    if (c.kind == kLoopNode && c.size == 2 && c.value > count && c.value < next &&
        stack.coefficients[size_t{i + 1} * stride] == coefficient)
      next = c.value;
  };
  for (uint32_t k = 1; k <= config_.max_body && k < n; ++k) {
    const uint32_t e = stack.start[n - 1 - k];
    if (stack.node[e].kind != kLoopNode) continue;
    if (3 * k <= n) candidate(e);
    if (stack.node[e].children == k) {
      uint32_t last = e + 1;
      for (uint32_t c = 1; c < k; ++c) last += stack.node[last].size;
      candidate(last);
    }
  }
  s.stride = static_cast<uint64_t>(coefficient);
  s.predicted = stack.node[top + 1].value + count * s.stride;
  s.next_check = next;
  s.fast_count = &loop.value;
}

}  // namespace weft
