// The recognition of spin waits (docs/metrics.md, "Spin waits"): the cold
// paths of CaptureSession::watch_access.
//
// A thread spins when it reads one address kSpinReads times with no write of
// its own in between; from then on it waits, not works: what it does after
// each read of the address is held back (ImbalanceCounts::hold). The wait
// ends at the thread's next access outside the loop; it was a wait on a flag
// when one of its reads saw another thread's write it had not read (the
// communication shadow's raw event), and the address becomes a learned flag.
// From then on any read of the flag starts a wait, and any write of it is a
// release, numbered per flag. Every wait and every release of a learned flag
// is logged (SpinBarrier, SpinRelease) and
// closes the thread's segment: whether the flag is a team's barrier or a
// flag between two threads is decided by the profile builder, from all of
// its records, so that the episodes before two waiters were seen together
// count too.
#include "sources/capture/capture_session.h"

namespace weft {

uint64_t CaptureSession::spin_now() const {
  if (clock_) return clock_();
  return latest_sync_ns_.load(std::memory_order_relaxed);
}

bool CaptureSession::saw_other_write(ThreadContext& thread, uint64_t addr) {
  CommunicationAnalyzer::ThreadState* comm = thread.comm.load(std::memory_order_relaxed);
  return comm && communication().unread_writer(*comm, addr) >= 0;
}

// The watch looks at the shadow before the communication analyzer counts
// the same read, and the two are not one atomic step: a release that lands
// between them (the releaser's hook runs, then its store) is counted as
// read, while the value this read loaded is the old one. The next read
// loads the new value and finds the write read already: without the
// writer's change, every waiter that took the release that way left its
// spin without learning the flag (a whole first episode lost, about one
// run in 300 of md_cells_spin_barrier_pthreads with four recordings at
// once). From the watch's second read on, a writer tag that changed to
// another thread's since the previous read is such a release.
bool CaptureSession::saw_new_write(ThreadContext& thread) {
  CommunicationAnalyzer::ThreadState* comm = thread.comm.load(std::memory_order_relaxed);
  if (!comm) return false;
  SpinWatch& w = thread.spin;
  uint64_t writer_tag = 0;
  const bool unread = communication().unread_writer(*comm, w.addr, &writer_tag) >= 0;
  const bool changed = w.reads > 2 && writer_tag != w.seen_writer_tag && writer_tag != 0 &&
                       writer_tag != comm->writer_tag;
  w.seen_writer_tag = writer_tag;
  return unread || changed;
}

void CaptureSession::watch_repeated(ThreadContext& thread, uint64_t pc) {
  SpinWatch& w = thread.spin;
  w.pc = pc;
  ++w.reads;
  w.between = 0;
  w.saw_release |= saw_new_write(thread);
  if (w.spinning)
    hold_spin_tail(thread);  // the loop went round once more: its events were the wait's
  else if (w.reads >= SpinWatch::kSpinReads)
    start_spinning(thread);
}

// While the thread spins it stays attached, but what it does after its
// latest read of the watched address is held back (ImbalanceCounts::hold):
// the spin loop's own blocks when it reads again (they are discarded), the
// next segment's first work when that read ended the wait (watch_ended adds
// them after closing the segment). Re-attaching only where the watch ends
// would lose the blocks between the last read and the next accesses
// elsewhere, for the waiters and not for the releaser.
void CaptureSession::hold_spin_tail(ThreadContext& thread) {
  if (ImbalanceCounts::ThreadState* counts = thread.imbalance.load(std::memory_order_relaxed))
    ImbalanceCounts::hold(*counts);
}

void CaptureSession::start_spinning(ThreadContext& thread) {
  SpinWatch& w = thread.spin;
  w.spinning = true;
  w.arrival_ns = spin_now();
  hold_spin_tail(thread);
}

// The spin's arrival stays: the wait began where the thread first spun,
// before it blocked. Under the binary source the thread's own writes on the
// way to the block (the calls' return addresses) ended the spin; under the
// compile-time source, which does not see them, the re-read continues it.
void CaptureSession::resume_spinning(ThreadContext& thread) {
  thread.spin.spinning = true;
  hold_spin_tail(thread);
}

// The held events go to the open segment: the next one's when the wait was
// logged (it closed the segment), the same one's otherwise. The thread's
// state, not its attached pointer: a barrier mutex may detach the thread
// while it holds events (a spin-then-block barrier's waiter locks it).
void CaptureSession::stop_spinning(ThreadContext& thread) {
  SpinWatch& w = thread.spin;
  if (!w.spinning) return;
  w.spinning = false;
  if (ImbalanceCounts::ThreadState* counts = analyzers_.imbalance->attach(thread.tid))
    analyzers_.imbalance->release_held(*counts);
}

// The watch ends: the thread left the loop (`written` is the address it
// writes, 0 for a read elsewhere); not a wait when the thread writes the
// watched address itself (a read-modify-write of a flag, which flag_written
// takes as a release). On a learned flag, a wait when the flag had a
// release the thread had not taken part in yet; else (learning) when one of
// its reads saw another thread's write (the loop then ran until the value
// it waited for came: counter barriers change the flag once per arrival).
void CaptureSession::watch_ended(ThreadContext& thread, uint64_t written) {
  SpinWatch& w = thread.spin;
  if (written != w.addr) {
    SpinFlag* flag = nullptr;
    uint64_t release = 0;
    if (w.known_flag) {
      flag = spin_flags_.find(w.addr);
      if (flag && !w.take_release(w.addr, release = flag->releases.load(std::memory_order_acquire)))
        flag = nullptr;
    } else if ((w.reads >= SpinWatch::kSpinReads || w.addr == w.unreleased_flag) && w.saw_release) {
      ColdLock lock(cond_lock_);
      flag = spin_flags_.add(w.addr);
      if (flag) {
        release = flag->releases.load(std::memory_order_acquire);
        w.take_release(w.addr, release);
      }
    }
    if (flag)
      spin_wait_ended(thread, *flag, release);
    else if (w.spinning) {
      w.unreleased_flag = w.addr;  // it stopped spinning unreleased: it may block next
      w.unreleased_reads = 0;
    }
  }
  stop_spinning(thread);  // after the wait's part closed the segment
  w.reads = 0;
  w.known_flag = false;
  w.saw_release = false;
}

// A wait on `flag` ended by its release `release`: logged as the thread's
// part in that release. The run's own view of whether the flag is a team's
// (two waiters of one release) is kept for what cannot wait for the profile
// builder.
void CaptureSession::spin_wait_ended(ThreadContext& thread, SpinFlag& flag, uint64_t release) {
  SpinWatch& w = thread.spin;
  {
    ColdLock lock(cond_lock_);
    if (flag.counted_release != release) {
      flag.counted_release = release;
      flag.waiters = 0;
    }
    if (++flag.waiters >= 2) flag.team.store(true, std::memory_order_relaxed);
  }
  log_spin_part(thread, flag, SyncKind::SpinBarrier, w.pc, w.arrival_ns, release);
}

void CaptureSession::flag_written(ThreadContext& thread, uint64_t pc, uint64_t addr) {
  SpinFlag* flag = spin_flags_.find(addr);
  if (!flag) return;
  const uint64_t release = flag->releases.fetch_add(1, std::memory_order_acq_rel) + 1;
  thread.spin.take_release(addr, release);
  // A mutex held while releasing a team's flag guards the barrier's own code
  // (a spin-then-block barrier's counter): like a condvar barrier's, locking
  // it detaches the thread from the counts until the unlock.
  if (const uint64_t held = thread.cond.held_mutex;
      held != 0 && flag->team.load(std::memory_order_relaxed) && !is_barrier_mutex(held)) {
    ColdLock lock(cond_lock_);
    add_barrier_mutex(held);
  }
  log_spin_part(thread, *flag, SyncKind::SpinRelease, pc, spin_now(), release);
  thread.spin.joinable_flag = addr;
}

void CaptureSession::flag_read(ThreadContext& thread) {
  SpinWatch& w = thread.spin;
  if (!spin_flags_.find(w.addr)) return;
  w.known_flag = true;
  w.saw_release |= saw_other_write(thread, w.addr);
  start_spinning(thread);
}

// The thread's part in release `release` of the flag: a wait (SpinBarrier)
// or the releasing write (SpinRelease). Right after its own releasing write
// of the same flag, with no other access in between (a counter barrier's
// thread writes the flag, then waits on it), its wait or write joins that
// part instead: the part's release becomes the later one, and a wait makes
// it a wait. A part closes the communication section too while the flag is
// a team's as far as the run has seen.
void CaptureSession::log_spin_part(ThreadContext& thread, const SpinFlag& flag, SyncKind kind,
                                   uint64_t pc, uint64_t arrival_ns, uint64_t release) {
  SpinWatch& w = thread.spin;
  const uint64_t flag_addr = flag.addr.load(std::memory_order_relaxed);
  SyncLog& log = thread.sync;
  if (w.joinable_flag == flag_addr && w.part_record + 1 == log.size) {
    SyncRecord& part = log.records[w.part_record];
    part.arg1 = static_cast<int64_t>(release);
    if (kind == SyncKind::SpinBarrier) part.kind = kind;
    return;
  }
  w.unreleased_flag = 0;
  record_sync(thread, kind, spin_now(), pc, flag_addr, static_cast<int64_t>(arrival_ns),
              static_cast<int64_t>(release));
  const bool logged = log.size != 0 && log.records[log.size - 1].kind == kind;
  w.part_record = logged ? log.size - 1 : ~uint64_t{0};
  if (logged && flag.team.load(std::memory_order_relaxed)) close_communication_section(thread, pc);
}

void CaptureSession::end_watch(ThreadContext& thread) {
  SpinWatch& w = thread.spin;
  if (w.spinning || w.known_flag) watch_ended(thread, 0);
  w.reads = 0;
}

}  // namespace weft
