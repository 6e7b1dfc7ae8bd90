// CaptureSession: the recording side shared by both event sources. It owns
// the analyzers of one run, the weft thread table and each thread's
// synchronization log, turns synchronization events into section
// boundaries, and writes everything as a raw capture (raw_capture.h) that
// `weft record` turns into the profile.
//
// The compile-time runtime drives it from the program's own threads (one
// ThreadContext per thread, no locks); the Valgrind backend drives it from
// the `weft record` process, one event at a time, in the order the tool saw
// them. It allocates only through reserve_zeroed and writes with plain
// write(2), so the runtime can save from a signal handler.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/false_sharing/false_sharing_detector.h"
#include "analyzers/footprint/sharing_footprint.h"
#include "analyzers/imbalance/imbalance_counts.h"
#include "analyzers/page_usage/page_usage.h"
#include "analyzers/reuse/reuse_distance.h"
#include "analyzers/sections/section_attribution.h"
#include "analyzers/state/record_log.h"
#include "analyzers/traces/memory_trace_recorder.h"
#include "common/analyses.h"
#include "common/run_capture.h"
#include "sources/capture/sampled_segments.h"
#include "sources/capture/spin_waits.h"

namespace weft {

struct CaptureConfig {
  unsigned granularity = 64;
  unsigned max_threads = 1024;  // every analyzer's limit
  // Communication always runs; the others run when present.
  AnalysisSet analyses = AnalysisSet::defaults();
  // The analyses' settings (their max_threads fields are max_threads above).
  CrdConfig crd;
  ImbalanceConfig imbalance;
  FalseSharingConfig false_sharing;
  // The trace_budget setting's default (common/analyses.h: 8M), for a
  // capture configured without it.
  MemoryTraceConfig traces{1024, size_t{8} << 20};
  ReuseConfig reuse;
  // Basic blocks some thread runs before the traces and false sharing sample
  // section instances (SampledSegments).
  uint64_t sampling_after_blocks = SampledSegments::kDefaultAfterBlocks;
  // An exited thread keeps only its results, moved into packed memory of
  // their size (CaptureSession::finish_thread); false keeps its states as
  // they were (tests compare the two captures).
  bool compact_exited_threads = true;

  // Sets the analysis setting `key` (common/analyses.h) from its runtime
  // form; false when the key is unknown or `value` is malformed or out of
  // range. Allocation-free: the runtime applies its environment with it.
  bool apply_setting(std::string_view key, const char* value);
};

// Per-thread synchronization log, reserved once (48 MiB of address space,
// touched as it fills), filled without locks; an exited thread's log keeps
// only its records. 2^20 records: 100,000 OpenMP
// worksharing loops with their barriers log 4 each under libomp (chunk,
// loop end, barrier enter and leave), 2 under libgomp.
struct SyncLog {
  static constexpr uint64_t kCapacity = uint64_t{1} << 20;
  // Mutex lock/unlock records a thread logs; later ones are only counted, so
  // a lock-heavy thread never crowds out the records sections are built
  // from (and weft record does not store millions of them).
  static constexpr uint64_t kMaxMutexRecords = 4096;
  SyncRecord* records = nullptr;
  uint64_t size = 0;
  // kCapacity while the thread runs; at its exit the records move into
  // packed memory of their size (CaptureSession::finish_thread), and
  // capacity becomes that size.
  uint64_t capacity = 0;
  uint64_t dropped = 0;
  uint64_t mutex_records = 0;
  uint64_t unlogged_mutex_events = 0;
};

// The analyzers of one session; an analysis that does not run leaves its
// pointers null. Each analysis' capture part (analysis_capture.h) creates,
// attaches and saves its own.
struct CaptureAnalyzers {
  CommunicationAnalyzer* communication = nullptr;
  SectionAttribution* sections = nullptr;           // with communication
  CommunicationReuseDistance* distances = nullptr;  // crd
  SharingFootprint* footprint = nullptr;            // crd
  ImbalanceCounts* imbalance = nullptr;             // imbalance
  FalseSharingDetector* false_sharing = nullptr;    // false sharing
  MemoryTraceRecorder* traces = nullptr;            // traces
  PageUsage* page_usage = nullptr;                  // pages
  ReuseDistanceAnalyzer* reuse = nullptr;           // reuse
};

// What the recognition of condition-variable barriers (docs/metrics.md,
// "Parallel section") knows of one thread. The fields other threads read
// (marked shared) change only under CaptureSession's condition lock.
struct CondThreadState {
  // The mutex the thread locked last and still holds, where and when.
  uint64_t held_mutex = 0;
  uint64_t lock_pc = 0;
  uint64_t lock_ns = 0;
  // The wait sequence in progress (a wait, or a loop of waits on one
  // condvar with nothing else in between): its condvar (0: none), where and
  // when the thread arrived. Shared.
  uint64_t cv = 0;
  uint64_t wait_mutex = 0;
  uint64_t arrival_pc = 0;
  uint64_t arrival_ns = 0;
  bool waiting = false;           // inside the wait now; shared
  uint64_t released_episode = 0;  // the barrier episode that released it; shared
  // The episode the thread released in its current lock hold, on which
  // condvar: its further signals there belong to that episode.
  uint64_t release_cv = 0;
  uint64_t release_episode = 0;
  // The condvar of a part logged, whose CondBarrierLeave is due (0: none).
  uint64_t resume_cv = 0;
  // The barrier mutex the thread locked, detaching it from the imbalance
  // counts until its unlock (0: none).
  uint64_t detached_at = 0;
  // Between a marked or pthread barrier's enter and leave (its own cond
  // calls are not another barrier), blocked in a join, forking (its last
  // event was a create: it goes on to create or to join, or arrives itself
  // before any release), or gone: shared.
  bool in_barrier = false;
  bool in_join = false;
  bool forking = false;
  bool exited = false;
};

class CaptureSession;

struct ThreadContext {
  uint32_t tid = 0;
  // Every per-access part but communication, the spin-wait watch and the
  // imbalance analysis' simulated caches skips the thread's open segment
  // (sampled section instances; set where a segment begins):
  // feed_access_fast stops after the caches.
  bool only_watched = false;
  // Every per-access part but communication skips the open segment, the
  // watch and the simulated caches too (CaptureSession::choose_access_path):
  // a source that has a communication-only access path takes it (below).
  bool communication_alone = false;
  uint64_t communication_alone_segments = 0;  // segments begun so
  // The source's per-thread switch to its communication-only access path
  // (the compile-time hooks' weft_comm_only_state, the thread's own TLS),
  // set to the thread's communication state for a segment run with
  // communication alone and to null otherwise; null for a source without
  // such a path (the Valgrind source).
  CommunicationAnalyzer::ThreadState** communication_alone_path = nullptr;
  // The thread's last segment (its sampling ordinal) that warms the
  // imbalance analysis' simulated caches for a pass counted after it: from
  // each pass whose key's next pass has its memory counted, for one and a
  // half times the key's period (the segments since its previous pass), the
  // caches see every access, so that the counted pass finds them as the
  // program left them, the passes of other keys in between included.
  uint32_t cache_warm_until = 0;
  CaptureSession* session = nullptr;  // the session that created it
  // Null once the capture is saved (or for threads beyond max_threads, whose
  // loss the capture reports as incomplete): accesses are then ignored.
  std::atomic<CommunicationAnalyzer::ThreadState*> comm{nullptr};
  // The imbalance analysis' state of this thread; null when that analysis is
  // off, while the thread waits between a closing and a resuming sync point
  // (count_segments), and (like comm) once the capture is saved.
  std::atomic<ImbalanceCounts::ThreadState*> imbalance{nullptr};
  // The same state for the function entries and exits of the imbalance
  // analysis' call frames, kept while the thread waits (a function it
  // returns from after a section boundary must find its frame); null when
  // the analysis is off and once the capture stops counting.
  std::atomic<ImbalanceCounts::ThreadState*> call_frames{nullptr};
  // Likewise for the false-sharing and traces analyses (null when off).
  std::atomic<FalseSharingDetector::ThreadState*> false_sharing{nullptr};
  std::atomic<MemoryTraceRecorder::ThreadState*> traces{nullptr};
  std::atomic<PageUsage::ThreadState*> page_usage{nullptr};
  std::atomic<ReuseDistanceAnalyzer::ThreadState*> reuse{nullptr};
  ThreadRecord* record = nullptr;  // null beyond max_threads
  // Control-flow events of the thread, copied into its ThreadRecord when the
  // capture is written: counted here, in the thread's own page, because the
  // records of all threads share cache lines.
  uint64_t basic_blocks = 0;
  SyncLog sync;
  CondThreadState cond;
  SpinWatch spin;
  SampledSegments::ThreadState sampling;
  // Heap blocks the thread allocated (with the false-sharing or the
  // page-usage analysis, which name data objects by them).
  RecordLog<AllocationRecord> allocations;
};

class RawWriter;  // raw_capture_writer.h

class CaptureSession {
 public:
  // The analyses one memory access feeds beyond communication (imbalance,
  // false sharing, traces), for both sources: the thread's states are
  // loaded once per access; absent analyses cost one null test each.
  // `is_atomic`: an atomic operation's access (the false-sharing analysis
  // never counts it as an unsynchronised write).
  __attribute__((always_inline)) static void feed_access(ThreadContext& t,
                                                         const CaptureAnalyzers& analyzers,
                                                         uint64_t pc, uint64_t addr, uint32_t size,
                                                         bool is_write, bool is_atomic = false) {
    if (auto* s = t.imbalance.load(std::memory_order_relaxed))
      analyzers.imbalance->access(*s, pc, addr, size);
    if (auto* s = t.false_sharing.load(std::memory_order_relaxed))
      analyzers.false_sharing->access(*s, pc, addr, size, is_write, is_atomic);
    if (auto* s = t.traces.load(std::memory_order_relaxed))
      analyzers.traces->access(*s, pc, addr, size, is_write);
    if (auto* s = t.page_usage.load(std::memory_order_relaxed))
      analyzers.page_usage->access(*s, pc, addr, is_write);
    if (auto* s = t.reuse.load(std::memory_order_relaxed)) analyzers.reuse->access(*s, pc, addr);
  }

  // The parts of feed_access (and of watch_access) an inline caller may
  // leave to an out-of-line one: what feed_access_fast could not decide.
  enum RemainingWork : uint32_t {
    kRemainingWatch = 1u << 0,  // watch_access, then every analyzer (order kept)
    kRemainingImbalance = 1u << 1,
    kRemainingFalseSharing = 1u << 2,
    kRemainingTraces = 1u << 3,
    kRemainingOthers = 1u << 4,  // pages, reuse: no fast path
  };

  // watch_access and feed_access for a plain access the communication
  // analyzer already took, as far as each part's inline fast path decides
  // it alone (docs/performance.md, "The composed fast path"); returns the
  // parts left for feed_access_remaining (0: none). A part that is left has
  // not changed anything. When the spin-wait watch is left, everything is,
  // so that the watch still sees the access before the analyzers.
  __attribute__((always_inline)) uint32_t feed_access_fast(ThreadContext& t, uint64_t pc,
                                                           uint64_t addr, uint32_t size,
                                                           bool is_write) {
    if (!watch_access_fast(t, pc, addr, is_write)) return kRemainingWatch;
    uint32_t remaining = 0;
    // The imbalance analysis' caches see every segment, its memory counted
    // or not (ImbalanceCounts::access).
    if (auto* s = t.imbalance.load(std::memory_order_relaxed))
      if (!analyzers_.imbalance->access_fast(*s, pc, addr, size)) remaining |= kRemainingImbalance;
    if (t.only_watched) return remaining;
    if (auto* s = t.false_sharing.load(std::memory_order_relaxed))
      if (!analyzers_.false_sharing->changes_nothing(*s, addr, size, is_write))
        remaining |= kRemainingFalseSharing;
    if (auto* s = t.traces.load(std::memory_order_relaxed))
      if (!MemoryTraceRecorder::access_fast(*s, pc, addr, size, is_write))
        remaining |= kRemainingTraces;
    if (t.page_usage.load(std::memory_order_relaxed) || t.reuse.load(std::memory_order_relaxed))
      remaining |= kRemainingOthers;
    return remaining;
  }

  // What feed_access_fast left (`remaining`, not 0).
  void feed_access_remaining(ThreadContext& t, uint64_t pc, uint64_t addr, uint32_t size,
                             bool is_write, uint32_t remaining);

  // The recognition of spin waits (docs/metrics.md, "Spin waits"): every
  // access of the thread, before the analyzers see it (a spinning read asks
  // the communication shadow whether another thread's write is new to it).
  // A spinning thread stays attached to its imbalance counts (its events are
  // held back, ImbalanceCounts::hold), so a source may keep the thread's
  // state pointers across the call.
  __attribute__((always_inline)) void watch_access(ThreadContext& t, uint64_t pc, uint64_t addr,
                                                   bool is_write) {
    SpinWatch& w = t.spin;
    if (!w.enabled) return;
    if (is_write) {
      if (addr != w.joinable_flag) w.joinable_flag = 0;
      if (w.spinning || w.known_flag) watch_ended(t, addr);
      w.reads = 0;
      if (spin_flags_.may_hold(addr)) flag_written(t, pc, addr);
      return;
    }
    if (addr == w.addr && w.reads != 0) {
      // The same address again: the same instruction, another copy of it
      // (an unrolled spin loop), or a spin-then-block barrier's re-test
      // around its wait.
      watch_repeated(t, pc);
      return;
    }
    // The loop's other reads; a learned flag's read, or the re-read of the
    // address the thread gave up spinning on, starts a watch of its own (a
    // spin-then-block barrier re-reads its flag after the wait, right after
    // reading the mutex, the condition variable or a GOT entry). One filter
    // lookup per read serves both this test and flag_read below.
    const bool may_be_flag = spin_flags_.may_hold(addr);
    if (w.reads != 0 && w.between < SpinWatch::kMaxBetween && addr != w.unreleased_flag &&
        !(may_be_flag && spin_flags_.find(addr) != nullptr)) {
      ++w.between;
      return;
    }
    if (w.spinning || w.known_flag) watch_ended(t, 0);
    if (addr != w.joinable_flag) w.joinable_flag = 0;
    const bool reread = addr == w.unreleased_flag;
    if (!reread && w.unreleased_flag != 0 && ++w.unreleased_reads > SpinWatch::kUnreleasedReads)
      w.unreleased_flag = 0;
    w.pc = pc;
    w.addr = addr;
    w.reads = 1;
    w.between = 0;
    w.saw_release = reread && saw_other_write(t, addr);
    if (w.saw_release) resume_spinning(t);
    if (may_be_flag) flag_read(t);
  }

  // watch_access(t, pc, addr, is_write) when it only moves the watch along
  // (no flag, no spin, nothing asked of the communication shadow): true;
  // otherwise nothing is changed (false).
  __attribute__((always_inline)) bool watch_access_fast(ThreadContext& t, uint64_t pc,
                                                        uint64_t addr, bool is_write) {
    SpinWatch& w = t.spin;
    if (!w.enabled) return true;
    if (w.spinning || w.known_flag) return false;
    if (spin_flags_.may_hold(addr)) return false;
    if (is_write) {
      if (addr != w.joinable_flag) w.joinable_flag = 0;
      w.reads = 0;
      return true;
    }
    if (w.reads != 0) {
      if (addr == w.addr) return false;  // watch_repeated
      if (w.between < SpinWatch::kMaxBetween && addr != w.unreleased_flag) {
        ++w.between;
        return true;
      }
    }
    if (addr == w.unreleased_flag) return false;  // a re-read that may see the release
    // A new watch begins at this read (watch_access, without its rare cases).
    if (addr != w.joinable_flag) w.joinable_flag = 0;
    if (w.unreleased_flag != 0 && ++w.unreleased_reads > SpinWatch::kUnreleasedReads)
      w.unreleased_flag = 0;
    w.pc = pc;
    w.addr = addr;
    w.reads = 1;
    w.between = 0;
    w.saw_release = false;
    return true;
  }

  // Whether the thread's read of `addr` sees another thread's write it had
  // not read (the communication shadow's raw event).
  bool saw_other_write(ThreadContext& t, uint64_t addr);
  // Whether a repeated read of the watched address sees another thread's
  // write it had not seen: one it has not read, or one that came after
  // the writer the watch saw at its previous read.
  bool saw_new_write(ThreadContext& t);

  // The time spin waits are logged with: the source's clock, or (without
  // one, the Valgrind backend) the latest synchronization record's time.
  void set_clock(uint64_t (*now_ns)()) { clock_ = now_ns; }

  // Null when the memory cannot be reserved.
  static CaptureSession* create(const CaptureConfig& config);

  CaptureAnalyzers& analyzers() { return analyzers_; }
  const CaptureAnalyzers& analyzers() const { return analyzers_; }
  CommunicationAnalyzer& communication() { return *analyzers_.communication; }
  ImbalanceCounts* imbalance() { return analyzers_.imbalance; }  // null when the analysis is off
  uint32_t max_threads() const { return max_threads_; }
  // Threads with a context: ids below min(thread_count, max_threads).
  uint32_t recorded_threads() const;
  // True when communication is the only analysis that sees every access: a
  // source may then decide private accesses itself, from the thread's
  // communication state alone (CommunicationAnalyzer::read_fast, is_local_write).
  bool communication_only() const {
    return !analyzers_.imbalance && !analyzers_.false_sharing && !analyzers_.traces &&
           !analyzers_.page_usage && !analyzers_.reuse;
  }

  uint32_t reserve_thread_id() { return next_tid_.fetch_add(1); }
  uint32_t thread_count() const { return next_tid_.load(); }

  // Creates the context of weft thread `tid` (also beyond max_threads, to
  // keep its sync log out of the way) and logs its ThreadStart.
  ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine, int32_t os_tid,
                              uint64_t time_ns);
  // The context of a started thread below max_threads, else null.
  // Every heap block the recorded threads allocated (record_allocation).
  template <class Visit>
  void for_each_allocation(Visit&& visit) const {
    const uint32_t recorded = recorded_threads();
    for (uint32_t i = 0; i < recorded; ++i)
      if (const ThreadContext* c = context(i)) c->allocations.for_each(visit);
  }

  ThreadContext* context(uint32_t tid) const {
    return tid < max_threads_ ? contexts_[tid].load() : nullptr;
  }
  // Logs the ThreadExit (closing the thread's section) and its end time;
  // the thread's states then keep only its results, in packed memory of
  // their size (compact_exited_threads). Events after it still count.
  void finish_thread(ThreadContext& thread, uint64_t time_ns);

  // Logs a synchronization event; the ones that end a parallel section
  // (docs/metrics.md, "Parallel section") close the thread's open section.
  void record_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns, uint64_t pc,
                   uint64_t object, int64_t arg0 = 0, int64_t arg1 = 0);

  // A heap block the thread's code allocated at `pc`.
  void record_allocation(ThreadContext& thread, uint64_t pc, uint64_t address, uint64_t size);

  // The thread released heap memory [address, address + size) (free, a
  // block realloc moved or shrank): every analysis forgets the state it kept
  // for the granules lying entirely inside it (docs/metrics.md, "Freed
  // memory"). Before the allocator may hand the memory out again.
  void release_memory(ThreadContext& thread, uint64_t address, uint64_t size);
  // The program declared a distribution (include/weft/distribution.h).
  void declare_distribution(const DistributionDeclaration& declaration) {
    if (analyzers_.reuse) analyzers_.reuse->declare(declaration);
  }

  // Detaches every thread from the analyzer; with `wait`, also lets the
  // updates in flight finish (not in a forked child: their threads are gone).
  void stop_counting(bool wait);

  // Writes the raw capture to `fd`. `maps` is the text of the process's
  // memory map, or null to read /proc/self/maps (the runtime's case).
  void write(int fd, bool complete, const char* reason, const char* maps, size_t maps_size);

 private:
  explicit CaptureSession(const CaptureConfig& config);
  void count_segments(ThreadContext& thread, SyncKind kind);
  // finish_thread's compaction, while the thread is marked busy.
  void compact_exited(ThreadContext& thread);
  static bool grow_exited_log(SyncLog& log);
  // Appends one record to the thread's log (false when the log is full).
  bool log_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns, uint64_t pc,
                uint64_t object, int64_t arg0, int64_t arg1);
  // The recognition of condition-variable barriers: follows the thread's
  // locks, waits and releases, and logs a CondBarrier where it recognises
  // the thread's part in an episode. Returns the arg0 a release is logged
  // with, and sets `force_log` when that record must be kept beyond the cap.
  int64_t follow_conditions(ThreadContext& thread, SyncKind kind, uint64_t time_ns, uint64_t pc,
                            uint64_t object, int64_t arg0, bool& force_log);
  // Whether releases on `cv` may still end barrier episodes; `refuse` marks
  // it as not a barrier (true when it was not marked before).
  // follow_conditions' handlers, per event.
  void cond_lock_taken(ThreadContext& thread, uint64_t time_ns, uint64_t pc, uint64_t mutex);
  void cond_lock_released(ThreadContext& thread, uint64_t mutex);
  void cond_wait_entered(CondThreadState& me, uint64_t time_ns, uint64_t pc, uint64_t cv,
                         int64_t mutex);
  void cond_wait_left(ThreadContext& thread, uint64_t time_ns, uint64_t cv);
  int64_t cond_released(ThreadContext& thread, uint64_t time_ns, uint64_t pc, uint64_t cv,
                        bool& force_log);
  bool everyone_else_waits(const ThreadContext& thread, uint64_t cv, uint32_t& waiters) const;
  void cond_thread_event(CondThreadState& me, SyncKind kind, int64_t arg0);
  bool cv_may_be_barrier(uint64_t cv);
  bool refuse_cv(uint64_t cv);
  bool is_barrier_mutex(uint64_t mutex) const;
  // Whether the thread's signal or broadcast wakes the waiters of the spin
  // flag it just released (its latest record is that SpinRelease).
  static bool spin_flag_wake_up(const ThreadContext& thread);
  void add_barrier_mutex(uint64_t mutex);

  // watch_access' cold paths (spin_waits.cpp).
  void watch_repeated(ThreadContext& thread, uint64_t pc);
  void watch_ended(ThreadContext& thread, uint64_t written);
  void flag_written(ThreadContext& thread, uint64_t pc, uint64_t addr);
  void flag_read(ThreadContext& thread);
  void start_spinning(ThreadContext& thread);
  // The re-read of the address the thread gave up spinning on sees the
  // release (a spin-then-block waiter woken): the spin goes on from its
  // arrival, so that the next access elsewhere ends it as a wait.
  void resume_spinning(ThreadContext& thread);
  void hold_spin_tail(ThreadContext& thread);
  void stop_spinning(ThreadContext& thread);
  void spin_wait_ended(ThreadContext& thread, SpinFlag& flag, uint64_t release);
  void log_spin_part(ThreadContext& thread, const SpinFlag& flag, SyncKind kind, uint64_t pc,
                     uint64_t arrival_ns, uint64_t release);
  // Ends the thread's communication section at a closing point (`pc`, or
  // the thread's exit).
  void close_communication_section(ThreadContext& thread, uint64_t pc, bool thread_exit = false);
  // Ends the thread's watch at a synchronization call (its wait, if any,
  // ended before the call).
  void end_watch(ThreadContext& thread);
  uint64_t spin_now() const;

  // A segment of the thread begins: the sampling analyses learn whether
  // they analyze it (SampledSegments).
  void begin_segment(ThreadContext& thread, SyncKind kind, uint64_t pc, uint64_t object,
                     int64_t arg1);
  // Where a segment begins, after every part has taken its decision:
  // whether the thread runs it with communication alone (docs/metrics.md,
  // "Sampled section instances"), and the source's access path with it.
  void choose_access_path(ThreadContext& thread);

  void write_meta(RawWriter& out, bool complete, const char* reason);
  void write_threads(RawWriter& out);
  void write_sync(RawWriter& out);

  AnalysisSet analyses_;
  uint32_t max_threads_ = 0;
  bool compact_exited_ = true;
  CaptureAnalyzers analyzers_;
  std::atomic<uint32_t> next_tid_{0};
  std::atomic<bool> counting_{true};  // false once stop_counting ran
  // The period a key's first pass warms the caches for (cache_warm_until).
  static constexpr uint32_t kFirstWarmUp = 4;
  // Condition-variable barrier recognition: its lock, the last episode
  // number, and the condvars found not to be barriers (open addressing; a
  // full table refuses every further condvar).
  static constexpr uint32_t kRefusedCvs = 4096;
  std::atomic_flag cond_lock_ = ATOMIC_FLAG_INIT;
  uint64_t cond_episodes_ = 0;
  uint32_t cond_created_ = 0;  // threads created so far (started or not)
  // The mutexes of recognised barriers (their waits' and releases'), a few
  // at most; a lock of one is an arrival.
  static constexpr uint32_t kBarrierMutexes = 64;
  std::atomic<uint64_t> barrier_mutexes_[kBarrierMutexes] = {};
  std::atomic<uint64_t> refused_cvs_[kRefusedCvs] = {};  // read without the lock
  SpinFlagTable spin_flags_;
  uint64_t (*clock_)() = nullptr;
  std::atomic<uint64_t> latest_sync_ns_{0};
  ThreadRecord* threads_ = nullptr;                  // [max_threads]
  std::atomic<ThreadContext*>* contexts_ = nullptr;  // [max_threads]
  SampledSegments sampled_segments_;
  bool samples_segments_ = false;  // some analysis samples section instances
};

// The compile-time hooks are linked into each program module and read
// ThreadContext, CaptureSession and the analyzers' thread states inline:
// a fingerprint of those layouts, which the runtime compares with the one
// each module's hooks were built with (weft_module_init). Raise the version
// when a layout, or what the hooks do with a field (4: only_watched no
// longer skips the imbalance analysis' caches; 5: alternate() notes its hit
// for the CRD's memo pause; 6: a segment run with communication alone; 7:
// alternate() advances the CRD's clock; 8: the traces' access_fast leaves a
// lost access out of line while a nest's row is pending; 9: the imbalance
// analysis' block_fast counts down to its memory stretches, access_fast adds
// memory_increment; 10: read_fast lets the memo decide a repeat of the
// CRD long sample's latest granule), changes without changing these sizes.
constexpr uint64_t kInlineLayoutVersion = 10;
constexpr uint64_t inline_layout_fingerprint() {
  uint64_t h = kInlineLayoutVersion;
  for (uint64_t size :
       {sizeof(ThreadContext), sizeof(CaptureSession), sizeof(SpinWatch),
        sizeof(CommunicationAnalyzer::ThreadState), sizeof(ImbalanceCounts::ThreadState),
        sizeof(FalseSharingDetector::ThreadState), sizeof(MemoryTraceRecorder::ThreadState)})
    h = (h ^ size) * 0x100000001b3ULL;
  return h;
}

}  // namespace weft
