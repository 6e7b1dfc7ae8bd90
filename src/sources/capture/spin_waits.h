// What the recognition of spin waits (docs/metrics.md, "Spin waits") keeps:
// per thread, the read it watches (SpinWatch); per run, the flags it learned
// (SpinFlagTable). CaptureSession drives both from every access of a thread
// whose imbalance analysis runs (watch_access) and decides there, in both
// event sources alike, where a thread waits by spinning and which spin waits
// are a team's barrier.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft {

// The lock of the cold paths of barrier recognition (condvar episodes,
// learned flags: a few events per episode). The Valgrind backend takes it
// from one thread only.
struct ColdLock {
  explicit ColdLock(std::atomic_flag& flag) : flag(flag) {
    while (flag.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~ColdLock() { flag.clear(std::memory_order_release); }
  ColdLock(const ColdLock&) = delete;
  ColdLock& operator=(const ColdLock&) = delete;
  std::atomic_flag& flag;
};

// One thread's watched read: one address read again and again (by one
// instruction, or by the copies of an unrolled loop), with no write of the
// thread in between and at most kMaxBetween other reads between two of
// those reads (a spin loop's body at -O1 and -O2).
struct SpinWatch {
  // Reads of the watched address before the thread counts as spinning
  // (waiting: its events are held back). A condition-variable wait loop
  // re-tests its predicate twice or three times; a spin loop thousands of
  // times under instrumentation.
  static constexpr uint32_t kSpinReads = 4;
  static constexpr uint32_t kMaxBetween = 2;

  uint64_t pc = 0;  // the latest instruction that read addr
  uint64_t addr = 0;
  uint32_t reads = 0;    // reads of addr since the watch began; 0: no watch
  uint32_t between = 0;  // other reads since the last one
  // The imbalance analysis runs and the thread is not waiting at another
  // synchronization point (a barrier, a recognised condvar barrier).
  bool enabled = false;
  bool spinning = false;     // waiting since arrival_ns; its events are held
  bool known_flag = false;   // addr is a learned flag
  bool saw_release = false;  // a read of addr saw a write of another thread
  // The last writer (tag) of addr's granule when the watch's latest repeated
  // read looked (CaptureSession::saw_new_write); 0: none yet.
  uint64_t seen_writer_tag = 0;
  uint64_t arrival_ns = 0;
  // The address the thread spun on and stopped spinning on before any
  // release, while it reads little else (a spin-then-block barrier's
  // waiter, which then blocks on a condition variable and re-reads the flag
  // once when woken): its condvar wait is no barrier's, and the re-read
  // that sees the release teaches the flag. 0 once the thread took part in
  // a release or read kUnreleasedReads other addresses (the Valgrind source
  // sees the program's PLT stubs read the GOT on the way to the wait).
  uint64_t unreleased_flag = 0;
  uint32_t unreleased_reads = 0;  // other addresses read since it was set
  static constexpr uint32_t kUnreleasedReads = 8;
  // The thread's part in a team episode logged last: its index in the
  // thread's sync log. While the thread touches nothing but the flag of its
  // releasing write (joinable_flag; 0 once it touched anything else), a wait
  // on that flag joins the part instead of closing another segment (a
  // counter barrier: every thread writes the flag, then waits on it).
  uint64_t part_record = ~uint64_t{0};
  uint64_t joinable_flag = 0;

  // The latest release of each flag the thread took part in (by waiting or
  // by releasing), for a few flags (a pipeline stage uses its neighbour's,
  // its own and a barrier's). True when `release` is newer, which it then
  // records: a wait ended by a release the thread already took part in (a
  // second look at the flag) is no wait. A flag evicted here counts as
  // never seen.
  bool take_release(uint64_t flag, uint64_t release) {
    for (SeenRelease& s : seen)
      if (s.flag == flag) {
        if (s.release >= release) return false;
        s.release = release;
        return true;
      }
    seen[seen_next++ % kSeenFlags] = {flag, release};
    return true;
  }
  struct SeenRelease {
    uint64_t flag = 0;
    uint64_t release = 0;
  };
  static constexpr uint32_t kSeenFlags = 8;
  SeenRelease seen[kSeenFlags];
  uint32_t seen_next = 0;
};

// The flags weft learned: addresses some thread spun on until another
// thread's write released it. Fixed size, open addressing; entries are added
// under CaptureSession's condition lock and read without it.
struct SpinFlag {
  std::atomic<uint64_t> addr{0};
  // Writes to the flag since it was learned: a write is a release, and its
  // number the episode of the waits it ends.
  std::atomic<uint64_t> releases{0};
  // Whether the flag is a team's, as far as the run has seen (under the
  // lock): the release whose waiters are being counted, how many, and true
  // once two waiters left one wait ended by the same release. It decides
  // only what needs an answer during the run (the communication section a
  // wait closes, a barrier's mutex); the profile builder decides instances
  // from all of the flag's records.
  uint64_t counted_release = ~uint64_t{0};
  uint32_t waiters = 0;
  std::atomic<bool> team{false};
};

struct SpinFlagTable {
  static constexpr uint32_t kFlags = 4096;
  static constexpr uint32_t kFilterBits = 1 << 14;

  // A bit per hash of the flag's 8-byte word: most writes and reads of a
  // word that is no flag stop at one load.
  bool may_hold(uint64_t addr) const {
    // Most programs learn no flag (their barriers are the library's): one
    // load, no hash.
    if (!any_flag.load(std::memory_order_relaxed)) return false;
    const uint32_t h = filter_hash(addr);
    return (filter[h / 64].load(std::memory_order_relaxed) >> (h % 64)) & 1;
  }
  SpinFlag* find(uint64_t addr) {
    for (uint32_t i = 0, k = slot(addr); i < kFlags; ++i, k = (k + 1) & (kFlags - 1)) {
      const uint64_t a = flags[k].addr.load(std::memory_order_acquire);
      if (a == addr) return &flags[k];
      if (a == 0) return nullptr;
    }
    return nullptr;
  }
  // Under the lock; null when the table is full.
  SpinFlag* add(uint64_t addr) {
    for (uint32_t i = 0, k = slot(addr); i < kFlags; ++i, k = (k + 1) & (kFlags - 1)) {
      const uint64_t a = flags[k].addr.load(std::memory_order_relaxed);
      if (a == addr) return &flags[k];
      if (a != 0) continue;
      flags[k].addr.store(addr, std::memory_order_release);
      const uint32_t h = filter_hash(addr);
      filter[h / 64].fetch_or(uint64_t{1} << (h % 64), std::memory_order_release);
      any_flag.store(true, std::memory_order_release);
      return &flags[k];
    }
    return nullptr;
  }

  SpinFlag flags[kFlags];
  std::atomic<bool> any_flag{false};  // some flag was added (then the filter decides)
  std::atomic<uint64_t> filter[kFilterBits / 64] = {};

 private:
  static uint32_t filter_hash(uint64_t addr) {
    return static_cast<uint32_t>((addr >> 3) * 0x9E3779B97F4A7C15ull >> 50) & (kFilterBits - 1);
  }
  static uint32_t slot(uint64_t addr) {
    return static_cast<uint32_t>((addr >> 3) * 0xC2B2AE3D27D4EB4Full >> 40) & (kFlags - 1);
  }
};

}  // namespace weft
