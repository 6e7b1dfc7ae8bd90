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

void FalseSharingDetector::synchronize(ThreadState& t, SyncKind kind, uint64_t object,
                                       int64_t arg0) {
  if (t.valid_bit == 0) return;
  const auto slot = [](uint64_t fn) {
    return static_cast<unsigned>((fn * 0x9e3779b97f4a7c15ULL) >> 58) % kMasterSlots;
  };
  switch (kind) {
    case SyncKind::MutexLock:
      ++t.locks_held;
      acquire_all(t);
      break;
    case SyncKind::MutexUnlock:
      // A lock released without its acquisition seen (taken outside the
      // program's code) leaves the count at 0.
      if (t.locks_held > 0) --t.locks_held;
      release(t);
      break;
    case SyncKind::ThreadCreate:
      release(t);
      if (arg0 >= 0 && arg0 < static_cast<int64_t>(kTrackedThreads))
        start_epochs_[arg0].store(t.epoch, std::memory_order_release);
      break;
    case SyncKind::ThreadStart:
      if (arg0 >= 0 && arg0 < static_cast<int64_t>(kTrackedThreads))
        acquire_from(t, static_cast<uint32_t>(arg0),
                     start_epochs_[t.tid].load(std::memory_order_acquire));
      break;
    case SyncKind::ThreadJoin:
      if (arg0 >= 0 && arg0 < static_cast<int64_t>(kTrackedThreads)) {
        const auto joined = static_cast<uint32_t>(arg0);
        acquire_from(t, joined, epochs_[joined].load(std::memory_order_acquire));
      } else {
        acquire_all(t);
      }
      break;
    case SyncKind::OmpParallelBegin:
      release(t);
      masters_[slot(object)].store(uint64_t{t.epoch} << 32 | (t.tid + 1),
                                   std::memory_order_release);
      break;
    case SyncKind::OmpImplicitTaskBegin: {
      const uint64_t master = masters_[slot(object)].load(std::memory_order_acquire);
      const auto master_tid = static_cast<uint32_t>(master & 0xffffffff);
      if (master_tid == 0)
        acquire_all(t);
      else if (master_tid - 1 != t.tid)
        acquire_from(t, master_tid - 1, static_cast<uint32_t>(master >> 32));
      break;
    }
    case SyncKind::BarrierLeave:
    case SyncKind::OmpBarrierLeave:
    case SyncKind::OmpParallelEnd:
    case SyncKind::CondWaitLeave:
    case SyncKind::CondBarrier:
    case SyncKind::CondBarrierLeave:
    case SyncKind::SpinBarrier:
      acquire_all(t);
      break;
    case SyncKind::OmpLoopChunk:
    case SyncKind::OmpLoopEnd:
    case SyncKind::ThreadJoinEnter:
      break;
    default:  // creates, exits, barrier arrivals, condition waits and signals, spin releases
      release(t);
      break;
  }
}

void FalseSharingDetector::release(ThreadState& t) {
  ++t.epoch;
  t.owner_word = t.writer_tag | uint64_t{t.epoch & kEpochMask} << kEpochShift | t.valid_bit;
  epochs_[t.tid].store(t.epoch, std::memory_order_release);
}

void FalseSharingDetector::acquire_all(ThreadState& t) {
  for (unsigned i = 0; i < kTrackedThreads; ++i) {
    const uint32_t epoch = epochs_[i].load(std::memory_order_acquire);
    if (epoch > t.seen[i]) __atomic_store_n(&t.seen[i], epoch, __ATOMIC_RELAXED);
  }
}

void FalseSharingDetector::acquire_from(ThreadState& t, uint32_t from, uint32_t epoch) {
  // Nothing new when that release was acquired already (a spin loop's
  // atomic reads cost one compare after the first).
  if (from >= kTrackedThreads || from == t.tid || epoch <= t.seen[from]) return;
  __atomic_store_n(&t.seen[from], epoch, __ATOMIC_RELAXED);
  // What that thread had acquired, too.
  const ThreadState* other = threads_.find(from);
  if (!other) return;
  for (unsigned i = 0; i < kTrackedThreads; ++i) {
    if (i == t.tid) continue;
    const uint32_t seen = __atomic_load_n(&other->seen[i], __ATOMIC_RELAXED);
    if (seen > t.seen[i]) __atomic_store_n(&t.seen[i], seen, __ATOMIC_RELAXED);
  }
}

bool FalseSharingDetector::unsynchronised(const ThreadState& t, uint64_t state) const {
  if (t.locks_held != 0 || (state & kStaleBit)) return false;
  const auto writer = static_cast<uint32_t>((state & kWriterMask) - 1);
  // The writer's full epoch at its write: the latest one at or before its
  // current epoch with those low bits.
  const uint32_t now = epochs_[writer].load(std::memory_order_acquire);
  const auto low = static_cast<uint32_t>(state >> kEpochShift & kEpochMask);
  const uint32_t at_write = now - ((now - low) & kEpochMask);
  return t.seen[writer] <= at_write;
}

void FalseSharingDetector::atomic_access(ThreadState& t, uint64_t pc, uint64_t address,
                                         uint32_t size, bool is_write) {
  access_slow(t, pc, address, size, is_write, true);
  if (is_write && t.valid_bit != 0) release(t);
}

void FalseSharingDetector::access_slow(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size,
                                       bool is_write, bool is_atomic) {
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
    access_line(t, pc, line, byte_mask(first, last - first + 1), is_write, is_atomic);
  }
}

void FalseSharingDetector::access_line(ThreadState& t, uint64_t pc, uint64_t line_address,
                                       uint64_t mask, bool is_write, bool is_atomic) {
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
    // An atomic access synchronizes with the line's writer.
    if (is_atomic && writer_tag != 0 && writer_tag != t.writer_tag) {
      const auto writer = static_cast<uint32_t>(writer_tag - 1);
      acquire_from(t, writer, epochs_[writer].load(std::memory_order_acquire));
    }
    const bool holds = (cur.state & t.valid_bit) != 0;  // the writer always holds
    LineWords next;
    bool transfer = false;
    bool unsync = false;
    if (!is_write) {
      if (holds) return;
      next.state = cur.state | t.valid_bit;
      next.written = cur.written;
      transfer = writer_tag != 0;
    } else if (writer_tag == t.writer_tag) {
      if ((cur.state & ~kStaleBit) == t.owner_word && (cur.written & mask) == mask) return;
      // A write in a later epoch than the line's keeps earlier bytes: stale.
      const bool later = ((cur.state ^ t.owner_word) & kEpochMask << kEpochShift) != 0;
      const bool stale = (cur.state & kStaleBit) || (later && (cur.written & ~mask) != 0);
      next.state = t.owner_word | (stale ? kStaleBit : 0);  // the other copies are invalidated
      next.written = cur.written | mask;
    } else {
      next.state = t.owner_word;
      next.written = mask;
      transfer = writer_tag != 0 && !holds;
      unsync = writer_tag != 0 && !is_atomic && (mask & cur.written) != 0 &&
               unsynchronised(t, cur.state);
    }
    if (compare_exchange_line(*line, cur, next)) {
      const auto writer = static_cast<uint32_t>(writer_tag - 1);
      if (transfer) count_transfer(t, pc, line_address, writer, mask, cur.written, is_write);
      if (unsync) count_unsync(t, pc, line_address, writer, mask & cur.written);
      // A write with the copy a false-sharing event obtained (still held:
      // not a line forgotten since, whose writer is none): those bytes are
      // the thread's too.
      if (is_write && !transfer && writer_tag != t.writer_tag && writer_tag != 0 &&
          t.last_false.line_address == line_address)
        note_written(t, mask);
      return;
    }
  }
}

void FalseSharingDetector::note_written(ThreadState& t, uint64_t mask) {
  if (t.busy) return;
  t.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (LineEntry* e = t.lines.find(t.last_false)) e->thread_written |= mask;
  t.last_false = FalseSharingLineKey{};
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.busy = 0;
}

void FalseSharingDetector::count_unsync(ThreadState& t, uint64_t pc, uint64_t line_address,
                                        uint32_t writer, uint64_t bytes) {
  if (t.weight == 0) return;  // a segment that only warms the lines' states up
  if (t.busy) {
    ++t.dropped;
    return;
  }
  t.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  FalseSharingLineKey key;
  key.line_address = line_address;
  key.pc = pc;
  key.writer_tag = uint64_t{writer} + 1;
  if (UnsyncEntry* e = t.unsync.find_or_insert(key)) {
    e->events += t.weight;
    e->bytes |= bytes;
  } else {
    ++t.dropped;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.busy = 0;
}

void FalseSharingDetector::count_transfer(ThreadState& t, uint64_t pc, uint64_t line_address,
                                          uint32_t writer, uint64_t mask, uint64_t written,
                                          bool is_write) {
  if (t.weight == 0) return;  // a segment that only warms the lines' states up
  if (t.busy) {
    ++t.dropped;
    return;
  }
  t.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  PairCounts& pair = t.pairs[writer];
  if (mask & written) {
    pair.true_events += t.weight;
  } else {
    pair.false_events += t.weight;
    FalseSharingLineKey key;
    key.line_address = line_address;
    key.pc = pc;
    key.writer_tag = uint64_t{writer} + 1;
    if (LineEntry* e = t.lines.find_or_insert(key)) {
      e->false_events += t.weight;
      e->thread_bytes |= mask;
      e->writer_bytes |= written;
      if (is_write) {
        e->thread_written |= mask;
        t.last_false = FalseSharingLineKey{};
      } else {
        t.last_false = key;
      }
    } else {
      ++t.dropped;
    }
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.busy = 0;
}

}  // namespace weft
