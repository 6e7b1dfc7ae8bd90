#include "analyzers/communication/communication_analyzer.h"

#include <bit>

#include "analyzers/state/per_thread_slot.h"

namespace weft {

namespace {

unsigned log2_of(unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); }

inline void cpu_relax() { __builtin_ia32_pause(); }

}  // namespace

ReaderSetPool::ReaderSetPool(unsigned max_threads, size_t capacity_bytes)
    : words_per_set_((max_threads + 63) / 64),
      capacity_sets_(capacity_bytes / (words_per_set_ * sizeof(uint64_t))),
      bytes_(capacity_sets_ * words_per_set_ * sizeof(uint64_t)),
      words_(static_cast<uint64_t*>(reserve_zeroed(bytes_))) {
  if (!words_) capacity_sets_ = 0;
}

ReaderSetPool::~ReaderSetPool() { release(words_, bytes_); }

uint64_t ReaderSetPool::allocate() {
  const uint64_t index = next_.fetch_add(1, std::memory_order_relaxed);
  return index < capacity_sets_ ? index : kNone;
}

CommunicationAnalyzer::ReuseMemo CommunicationAnalyzer::empty_memo_;

CommunicationAnalyzer::CommunicationAnalyzer(const CommunicationConfig& config)
    : config_(config),
      granularity_log2_(log2_of(config.granularity)),
      shadow_(granularity_log2_),
      // Only granules read by threads with id >= 46 use a set: reserve
      // generously, pages are committed on use.
      reader_sets_(config.max_threads, size_t{16} << 30),
      threads_(config.max_threads) {}

CommunicationAnalyzer::~CommunicationAnalyzer() = default;

CommunicationAnalyzer::ThreadState* CommunicationAnalyzer::attach(uint32_t tid) {
  if (tid >= kMaxThreadsLimit) return nullptr;
  return threads_.attach(tid, [&](ThreadState& fresh) {
    fresh.tid = tid;
    fresh.writer_tag = uint64_t{tid} + 1;
    fresh.granularity_log2 = granularity_log2_;
    fresh.unwritten_word = footprint_ ? kRetiredTag : 0;
    fresh.reader_bit = tid < kInlineReaders ? uint64_t{1} << (kReaderShift + tid) : 0;
    fresh.footprint_tag = SharingFootprint::owner_tag(tid);
    if (distances_) fresh.distances = fresh.crd_reader = distances_->attach(tid);
    if (sections_) fresh.sections = sections_->attach(tid);
    return true;
  });
}

uint64_t CommunicationAnalyzer::dropped() const {
  uint64_t n = 0;
  threads_.for_each([&](const ThreadState& t) { n += t.dropped; });
  return n;
}

bool CommunicationAnalyzer::any_thread_busy() const {
  bool busy = false;
  threads_.for_each([&](const ThreadState& t) { busy = busy || t.busy; });
  return busy;
}

CommunicationAnalyzer::ReuseMemo CommunicationAnalyzer::reuse_to_remember(
    ThreadState& t, uint64_t pc, uint32_t peer, uintptr_t addr, PcPeerCounts& c,
    uint64_t distance) {
  ReuseMemo m = empty_memo_;
  m.pc = pc;
  m.counters[0] = &c.rar;
  bool alternates = false;
  if (t.distances) {
    m.granule = addr >> granularity_log2_;
    m.granule_mask = ~uint64_t{0};
    // A granule outside the sample changes only the pair's recent granules:
    // its repeat is distance 0, a re-read after one other granule distance
    // 1, and it has no word trace. A sampled granule's repeat is distance 0
    // only after a measured distance (a capped pair counts its events
    // unmeasured), and a read of its sampled word is the word trace's too.
    alternates = outside_crd_sample(t, m.granule);
    if (alternates) {
      m.sampled_word = 1;  // never equal to a masked offset of 0
    } else {
      if (distance != 0) return empty_memo_;
      const SampledWord& word = distances_->sampled_word();
      m.word_mask = (uint64_t{1} << word.word_bits) - 1;
      m.sampled_word = word.word_bits ? word.offset(m.granule) : 1;
    }
    m.counters[2] = distances_->count_of(*t.distances, pc, peer, 0);
    if (!m.counters[2]) return empty_memo_;
    if (alternates) {
      m.second_counters[0] = distances_->count_of(*t.distances, pc, peer, 1);
      m.recent = distances_->recent_granules(*t.distances, peer);
      if (!m.second_counters[0] || !m.recent) return empty_memo_;
    }
  }
  if (t.sections) {
    m.counters[1] = sections_->open_reuse_count(*t.sections, peer);
    if (!m.counters[1]) return empty_memo_;
    if (t.distances) {
      m.counters[3] = sections_->open_distance_count(*t.sections, peer, 0);
      if (!m.counters[3]) return empty_memo_;
    }
    if (alternates) {
      m.second_counters[1] = sections_->open_distance_count(*t.sections, peer, 1);
      if (!m.second_counters[1]) return empty_memo_;
    }
  }
  m.writer_tag = uint64_t{peer} + 1;
  return m;
}

void CommunicationAnalyzer::remember_crd_reuses(ThreadState& t, const uint64_t* old_tags,
                                                uint64_t old_generation, uint64_t pc, uint32_t peer,
                                                uintptr_t addr, PcPeerCounts* c, uint64_t distance,
                                                bool build_entries, ReuseMemo& latest,
                                                ReuseMemo& second) {
  // The thread's latest CRD event: the memo's front entry's when it holds
  // one (its hits changed nothing else), else the latest slow one.
  const unsigned front = t.crd_front;
  LatestCrdEvent before = t.latest_crd_event;
  if (old_tags[front])
    before = {old_tags[front], t.reuse_memo[front].pc, t.reuse_memo[front].granule};
  const uint64_t tag = uint64_t{peer} + 1;
  const uint64_t granule = addr >> granularity_log2_;
  t.latest_crd_event = {tag, pc, granule};
  if (!build_entries) return;
  // The previous granule is second in the pair's recent granules when the
  // pair's previous event was the thread's latest (and it left the sample
  // alone, else only the slow path may count its re-read).
  bool with_second = false;
  if (before.writer_tag == tag && before.granule != granule &&
      outside_crd_sample(t, before.granule)) {
    const uint64_t* recent = distances_->recent_granules(*t.distances, peer);
    with_second = recent && recent[0] == granule + 1 && recent[1] == before.granule + 1;
  }
  if (!c && !with_second) return;
  // The memo's entries from before the event still point at their counts
  // when no table moved since (the counts are per instruction and pair, not
  // per granule): the front one becomes the second, an entry of the same
  // instruction gives the latest its counts. Otherwise each is found in the
  // tables, where an insert may move the entries found before it: if one
  // moved, once more, finding every entry again.
  const bool reuse_old = table_generation(t) == old_generation;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const uint64_t generation = table_generation(t);
    if (attempt == 0 && reuse_old) {
      if (with_second && old_tags[front] == tag && t.reuse_memo[front].recent)
        second = t.reuse_memo[front];
      // Another pair's latest granule stays, as a repeat at distance 0
      // only: this event changes its own pair's trace, not that one's (a
      // loop that reads data of two writers in turn, a halo beside the
      // thread's block). It never alternates: that is its own pair's.
      if (!with_second && old_tags[front] != 0 && old_tags[front] != tag) {
        second = t.reuse_memo[front];
        second.recent = nullptr;
        second.second_counters[0] = second.second_counters[1] = nullptr;
      }
      if (c && outside_crd_sample(t, granule)) {
        for (unsigned i = 0; i < kCrdReuseMemos; ++i) {
          if (old_tags[i] != tag || t.reuse_memo[i].pc != pc || !t.reuse_memo[i].recent) continue;
          latest = t.reuse_memo[i];
          latest.granule = granule;
          break;
        }
      }
    }
    if (c && !latest.writer_tag) {
      if (attempt) c = t.counts.find_or_insert(PcPeerCounts::make_key(pc, peer));
      if (c) latest = reuse_to_remember(t, pc, peer, addr, *c, distance);
    }
    if (with_second && !second.writer_tag) {
      PcPeerCounts* before_counts =
          t.counts.find_or_insert(PcPeerCounts::make_key(before.pc, peer));
      if (before_counts)
        second = reuse_to_remember(t, before.pc, peer, before.granule << granularity_log2_,
                                   *before_counts, 0);
    }
    if (table_generation(t) == generation) return;
    latest = empty_memo_;
    second = empty_memo_;
  }
}

void CommunicationAnalyzer::count_inline_invalidations(ThreadState& t, uint64_t pc,
                                                       uint64_t old_word) {
  uint64_t readers = (old_word & kReaderMask) >> kReaderShift;
  readers &= ~(t.reader_bit >> kReaderShift);
  const uint64_t old_writer_tag = old_word & kWriterMask;
  if (old_writer_tag != 0 && old_writer_tag != t.writer_tag) {
    const uint64_t old_writer = old_writer_tag - 1;
    // The previous writer holds a copy too, unless it is already a reader.
    if (old_writer >= kInlineReaders || !(readers & (uint64_t{1} << old_writer)))
      add(t, pc, static_cast<uint32_t>(old_writer), Count::Inval, 0);
  }
  while (readers) {
    const unsigned r = static_cast<unsigned>(std::countr_zero(readers));
    readers &= readers - 1;
    add(t, pc, r, Count::Inval, 0);
  }
}

uint64_t CommunicationAnalyzer::lock(std::atomic<uint64_t>& word) {
  uint64_t cur = word.load(std::memory_order_relaxed);
  for (;;) {
    if (cur & kLocked) {
      cpu_relax();
      cur = word.load(std::memory_order_relaxed);
      continue;
    }
    if (word.compare_exchange_weak(cur, cur | kLocked, std::memory_order_acquire)) return cur;
  }
}

void CommunicationAnalyzer::read_granule_extended(ThreadState& t, uint64_t pc, uintptr_t addr,
                                                  std::atomic<uint64_t>& word) {
  // Lock-free re-read: a set bit of ours stays valid while the word is
  // unchanged, because every change of a set goes through the lock and a
  // writer's reset clears kHasReaders.
  uint64_t seen = word.load(std::memory_order_acquire);
  if ((seen & kExtended) && !(seen & kLocked)) {
    const uint64_t writer_tag = seen & kWriterMask;
    if (writer_tag == t.writer_tag || writer_tag == 0) return;
    if (in_reader_set(seen, t.tid)) {
      if (word.load(std::memory_order_acquire) == seen) {
        add(t, pc, static_cast<uint32_t>(writer_tag - 1), Count::Rar, addr);
        return;
      }
    }
  }

  uint64_t cur = lock(word);
  const uint64_t writer_tag = cur & kWriterMask;
  if (writer_tag == t.writer_tag || writer_tag == 0) {
    word.store(cur, std::memory_order_release);
    return;
  }
  if (!(cur & kExtended)) {
    const uint64_t index = reader_sets_.allocate();
    if (index == ReaderSetPool::kNone) {
      word.store(cur, std::memory_order_release);
      ++t.dropped;
      return;
    }
    uint64_t* set = reader_sets_.set(index);
    const uint64_t inline_readers = (cur & kReaderMask) >> kReaderShift;
    __atomic_store_n(&set[0], inline_readers, __ATOMIC_RELAXED);
    cur = writer_tag | kExtended | (index << kReaderShift) | (inline_readers ? kHasReaders : 0);
  }
  uint64_t* set = reader_sets_.set((cur & kIndexMask) >> kReaderShift);
  uint64_t& bits = set[t.tid / 64];
  const uint64_t mine = uint64_t{1} << (t.tid % 64);
  const bool first = !(bits & mine);
  if (first) __atomic_store_n(&bits, bits | mine, __ATOMIC_RELAXED);
  word.store(cur | kHasReaders, std::memory_order_release);  // unlocks
  add(t, pc, static_cast<uint32_t>(writer_tag - 1), first ? Count::Raw : Count::Rar, addr);
}

void CommunicationAnalyzer::write_granule_extended(ThreadState& t, uint64_t pc,
                                                   std::atomic<uint64_t>& word) {
  uint64_t cur = lock(word);
  if (!(cur & kExtended)) {
    // Locked while inline only transiently by a converting reader; it is
    // extended or released by now, so this is a plain inline word again.
    word.store(t.writer_tag, std::memory_order_release);
    if (config_.count_invalidations) count_inline_invalidations(t, pc, cur);
    return;
  }
  const uint64_t old_writer_tag = cur & kWriterMask;
  uint64_t* set = reader_sets_.set((cur & kIndexMask) >> kReaderShift);
  const unsigned words = reader_sets_.words_per_set();
  // Collect the invalidated readers before unlocking, count after.
  bool old_writer_is_reader = false;
  if (cur & kHasReaders) {
    for (unsigned w = 0; w < words; ++w) {
      uint64_t bits = set[w];
      if (!bits) continue;
      __atomic_store_n(&set[w], 0, __ATOMIC_RELAXED);
      if (!config_.count_invalidations) continue;
      while (bits) {
        const unsigned r = w * 64 + static_cast<unsigned>(std::countr_zero(bits));
        bits &= bits - 1;
        if (r + 1 == old_writer_tag) old_writer_is_reader = true;
        if (r == t.tid) continue;
        add(t, pc, r, Count::Inval, 0);
      }
    }
  }
  word.store(kExtended | (cur & kIndexMask) | t.writer_tag, std::memory_order_release);
  if (config_.count_invalidations && old_writer_tag != 0 && old_writer_tag != t.writer_tag &&
      !old_writer_is_reader)
    add(t, pc, static_cast<uint32_t>(old_writer_tag - 1), Count::Inval, 0);
}

// A plain store per inline word: the block is being freed, so no other
// thread may access it (one that does races with the free in the program).
void CommunicationAnalyzer::forget(uintptr_t begin, uintptr_t end) {
  shadow_.for_each_cell_inside(begin, end, [&](std::atomic<uint64_t>* words, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const uint64_t cur = words[i].load(std::memory_order_relaxed);
      if (cur == 0 || (cur & ~kIndexMask) == kExtended) continue;  // clean already
      if (cur & (kExtended | kLocked))
        forget_extended(words[i]);
      else
        words[i].store(0, std::memory_order_relaxed);
    }
  });
}

// An extended word keeps its reader set, emptied, for the granule's next life.
void CommunicationAnalyzer::forget_extended(std::atomic<uint64_t>& word) {
  const uint64_t cur = lock(word);
  if (!(cur & kExtended)) {  // a converting reader's transient lock: inline again
    word.store(0, std::memory_order_release);
    return;
  }
  if (cur & kHasReaders) {
    uint64_t* set = reader_sets_.set((cur & kIndexMask) >> kReaderShift);
    for (unsigned w = 0; w < reader_sets_.words_per_set(); ++w)
      __atomic_store_n(&set[w], 0, __ATOMIC_RELAXED);
  }
  word.store(kExtended | (cur & kIndexMask), std::memory_order_release);
}

}  // namespace weft
