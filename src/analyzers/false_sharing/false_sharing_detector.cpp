#include "analyzers/false_sharing/false_sharing_detector.h"

#include <bit>

#include "analyzers/state/page_memory.h"
#include "analyzers/state/per_thread_slot.h"

namespace weft {

namespace {

FalseSharingConfig sanitized(FalseSharingConfig config) {
  unsigned size = config.line_size;
  if (size < FalseSharingDetector::kMinLineSize) size = FalseSharingDetector::kMinLineSize;
  if (size > FalseSharingDetector::kMaxLineSize) size = FalseSharingDetector::kMaxLineSize;
  config.line_size = std::bit_ceil(size);
  return config;
}

unsigned log2_of(unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); }

// Both words of `line` at once: true and `line` = desired if it held
// `expected`; false and `expected` = its current value (read atomically)
// otherwise. A full barrier either way.
inline bool compare_exchange_line(FalseSharingDetector::LineWords& line,
                                  FalseSharingDetector::LineWords& expected,
                                  const FalseSharingDetector::LineWords& desired) {
  bool done;
  asm volatile("lock cmpxchg16b %1"
               : "=@ccz"(done), "+m"(line), "+a"(expected.state), "+d"(expected.written)
               : "b"(desired.state), "c"(desired.written)
               : "memory");
  return done;
}

}  // namespace

FalseSharingDetector::FalseSharingDetector(const FalseSharingConfig& config)
    : config_(sanitized(config)),
      line_log2_(log2_of(config_.line_size)),
      mask_shift_(line_log2_ > 6 ? line_log2_ - 6 : 0),
      line_offset_mask_(config_.line_size - 1),
      shadow_(line_log2_),
      threads_(config_.max_threads) {}

FalseSharingDetector::~FalseSharingDetector() = default;

FalseSharingDetector::ThreadState* FalseSharingDetector::attach(uint32_t tid) {
  return threads_.attach(tid, [&](ThreadState& fresh) {
    fresh.tid = tid;
    fresh.writer_tag = uint64_t{tid} + 1;
    if (tid < kTrackedThreads) {
      fresh.valid_bit = uint64_t{1} << (kValidShift + tid);
      fresh.owner_word = fresh.writer_tag | fresh.valid_bit;
    } else {
      // Never a line's state (writer tags stop at kTrackedThreads): the
      // fast path always misses and the slow path counts the access.
      fresh.valid_bit = 0;
      fresh.owner_word = ~uint64_t{0};
    }
    return true;
  });
}

uint64_t FalseSharingDetector::dropped() const {
  uint64_t n = 0;
  threads_.for_each([&](const ThreadState& t) { n += t.dropped; });
  return n;
}

uint64_t FalseSharingDetector::untracked_accesses() const {
  uint64_t n = 0;
  threads_.for_each([&](const ThreadState& t) { n += t.untracked; });
  return n;
}

void FalseSharingDetector::access_slow(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size,
                                       bool is_write) {
  if (t.valid_bit == 0) {
    ++t.untracked;
    return;
  }
  if (!ShadowTable<LineWords>::covers(address)) return;  // not program memory
  const uint64_t end = address + (size ? size : 1);      // no overflow: address < 2^47
  const uint64_t line_size = config_.line_size;
  for (uint64_t line = address & ~line_offset_mask_; line < end; line += line_size) {
    const uint64_t first = address > line ? address - line : 0;
    const uint64_t last = (end < line + line_size ? end - line : line_size) - 1;
    access_line(t, pc, line, byte_mask(first, last - first + 1), is_write);
  }
}

void FalseSharingDetector::access_line(ThreadState& t, uint64_t pc, uint64_t line_address,
                                       uint64_t mask, bool is_write) {
  if (!ShadowTable<LineWords>::covers(line_address)) return;
  LineWords* line = shadow_.word(line_address, t.chunks);
  if (!line) {
    ++t.dropped;
    return;
  }
  // A torn first read is harmless: the CAS below compares both words.
  LineWords cur;
  cur.state = __atomic_load_n(&line->state, __ATOMIC_RELAXED);
  cur.written = __atomic_load_n(&line->written, __ATOMIC_RELAXED);
  for (;;) {
    const uint64_t writer_tag = cur.state & kWriterMask;
    const bool holds = (cur.state & t.valid_bit) != 0;  // the writer always holds
    LineWords next;
    bool transfer = false;
    if (!is_write) {
      if (holds) return;
      next.state = cur.state | t.valid_bit;
      next.written = cur.written;
      transfer = writer_tag != 0;
    } else if (writer_tag == t.writer_tag) {
      if (cur.state == t.owner_word && (cur.written & mask) == mask) return;
      next.state = t.owner_word;  // the other copies are invalidated
      next.written = cur.written | mask;
    } else {
      next.state = t.owner_word;
      next.written = mask;
      transfer = writer_tag != 0 && !holds;
    }
    if (compare_exchange_line(*line, cur, next)) {
      if (transfer)
        count_transfer(t, pc, line_address, static_cast<uint32_t>(writer_tag - 1), mask,
                       cur.written);
      return;
    }
  }
}

void FalseSharingDetector::count_transfer(ThreadState& t, uint64_t pc, uint64_t line_address,
                                          uint32_t writer, uint64_t mask, uint64_t written) {
  if (t.busy) {
    ++t.dropped;
    return;
  }
  t.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  PairCounts& pair = t.pairs[writer];
  if (mask & written) {
    ++pair.true_events;
  } else {
    ++pair.false_events;
    FalseSharingLineKey key;
    key.line_address = line_address;
    key.pc = pc;
    key.writer_tag = uint64_t{writer} + 1;
    if (LineEntry* e = t.lines.find_or_insert(key)) {
      ++e->false_events;
      e->thread_bytes |= mask;
      e->writer_bytes |= written;
    } else {
      ++t.dropped;
    }
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.busy = 0;
}

}  // namespace weft
