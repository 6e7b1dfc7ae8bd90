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
#include "analyzers/sections/section_attribution.h"
#include "analyzers/state/record_log.h"
#include "analyzers/traces/memory_trace_recorder.h"
#include "common/analyses.h"
#include "common/run_capture.h"

namespace weft {

struct CaptureConfig {
  unsigned granularity = 64;
  unsigned max_threads = 1024;  // every analyzer's limit
  // Communication always runs; the others run when present.
  AnalysisSet analyses = AnalysisSet::all();
  // The analyses' settings (their max_threads fields are max_threads above).
  CrdConfig crd;
  ImbalanceConfig imbalance;
  FalseSharingConfig false_sharing;
  MemoryTraceConfig traces{1024, size_t{64} << 20};

  // Sets the analysis setting `key` (common/analyses.h) from its runtime
  // form; false when the key is unknown or `value` is malformed or out of
  // range. Allocation-free: the runtime applies its environment with it.
  bool apply_setting(std::string_view key, const char* value);
};

// Per-thread synchronization log, reserved once, filled without locks.
struct SyncLog {
  static constexpr uint64_t kCapacity = uint64_t{1} << 18;
  // Mutex lock/unlock records a thread logs; later ones are only counted, so
  // a lock-heavy thread never crowds out the records sections are built
  // from (and weft record does not store millions of them).
  static constexpr uint64_t kMaxMutexRecords = 4096;
  SyncRecord* records = nullptr;
  uint64_t size = 0;
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
};

struct ThreadContext {
  uint32_t tid = 0;
  // Null once the capture is saved (or for threads beyond max_threads, whose
  // loss the capture reports as incomplete): accesses are then ignored.
  std::atomic<CommunicationAnalyzer::ThreadState*> comm{nullptr};
  // The imbalance analysis' state of this thread; null when that analysis is
  // off, while the thread waits between a closing and a resuming sync point
  // (count_segments), and (like comm) once the capture is saved.
  std::atomic<ImbalanceCounts::ThreadState*> imbalance{nullptr};
  // Likewise for the false-sharing and traces analyses (null when off).
  std::atomic<FalseSharingDetector::ThreadState*> false_sharing{nullptr};
  std::atomic<MemoryTraceRecorder::ThreadState*> traces{nullptr};
  ThreadRecord* record = nullptr;  // null beyond max_threads
  // Control-flow events of the thread, copied into its ThreadRecord when the
  // capture is written: counted here, in the thread's own page, because the
  // records of all threads share cache lines.
  uint64_t basic_blocks = 0;
  SyncLog sync;
  // Heap blocks the thread allocated (with the false-sharing analysis).
  RecordLog<AllocationRecord> allocations;
};

class RawWriter;  // raw_capture_writer.h

class CaptureSession {
 public:
  // The analyses one memory access feeds beyond communication (imbalance,
  // false sharing, traces), for both sources: the thread's states are
  // loaded once per access; absent analyses cost one null test each.
  __attribute__((always_inline)) static void feed_access(ThreadContext& t,
                                                         const CaptureAnalyzers& analyzers,
                                                         uint64_t pc, uint64_t addr, uint32_t size,
                                                         bool is_write) {
    if (auto* s = t.imbalance.load(std::memory_order_relaxed))
      analyzers.imbalance->access(*s, pc, addr, size);
    if (auto* s = t.false_sharing.load(std::memory_order_relaxed))
      analyzers.false_sharing->access(*s, pc, addr, size, is_write);
    if (auto* s = t.traces.load(std::memory_order_relaxed))
      analyzers.traces->access(*s, pc, addr, size, is_write);
  }

  // Null when the memory cannot be reserved.
  static CaptureSession* create(const CaptureConfig& config);

  CaptureAnalyzers& analyzers() { return analyzers_; }
  const CaptureAnalyzers& analyzers() const { return analyzers_; }
  CommunicationAnalyzer& communication() { return *analyzers_.communication; }
  ImbalanceCounts* imbalance() { return analyzers_.imbalance; }  // null when the analysis is off
  FalseSharingDetector* false_sharing() { return analyzers_.false_sharing; }  // ditto
  MemoryTraceRecorder* traces() { return analyzers_.traces; }                 // ditto
  uint32_t max_threads() const { return max_threads_; }
  // Threads with a context: ids below min(thread_count, max_threads).
  uint32_t recorded_threads() const;
  // True when communication is the only analysis that sees every access: a
  // source may then decide private accesses itself, from the thread's
  // communication state alone (CommunicationAnalyzer::read_fast, is_local_write).
  bool communication_only() const {
    return !analyzers_.imbalance && !analyzers_.false_sharing && !analyzers_.traces;
  }

  uint32_t reserve_thread_id() { return next_tid_.fetch_add(1); }
  uint32_t thread_count() const { return next_tid_.load(); }

  // Creates the context of weft thread `tid` (also beyond max_threads, to
  // keep its sync log out of the way) and logs its ThreadStart.
  ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine, int32_t os_tid,
                              uint64_t time_ns);
  // The context of a started thread below max_threads, else null.
  ThreadContext* context(uint32_t tid) const {
    return tid < max_threads_ ? contexts_[tid].load() : nullptr;
  }
  // Logs the ThreadExit (closing the thread's section) and its end time.
  void finish_thread(ThreadContext& thread, uint64_t time_ns);

  // Logs a synchronization event; the ones that end a parallel section
  // (docs/metrics.md, "Parallel section") close the thread's open section.
  void record_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns, uint64_t pc,
                   uint64_t object, int64_t arg0 = 0, int64_t arg1 = 0);

  // A heap block the thread's code allocated at `pc`.
  void record_allocation(ThreadContext& thread, uint64_t pc, uint64_t address, uint64_t size);

  // Detaches every thread from the analyzer; with `wait`, also lets the
  // updates in flight finish (not in a forked child: their threads are gone).
  void stop_counting(bool wait);

  // Writes the raw capture to `fd`. `maps` is the text of the process's
  // memory map, or null to read /proc/self/maps (the runtime's case).
  void write(int fd, bool complete, const char* reason, const char* maps, size_t maps_size);

 private:
  explicit CaptureSession(const CaptureConfig& config);
  void count_segments(ThreadContext& thread, SyncKind kind);

  void write_meta(RawWriter& out, bool complete, const char* reason);
  void write_threads(RawWriter& out);
  void write_sync(RawWriter& out);

  AnalysisSet analyses_;
  uint32_t max_threads_ = 0;
  CaptureAnalyzers analyzers_;
  std::atomic<uint32_t> next_tid_{0};
  std::atomic<bool> counting_{true};                 // false once stop_counting ran
  ThreadRecord* threads_ = nullptr;                  // [max_threads]
  std::atomic<ThreadContext*>* contexts_ = nullptr;  // [max_threads]
};

}  // namespace weft
