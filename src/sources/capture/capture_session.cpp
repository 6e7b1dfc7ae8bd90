#include "sources/capture/capture_session.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "analyzers/state/page_memory.h"
#include "sources/capture/analysis_capture.h"
#include "sources/capture/raw_capture_writer.h"

namespace weft {

namespace {

void write_own_process_maps(RawWriter& out) {
  // Two passes: the section header needs the length first.
  write_text_section(out, static_cast<uint32_t>(RawSection::ProcessMaps), [](auto&& write) {
    char chunk[4096];
    const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) write(chunk, static_cast<size_t>(n));
    close(fd);
  });
}

constexpr const AnalysisCapture* kAnalysisCaptures[] = {
#define WEFT_ANALYSIS_CAPTURE_ENTRY(Id, symbol) &symbol##_capture,
    WEFT_ANALYSIS_LIST(WEFT_ANALYSIS_CAPTURE_ENTRY)
#undef WEFT_ANALYSIS_CAPTURE_ENTRY
};

const AnalysisCapture& capture_of(AnalysisId id) {
  return *kAnalysisCaptures[static_cast<size_t>(id)];
}

}  // namespace

bool CaptureConfig::apply_setting(std::string_view key, const char* value) {
  const AnalysisDescriptor* owner = setting_owner(key);
  if (!owner || !value) return false;
  const AnalysisSetting& setting = *find_setting(key);
  uint64_t number = 0;
  if (setting.type != SettingType::Text && !parse_setting_number(setting, value, number))
    return false;
  const AnalysisCapture& capture = capture_of(owner->id);
  return capture.configure && capture.configure(*this, setting, value, number);
}

CaptureSession* CaptureSession::create(const CaptureConfig& config) {
  void* mem = reserve_zeroed(sizeof(CaptureSession));
  auto* session = mem ? new (mem) CaptureSession(config) : nullptr;
  if (session && (!session->analyzers_.communication || !session->analyzers_.sections ||
                  !session->threads_ || !session->contexts_))
    return nullptr;
  return session;
}

CaptureSession::CaptureSession(const CaptureConfig& config)
    : analyses_(config.analyses.with_requirements()),
      max_threads_(config.max_threads),
      compact_exited_(config.compact_exited_threads),
      sampled_segments_(config.sampling_after_blocks) {
  // An analysis whose memory cannot be reserved does not run (create()
  // refuses a session without communication).
  const AnalysisSet wanted = analyses_;
  wanted.for_each([&](const AnalysisDescriptor& d) {
    if (!capture_of(d.id).create(analyzers_, config)) analyses_.remove(d.id);
  });
  if (CommunicationAnalyzer* communication = analyzers_.communication)
    communication->connect(analyzers_.distances, analyzers_.footprint, analyzers_.sections);
  samples_segments_ =
      (analyzers_.traces && analyzers_.traces->config().segment_sampling > 1) ||
      (analyzers_.false_sharing && analyzers_.false_sharing->config().segment_sampling > 1) ||
      (analyzers_.imbalance && analyzers_.imbalance->config().segment_sampling > 1) ||
      (analyzers_.distances && analyzers_.distances->config().segment_sampling > 1);
  threads_ = static_cast<ThreadRecord*>(reserve_zeroed(max_threads_ * sizeof(ThreadRecord)));
  contexts_ = static_cast<std::atomic<ThreadContext*>*>(
      reserve_zeroed(max_threads_ * sizeof(std::atomic<ThreadContext*>)));
}

ThreadContext* CaptureSession::start_thread(uint32_t tid, int32_t parent, uint64_t start_routine,
                                            int32_t os_tid, uint64_t time_ns) {
  void* mem = reserve_packed(sizeof(ThreadContext));
  if (!mem) return nullptr;
  auto* c = new (mem) ThreadContext;
  c->tid = tid;
  c->session = this;
  // Ids come from reserve_thread_id, or from the Valgrind tool: count them.
  for (uint32_t n = next_tid_.load(); n <= tid && !next_tid_.compare_exchange_weak(n, tid + 1);) {
  }
  c->sync.records =
      static_cast<SyncRecord*>(reserve_zeroed(SyncLog::kCapacity * sizeof(SyncRecord)));
  if (c->sync.records) c->sync.capacity = SyncLog::kCapacity;
  if (tid < max_threads_) {
    analyses_.for_each([&](const AnalysisDescriptor& d) {
      if (auto attach = capture_of(d.id).attach) attach(analyzers_, *c);
    });
    ThreadRecord& r = threads_[tid];
    r.id = tid;
    r.os_tid = os_tid;
    r.parent = parent;
    r.start_routine = start_routine;
    r.start_ns = time_ns;
    c->record = &r;
    contexts_[tid].store(c);
  }
  record_sync(*c, SyncKind::ThreadStart, time_ns, 0, 0, parent);
  return c;
}

void CaptureSession::feed_access_remaining(ThreadContext& t, uint64_t pc, uint64_t addr,
                                           uint32_t size, bool is_write, uint32_t remaining) {
  if (remaining & kRemainingWatch) {
    watch_access(t, pc, addr, is_write);
    feed_access(t, analyzers_, pc, addr, size, is_write);
    return;
  }
  if (remaining & kRemainingImbalance)
    if (auto* s = t.imbalance.load(std::memory_order_relaxed))
      analyzers_.imbalance->access(*s, pc, addr, size);
  if (remaining & kRemainingFalseSharing)
    if (auto* s = t.false_sharing.load(std::memory_order_relaxed))
      analyzers_.false_sharing->access(*s, pc, addr, size, is_write);
  if (remaining & kRemainingTraces)
    if (auto* s = t.traces.load(std::memory_order_relaxed))
      analyzers_.traces->access(*s, pc, addr, size, is_write);
  if (remaining & kRemainingOthers) {
    if (auto* s = t.page_usage.load(std::memory_order_relaxed))
      analyzers_.page_usage->access(*s, pc, addr, is_write);
    if (auto* s = t.reuse.load(std::memory_order_relaxed)) analyzers_.reuse->access(*s, pc, addr);
  }
}

void CaptureSession::finish_thread(ThreadContext& thread, uint64_t time_ns) {
  record_sync(thread, SyncKind::ThreadExit, time_ns, 0, 0);
  if (thread.record) thread.record->end_ns = time_ns;
  // Of the CRD, an exited reader keeps its results only (its reuse memo
  // points at the pairs' recent granules, which go).
  if (analyzers_.distances) {
    if (CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed))
      CommunicationAnalyzer::forget_reuses(*state);
    analyzers_.distances->finish_reader(thread.tid);
  }
  // Of the reuse distances, likewise: its trace goes.
  if (analyzers_.reuse) analyzers_.reuse->finish_thread(thread.tid);
  // Of the imbalance analysis, an exited thread keeps its logs only.
  if (analyzers_.imbalance && thread.tid < max_threads_) {
    thread.imbalance.store(nullptr, std::memory_order_relaxed);
    thread.call_frames.store(nullptr, std::memory_order_relaxed);
    if (ImbalanceCounts::ThreadState* t = analyzers_.imbalance->attach(thread.tid))
      ImbalanceCounts::finish_thread(*t);
  }
  // Busy like an access being counted: the capture's writer waits for it
  // (stop_counting), and once the writer started, nothing moves.
  CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed);
  if (!compact_exited_ || (state && state->busy)) return;
  if (state) state->busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (counting_.load(std::memory_order_relaxed)) compact_exited(thread);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (state) state->busy = 0;
}

void CaptureSession::compact_exited(ThreadContext& thread) {
  const uint32_t tid = thread.tid;
  if (CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed))
    communication().finish_thread(*state);
  if (analyzers_.distances && tid < max_threads_) analyzers_.distances->compact_reader(tid);
  if (analyzers_.imbalance && tid < max_threads_)
    if (ImbalanceCounts::ThreadState* t = analyzers_.imbalance->attach(tid))
      ImbalanceCounts::compact_thread(*t);
  if (FalseSharingDetector::ThreadState* t = thread.false_sharing.load(std::memory_order_relaxed))
    FalseSharingDetector::finish_thread(*t);
  if (MemoryTraceRecorder::ThreadState* t = thread.traces.load(std::memory_order_relaxed))
    analyzers_.traces->finish_thread(*t);
  // The sync log: its records move into packed memory of their size (an
  // event after the exit grows it again, grow_exited_log); its reservation's
  // pages are freed, its addresses kept (a reader that loaded them reads
  // zeros, never a fault).
  SyncLog& log = thread.sync;
  if (!log.records || log.capacity != SyncLog::kCapacity) return;
  auto* kept = static_cast<SyncRecord*>(reserve_packed(log.size * sizeof(SyncRecord)));
  if (!kept) return;
  memcpy(kept, log.records, log.size * sizeof(SyncRecord));
  SyncRecord* reserved = log.records;
  log.capacity = log.size;
  std::atomic_signal_fence(std::memory_order_release);
  log.records = kept;
  std::atomic_signal_fence(std::memory_order_release);
  forget_pages(reserved, SyncLog::kCapacity * sizeof(SyncRecord));
}

void CaptureSession::record_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns,
                                 uint64_t pc, uint64_t object, int64_t arg0, int64_t arg1) {
  // The false-sharing analysis follows every call, logged or not (its
  // epochs and held locks decide which writes are unsynchronised).
  if (auto* s = thread.false_sharing.load(std::memory_order_relaxed))
    analyzers_.false_sharing->synchronize(*s, kind, object, arg0);
  // A wait loop that blocks between its tests does not spin: a queue's
  // consumer whose wake-ups another thread steals re-reads its predicate
  // once per wait, four times and more when the machine is busy, and must
  // not teach weft a flag. A spin-then-block barrier spins before it
  // blocks, and keeps its watch.
  if (kind == SyncKind::CondWaitEnter && !thread.spin.spinning && !thread.spin.known_flag) {
    thread.spin.reads = 0;
    thread.spin.saw_release = false;
  }
  SyncLog& log = thread.sync;
  if (!log.records) return;
  if (!clock_) latest_sync_ns_.store(time_ns, std::memory_order_relaxed);
  // A synchronization call that closes or resumes a section ends a spin
  // watch first (a thread leaving the last barrier of its loop exits).
  if (thread.spin.enabled && kind != SyncKind::SpinBarrier && kind != SyncKind::SpinRelease &&
      (closes_section(kind) || resumes_section(kind)))
    end_watch(thread);
  bool force_log = false;
  if (kind != SyncKind::CondBarrier && kind != SyncKind::CondBarrierLeave &&
      thread.tid < max_threads_)
    if (const int64_t episode =
            follow_conditions(thread, kind, time_ns, pc, object, arg0, force_log);
        kind == SyncKind::CondSignal || kind == SyncKind::CondBroadcast)
      arg0 = episode;
  if (is_capped_sync(kind) && !force_log) {
    if (log.mutex_records >= SyncLog::kMaxMutexRecords) {
      ++log.unlogged_mutex_events;
      return;
    }
    ++log.mutex_records;
  }
  if (!log_sync(thread, kind, time_ns, pc, object, arg0, arg1)) return;

  // The traces number the thread's segments as the log does (its logged
  // closing records), to split a stream into its loop's executions.
  if (closes_section(kind))
    if (auto* traces = thread.traces.load(std::memory_order_relaxed))
      MemoryTraceRecorder::close_segment(*traces);
  // Where the thread's next segment begins: at a close it does not wait
  // at, or where it resumes.
  const bool begins_segment =
      samples_segments_ &&
      ((closes_section(kind) && !waits_after_closing(kind)) || resumes_section(kind));
  if (samples_segments_ && closes_section(kind)) sampled_segments_.on_close(thread.basic_blocks);
  // Before it waits: its team's members leave this pass only after every
  // one entered it (SampledSegments::register_arrival).
  if (samples_segments_ && kind == SyncKind::OmpBarrierEnter)
    sampled_segments_.register_arrival(thread.sampling, pc);
  if (begins_segment) begin_segment(thread, kind, pc, object, arg1);

  if (analyzers_.imbalance && thread.tid < max_threads_) {
    count_segments(thread, kind);
    // Spin waits are watched while the thread runs the program's code, not
    // while it waits at another synchronization point.
    if (waits_after_closing(kind))
      thread.spin.enabled = false;
    else if (resumes_section(kind))
      thread.spin.enabled = counting_.load(std::memory_order_relaxed);
  }
  // After the imbalance counts took the segment's weight and the watch its
  // state, which the path decides over.
  if (begins_segment) choose_access_path(thread);
  // A spin part closes the communication section only when its flag is a
  // team's (log_spin_part decides).
  if (closes_section(kind) && kind != SyncKind::SpinBarrier && kind != SyncKind::SpinRelease)
    close_communication_section(thread, pc, kind == SyncKind::ThreadExit);
}

void CaptureSession::begin_segment(ThreadContext& thread, SyncKind kind, uint64_t pc,
                                   uint64_t object, int64_t arg1) {
  const SampledSegments::Position at =
      sampled_segments_.begin(thread.sampling, kind, object, arg1, pc);
  if (auto* s = thread.traces.load(std::memory_order_relaxed))
    MemoryTraceRecorder::trace_segment(
        *s,
        SampledSegments::decide(at, analyzers_.traces->config().segment_sampling, false).analyzed);
  if (auto* s = thread.false_sharing.load(std::memory_order_relaxed)) {
    const SampledSegments::Decision d =
        SampledSegments::decide(at, analyzers_.false_sharing->config().segment_sampling, true);
    FalseSharingDetector::sample_segment(*s, d.analyzed, d.weight);
  }
  // The CRD, like false sharing, depends on what came before the instance
  // (each pair's latest granules): it traces the instance before each
  // counted one too.
  if (analyzers_.distances)
    if (CommunicationAnalyzer::ThreadState* s = thread.comm.load(std::memory_order_relaxed)) {
      const SampledSegments::Decision d =
          SampledSegments::decide(at, analyzers_.distances->config().segment_sampling, true);
      communication().sample_crd_segment(*s, d.analyzed, d.weight, at.ordinal, at.previous);
    }
  // The imbalance counts learn it for the segment their next close or resume
  // begins (count_segments runs after this).
  if (ImbalanceCounts* imbalance = analyzers_.imbalance; imbalance && thread.tid < max_threads_)
    if (ImbalanceCounts::ThreadState* s = imbalance->attach(thread.tid)) {
      const SampledSegments::Decision d =
          SampledSegments::decide(at, imbalance->config().segment_sampling, false);
      ImbalanceCounts::weigh_next_segment(*s, d.weight);
      if (!at.unkeyed && SampledSegments::next_counted(at, imbalance->config().segment_sampling)) {
        // A key's first pass has no period yet; a loop run once stops
        // warming after as many segments.
        const uint32_t period = at.ordinal > at.previous ? at.ordinal - at.previous : kFirstWarmUp;
        thread.cache_warm_until =
            std::max(thread.cache_warm_until, at.ordinal + period + period / 2);
      }
    }
  // A segment every sampled part skips costs communication, the watch and
  // the simulated caches alone per access: one flag, instead of a test in
  // each part's state.
  const auto skips = [](const auto* s) { return s == nullptr || s->paused; };
  thread.only_watched = skips(thread.false_sharing.load(std::memory_order_relaxed)) &&
                        skips(thread.traces.load(std::memory_order_relaxed)) &&
                        thread.page_usage.load(std::memory_order_relaxed) == nullptr &&
                        thread.reuse.load(std::memory_order_relaxed) == nullptr;
}

void CaptureSession::choose_access_path(ThreadContext& thread) {
  // The watch is needed wherever a spin wait could be: once the run has
  // taught weft a flag, in every segment (a thread running communication
  // alone would not see its team's barrier end).
  const ImbalanceCounts::ThreadState* counts = thread.imbalance.load(std::memory_order_relaxed);
  const bool imbalance_idle =
      !analyzers_.imbalance || (counts != nullptr && counts->memory_weight == 0 &&
                                thread.sampling.ordinal > thread.cache_warm_until &&
                                !spin_flags_.any_flag.load(std::memory_order_relaxed));
  const bool counting = counting_.load(std::memory_order_relaxed);
  const bool alone = thread.communication_alone_path != nullptr && thread.only_watched &&
                     imbalance_idle && thread.tid < max_threads_ && counting;
  if (alone != thread.communication_alone && analyzers_.imbalance)
    thread.spin.enabled = !alone && counting;
  thread.communication_alone = alone;
  thread.communication_alone_segments += alone ? 1 : 0;
  if (thread.communication_alone_path)
    *thread.communication_alone_path =
        alone ? thread.comm.load(std::memory_order_relaxed) : nullptr;
}

void CaptureSession::close_communication_section(ThreadContext& thread, uint64_t pc,
                                                 bool thread_exit) {
  CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed);
  if (!state) return;
  uint64_t site = pc != 0 ? pc : kUnknownSectionSite;
  if (thread_exit) site = SectionAttribution::kThreadExitSite;
  communication().close_section(*state, site);
}

bool CaptureSession::log_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns, uint64_t pc,
                              uint64_t object, int64_t arg0, int64_t arg1) {
  SyncLog& log = thread.sync;
  if (log.size >= log.capacity && !grow_exited_log(log)) {
    ++log.dropped;
    return false;
  }
  SyncRecord& r = log.records[log.size];
  r.thread = thread.tid;
  r.kind = kind;
  r.time_ns = time_ns;
  r.pc = pc;
  r.object = object;
  r.arg0 = arg0;
  r.arg1 = arg1;
  std::atomic_signal_fence(std::memory_order_release);
  ++log.size;
  return true;
}

// An exited thread's log is full at its size: a record after the exit (a
// later key destructor's lock) moves it into a packed block of twice the
// size. The old block stays where it is (a writer may be reading it).
bool CaptureSession::grow_exited_log(SyncLog& log) {
  if (log.capacity == SyncLog::kCapacity || !log.records) return false;
  const uint64_t capacity = log.capacity * 2 + 4;
  auto* grown = static_cast<SyncRecord*>(reserve_packed(capacity * sizeof(SyncRecord)));
  if (!grown) return false;
  memcpy(grown, log.records, log.size * sizeof(SyncRecord));
  std::atomic_signal_fence(std::memory_order_release);
  log.records = grown;
  log.capacity = capacity;
  return true;
}

namespace {

uint32_t cv_slot(uint64_t cv, uint32_t size) {
  return static_cast<uint32_t>((cv >> 3) * 0x9E3779B97F4A7C15ull >> 40) & (size - 1);
}

}  // namespace

bool CaptureSession::cv_may_be_barrier(uint64_t cv) {
  for (uint32_t i = 0, k = cv_slot(cv, kRefusedCvs); i < kRefusedCvs;
       ++i, k = (k + 1) & (kRefusedCvs - 1)) {
    const uint64_t refused = refused_cvs_[k].load(std::memory_order_relaxed);
    if (refused == cv) return false;
    if (refused == 0) return true;
  }
  return false;  // the table is full: refuse
}

bool CaptureSession::refuse_cv(uint64_t cv) {
  for (uint32_t i = 0, k = cv_slot(cv, kRefusedCvs); i < kRefusedCvs;
       ++i, k = (k + 1) & (kRefusedCvs - 1)) {
    const uint64_t refused = refused_cvs_[k].load(std::memory_order_relaxed);
    if (refused == cv) return false;
    if (refused == 0) {
      refused_cvs_[k].store(cv, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

bool CaptureSession::is_barrier_mutex(uint64_t mutex) const {
  for (const std::atomic<uint64_t>& m : barrier_mutexes_) {
    const uint64_t known = m.load(std::memory_order_relaxed);
    if (known == mutex) return true;
    if (known == 0) return false;
  }
  return false;
}

void CaptureSession::add_barrier_mutex(uint64_t mutex) {  // under cond_lock_
  for (std::atomic<uint64_t>& m : barrier_mutexes_) {
    const uint64_t known = m.load(std::memory_order_relaxed);
    if (known == mutex) return;
    if (known == 0) {
      m.store(mutex, std::memory_order_relaxed);
      return;
    }
  }
}

// docs/metrics.md, "Parallel section": a release (broadcast or signal) on a
// condvar ends a barrier episode when every other live thread that is not
// blocked in a join nor forking (its last event a create) waits on that
// condvar, not yet released (a created thread not started yet has not), and
// they are
// two or more (with one, a barrier looks like a hand-over); the releaser
// arrived at its lock (or at the release), each waiter at its lock before
// its first wait of the sequence. A waiter's part is logged when it leaves
// its wait released (a wait loop's extra waits belong to the same part), the
// releaser's at the release. A release that ends no episode (a queue's
// signal, a subset of the threads waiting) refuses its condvar for the rest
// of the run; that release is logged beyond the cap, so the profile builder
// knows to form no instance from the condvar's earlier episodes.
int64_t CaptureSession::follow_conditions(ThreadContext& thread, SyncKind kind, uint64_t time_ns,
                                          uint64_t pc, uint64_t object, int64_t arg0,
                                          bool& force_log) {
  CondThreadState& me = thread.cond;
  // The thread resumes at its first event after its part (its unlock at
  // the end of the barrier's code).
  if (me.resume_cv != 0) {
    const uint64_t cv = me.resume_cv;
    me.resume_cv = 0;
    me.detached_at = 0;
    record_sync(thread, SyncKind::CondBarrierLeave, time_ns, pc, cv);
  }
  if (me.forking && kind != SyncKind::ThreadCreate) {
    ColdLock guard(cond_lock_);
    me.forking = false;
  }
  switch (kind) {
    case SyncKind::MutexLock:
      cond_lock_taken(thread, time_ns, pc, object);
      break;
    case SyncKind::MutexUnlock:
      cond_lock_released(thread, object);
      break;
    case SyncKind::CondWaitEnter:
      // A refused condvar (a queue's) forms no episode: its waiters need no
      // bookkeeping, and take no lock (the cost of a busy queue). A thread
      // that spun first waits in a spin-then-block barrier: the flag it
      // spun on makes the episode, not the condvar (the Valgrind source
      // sees the call's own stack writes end the spin before the wait).
      if (me.in_barrier || thread.spin.spinning || thread.spin.unreleased_flag != 0 ||
          !cv_may_be_barrier(object))
        break;
      cond_wait_entered(me, time_ns, pc, object, arg0);
      return 0;
    case SyncKind::CondWaitLeave:
      if (me.in_barrier || thread.spin.spinning || me.cv != object) break;
      cond_wait_left(thread, time_ns, object);
      return 0;
    case SyncKind::CondSignal:
    case SyncKind::CondBroadcast:
      if (me.in_barrier) return 0;
      if (!cv_may_be_barrier(object)) {
        force_log = spin_flag_wake_up(thread);  // one per release, like the release itself
        return force_log ? kSpinFlagWakeUp : 0;
      }
      return cond_released(thread, time_ns, pc, object, force_log);
    default:
      cond_thread_event(me, kind, arg0);
      break;
  }
  // Anything else between two waits (a lock, an unlock, ...) ends the
  // thread's wait sequence: a wait loop re-locks inside the wait.
  if (me.cv != 0) {
    ColdLock guard(cond_lock_);
    me.cv = 0;
    me.waiting = false;
    me.released_episode = 0;
  }
  return 0;
}

void CaptureSession::cond_lock_taken(ThreadContext& thread, uint64_t time_ns, uint64_t pc,
                                     uint64_t mutex) {
  CondThreadState& me = thread.cond;
  me.held_mutex = mutex;
  me.lock_pc = pc;
  me.lock_ns = time_ns;
  // The lock of a known barrier's mutex is an arrival: the barrier's own
  // code after it is not the section's work.
  if (analyzers_.imbalance && me.detached_at == 0 && is_barrier_mutex(mutex)) {
    me.detached_at = mutex;
    thread.imbalance.store(nullptr, std::memory_order_relaxed);
  }
}

void CaptureSession::cond_lock_released(ThreadContext& thread, uint64_t mutex) {
  CondThreadState& me = thread.cond;
  if (me.held_mutex == mutex) me.held_mutex = 0;
  me.release_cv = 0;
  if (me.detached_at == mutex) {  // the lock led to no part: count again
    me.detached_at = 0;
    if (counting_.load(std::memory_order_relaxed))
      thread.imbalance.store(analyzers_.imbalance->attach(thread.tid), std::memory_order_relaxed);
  }
}

void CaptureSession::cond_wait_entered(CondThreadState& me, uint64_t time_ns, uint64_t pc,
                                       uint64_t cv, int64_t mutex) {
  ColdLock guard(cond_lock_);
  if (me.cv != cv) {  // a new sequence: the thread arrives
    const bool locked = me.held_mutex != 0 && me.held_mutex == static_cast<uint64_t>(mutex);
    me.cv = cv;
    me.wait_mutex = static_cast<uint64_t>(mutex);
    me.arrival_pc = locked ? me.lock_pc : pc;
    me.arrival_ns = locked ? me.lock_ns : time_ns;
    me.released_episode = 0;
  }
  me.waiting = true;
}

// A waiter's part is logged when it leaves its wait released.
void CaptureSession::cond_wait_left(ThreadContext& thread, uint64_t time_ns, uint64_t cv) {
  CondThreadState& me = thread.cond;
  uint64_t episode = 0, site = 0, arrival = 0;
  {
    ColdLock guard(cond_lock_);
    me.waiting = false;
    if (me.released_episode == 0) return;  // not released: it may wait again
    episode = me.released_episode;
    site = me.arrival_pc;
    arrival = me.arrival_ns;
    me.cv = 0;
    me.released_episode = 0;
  }
  record_sync(thread, SyncKind::CondBarrier, time_ns, site, cv, static_cast<int64_t>(arrival),
              static_cast<int64_t>(episode));
  me.resume_cv = cv;
}

bool CaptureSession::spin_flag_wake_up(const ThreadContext& thread) {
  const SyncLog& log = thread.sync;
  return log.size != 0 && log.records[log.size - 1].kind == SyncKind::SpinRelease;
}

// A signal or broadcast: an episode when every other live thread of the team
// waits on `cv`, unreleased; the releaser's part is logged here. Right after
// the thread released a learned spin flag (a spin-then-block barrier), the
// flag's release is the episode and the condvar only wakes those who
// blocked: neither an episode nor a refusal (kSpinFlagWakeUp).
int64_t CaptureSession::cond_released(ThreadContext& thread, uint64_t time_ns, uint64_t pc,
                                      uint64_t cv, bool& force_log) {
  CondThreadState& me = thread.cond;
  if (spin_flag_wake_up(thread)) {
    force_log = true;
    return kSpinFlagWakeUp;
  }
  uint64_t episode = 0;
  {
    ColdLock guard(cond_lock_);
    if (!cv_may_be_barrier(cv)) return 0;
    uint32_t waiters = 0;
    const bool everyone = everyone_else_waits(thread, cv, waiters);
    if (everyone && waiters >= 2) {
      episode = ++cond_episodes_;
      const uint32_t n = recorded_threads();
      for (uint32_t i = 0; i < n; ++i)
        if (ThreadContext* other = contexts_[i].load();
            other && other != &thread && other->cond.cv == cv && other->cond.waiting) {
          other->cond.released_episode = episode;
          if (other->cond.wait_mutex != 0) add_barrier_mutex(other->cond.wait_mutex);
        }
      if (me.held_mutex != 0) add_barrier_mutex(me.held_mutex);
    } else if (waiters == 0 && me.release_cv == cv) {
      return static_cast<int64_t>(me.release_episode);  // a further signal of its release
    } else {
      force_log = refuse_cv(cv);
      return 0;
    }
  }
  me.release_cv = cv;
  me.release_episode = episode;
  const bool locked = me.held_mutex != 0;
  record_sync(thread, SyncKind::CondBarrier, time_ns, locked ? me.lock_pc : pc, cv,
              static_cast<int64_t>(locked ? me.lock_ns : time_ns), static_cast<int64_t>(episode));
  me.resume_cv = cv;
  return static_cast<int64_t>(episode);
}

// Under cond_lock_: whether every live thread but `thread` (not exited, not
// joining, not forking) waits on `cv` unreleased, counting them in `waiters`.
// A thread created but not started yet has not arrived.
bool CaptureSession::everyone_else_waits(const ThreadContext& thread, uint64_t cv,
                                         uint32_t& waiters) const {
  const uint32_t n = recorded_threads();
  const uint32_t created = cond_created_ < max_threads_ ? cond_created_ : max_threads_;
  for (uint32_t i = 0; i < (n > created ? n : created); ++i) {
    const ThreadContext* other = i < n ? contexts_[i].load() : nullptr;
    if (!other) {
      if (i < created) return false;
      continue;
    }
    const CondThreadState& o = other->cond;
    if (other == &thread || o.exited || o.in_join || o.forking) continue;
    if (o.cv != cv || !o.waiting || o.released_episode != 0) return false;
    ++waiters;
  }
  return true;
}

// Barriers of other kinds, joins, creates and exits: who is in the team.
void CaptureSession::cond_thread_event(CondThreadState& me, SyncKind kind, int64_t arg0) {
  switch (kind) {
    case SyncKind::BarrierEnter:
    case SyncKind::OmpBarrierEnter:
      me.in_barrier = true;
      return;
    case SyncKind::BarrierLeave:
    case SyncKind::OmpBarrierLeave:
      me.in_barrier = false;
      return;
    case SyncKind::ThreadJoinEnter:
    case SyncKind::ThreadCreate:
    case SyncKind::ThreadJoin:
    case SyncKind::ThreadExit:
      break;
    default:
      return;  // no lock for the others (OpenMP chunks are frequent)
  }
  ColdLock guard(cond_lock_);
  switch (kind) {
    case SyncKind::ThreadJoinEnter:
      me.in_join = true;
      me.forking = false;
      break;
    case SyncKind::ThreadCreate:
      me.forking = true;
      if (arg0 >= 0 && static_cast<uint64_t>(arg0) + 1 > cond_created_)
        cond_created_ = static_cast<uint32_t>(arg0 + 1);
      break;
    case SyncKind::ThreadJoin:
      me.in_join = false;
      break;
    case SyncKind::ThreadExit:
      me.exited = true;
      break;
    default:
      break;
  }
}

// Segment k of a thread ends at its k-th logged closing record. Between a
// closing point where the thread waits and the point where it resumes, its
// control flow and accesses (the barrier's or the thread pool's own code,
// under the binary source) are not counted: the thread is detached.
void CaptureSession::count_segments(ThreadContext& thread, SyncKind kind) {
  ImbalanceCounts* imbalance = analyzers_.imbalance;
  if (resumes_section(kind)) {
    if (counting_.load(std::memory_order_relaxed)) {
      ImbalanceCounts::ThreadState* t = imbalance->attach(thread.tid);
      if (t) ImbalanceCounts::resume_segment(*t);
      thread.imbalance.store(t, std::memory_order_relaxed);
    }
    return;
  }
  if (!closes_section(kind)) return;
  if (ImbalanceCounts::ThreadState* t = imbalance->attach(thread.tid)) imbalance->close_segment(*t);
  if (waits_after_closing(kind)) thread.imbalance.store(nullptr, std::memory_order_relaxed);
}

void CaptureSession::record_allocation(ThreadContext& thread, uint64_t pc, uint64_t address,
                                       uint64_t size) {
  if ((!analyzers_.false_sharing && !analyzers_.page_usage) ||
      !counting_.load(std::memory_order_relaxed))
    return;
  AllocationRecord r;
  r.address = address;
  r.size = size;
  r.pc = pc;
  r.thread = thread.tid;
  r.sequence = static_cast<uint32_t>(thread.allocations.size());
  thread.allocations.append(r);
}

void CaptureSession::release_memory(ThreadContext& thread, uint64_t address, uint64_t size) {
  // Busy like an access being counted, so that stop_counting waits for it.
  CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed);
  if (!state || state->busy || size == 0) return;
  state->busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  analyses_.for_each([&](const AnalysisDescriptor& d) {
    if (auto release = capture_of(d.id).release) release(analyzers_, address, address + size);
  });
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state->busy = 0;
}

void CaptureSession::stop_counting(bool wait) {
  counting_.store(false);
  for (uint32_t i = 0; i < max_threads_; ++i)
    if (ThreadContext* c = contexts_[i].load())
      analyses_.for_each([&](const AnalysisDescriptor& d) {
        if (auto detach = capture_of(d.id).detach) detach(*c);
      });
  if (wait)
    for (int spin = 0; spin < 1000 && communication().any_thread_busy(); ++spin) usleep(50);
}

uint32_t CaptureSession::recorded_threads() const {
  const uint32_t thread_count = next_tid_.load();
  return thread_count < max_threads_ ? thread_count : max_threads_;
}

void CaptureSession::write_meta(RawWriter& out, bool complete, const char* reason) {
  const uint32_t thread_count = next_tid_.load();
  if (thread_count > max_threads_) {
    static constexpr char kBeyond[] =
        "the program created more threads than --max-threads allows; "
        "threads beyond the limit were not analyzed";
    // After the source's own reason, if any (static: no allocation here).
    static char both[1024];
    size_t n = complete || !reason ? 0 : strnlen(reason, sizeof both - sizeof kBeyond - 2);
    if (n) {
      memcpy(both, reason, n);
      memcpy(both + n, "; ", 2);
      n += 2;
    }
    memcpy(both + n, kBeyond, sizeof kBeyond);
    reason = both;
    complete = false;
  }
  RawMeta meta;
  meta.complete = complete ? 1 : 0;
  meta.granularity = analyzers_.communication->config().granularity;
  meta.max_threads = max_threads_;
  meta.thread_count = thread_count;
  meta.analyses = analyses_.bits();
  analyses_.for_each([&](const AnalysisDescriptor& d) {
    meta.dropped_events += capture_of(d.id).dropped(analyzers_);
  });
  const uint32_t recorded = recorded_threads();
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) {
      meta.dropped_sync_events += c->sync.dropped;
      meta.unlogged_mutex_events += c->sync.unlogged_mutex_events;
      meta.communication_alone_segments += c->communication_alone_segments;
    }
  out.section(RawSection::Meta, sizeof meta, 1);
  out.bytes(&meta, sizeof meta);
  out.section(RawSection::Reason, 1, strlen(reason));
  out.text(reason);
}

// Threads, in id order; a thread still running has end_ns = 0.
void CaptureSession::write_threads(RawWriter& out) {
  const uint32_t recorded = recorded_threads();
  uint64_t live = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) {
      threads_[i].basic_blocks = c->basic_blocks;
      ++live;
    }
  out.section(RawSection::Threads, sizeof(ThreadRecord), live);
  for (uint32_t i = 0; i < recorded; ++i)
    if (contexts_[i].load()) out.bytes(&threads_[i], sizeof(ThreadRecord));
}

void CaptureSession::write_sync(RawWriter& out) {
  const uint32_t recorded = recorded_threads();
  uint64_t total = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) total += c->sync.size;
  out.section(RawSection::Sync, sizeof(SyncRecord), total);
  uint64_t written = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load())
      for (uint64_t k = 0; k < c->sync.size && written < total; ++k, ++written)
        out.bytes(&c->sync.records[k], sizeof(SyncRecord));
}

void CaptureSession::write(int fd, bool complete, const char* reason, const char* maps,
                           size_t maps_size) {
  // Sections still open end with the program (or with their thread, which
  // the profile resolves to its join when there was one).
  for (uint32_t i = 0; i < max_threads_; ++i)
    if (contexts_[i].load())
      if (CommunicationAnalyzer::ThreadState* state = communication().attach(i))
        communication().close_section(*state, SectionAttribution::kThreadExitSite);

  // Static: a 64 KiB buffer is too much for a signal handler's stack.
  alignas(RawWriter) static char writer_memory[sizeof(RawWriter)];
  RawWriter& out = *new (writer_memory) RawWriter(fd);
  out.bytes(kRawCaptureMagic, sizeof kRawCaptureMagic);
  write_meta(out, complete, reason);
  write_threads(out);
  analyses_.for_each([&](const AnalysisDescriptor& d) {
    const AnalysisCapture& capture = capture_of(d.id);
    // Static, like the writer: off the signal handler's stack.
    alignas(ValueLines) static char lines_memory[sizeof(ValueLines)];
    ValueLines& lines = *new (lines_memory) ValueLines;
    if (capture.values) capture.values(analyzers_, lines);
    // What the analysis could not account, under its own name, so that
    // weft record can say which analysis lost data (meta dropped_events is
    // the sum).
    if (const uint64_t dropped = capture.dropped(analyzers_); dropped != 0) {
      char key[64] = "dropped.";
      const size_t n = d.name.size() < sizeof key - 9 ? d.name.size() : sizeof key - 9;
      memcpy(key + 8, d.name.data(), n);
      key[8 + n] = '\0';
      lines.number(key, dropped);
    }
    if (lines.size() != 0) {
      out.section(RawSection::AnalysisValues, 1, lines.size());
      out.bytes(lines.data(), lines.size());
    }
    capture.write_sections(*this, out);
  });
  write_sync(out);
  if (maps) {
    out.section(RawSection::ProcessMaps, 1, maps_size);
    out.bytes(maps, maps_size);
  } else {
    write_own_process_maps(out);
  }
  out.section(RawSection::End, 0, 0);
  out.flush();
  out.~RawWriter();
}

}  // namespace weft
