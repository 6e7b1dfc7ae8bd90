// SectionAttribution: communication counts and CRD distances per parallel
// section (docs/metrics.md, "Parallel section"): the code a thread runs between two
// consecutive synchronization points (barrier, create, join, the end of an
// OpenMP region, its own exit). A section is identified by the site that
// closes it, which is only known at its end, so each thread accumulates the
// current section's events in small per-peer tables and merges them into
// totals keyed by the closing site when the section closes.
//
// The totals reuse the per-instruction record types with the closing site in
// place of the instruction: (site, peer) -> raw/rar/inval, and
// (site, writer, distance) -> events. Sections are a second, time-based
// partition of the same events as the code regions.
#pragma once

#include <atomic>
#include <cstdint>

#include "analyzers/communication/pc_peer_counters.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/state/per_thread_slot.h"
#include "common/run_capture.h"

namespace weft {

class SectionAttribution {
 public:
  // Site of a section closed by its thread's exit: resolved after the run to
  // the join that waited for the thread, when there is one.
  static constexpr uint64_t kThreadExitSite = kThreadExitSectionSite;
  static constexpr uint64_t kOpen = 1;

  struct ThreadState {
    uint32_t tid = 0;
    // The open section's events, keyed with pc = kOpen (keys must not be 0):
    // per peer, and per peer and distance, looked up on the communication
    // analyzer's slow path only (its reuse memo holds the entries of
    // repeated reuses), so a few recent entries do.
    PagedHashTable<PcPeerCounts, 16> open_counts;
    PagedHashTable<PcWriterDistanceCount, kFewRecentEntries> open_distances;
    // By closing site (looked up when a section closes).
    PagedHashTable<PcPeerCounts, kFewRecentEntries> counts;
    PagedHashTable<PcWriterDistanceCount, kFewRecentEntries> distances;
    uint64_t dropped = 0;
  };

  explicit SectionAttribution(unsigned max_threads);
  ~SectionAttribution();
  SectionAttribution(const SectionAttribution&) = delete;
  SectionAttribution& operator=(const SectionAttribution&) = delete;

  ThreadState* attach(uint32_t tid);

  // The thread exited (its last section closed): its open tables go, its
  // totals move into packed memory of their size.
  static void finish_thread(ThreadState& t) {
    t.open_counts.shrink_to_fit();
    t.open_distances.shrink_to_fit();
    t.counts.shrink_to_fit();
    t.distances.shrink_to_fit();
  }

  // One counted event of the open section; `distance` is the event's CRD of
  // lines and `word_distance` of the sampled word trace, each
  // PairReuseTrace::kFirstEvent when it has none (or CRD is off); the
  // distances stand for `weight` events (a sampled CRD's; 0: none).
  void on_event(ThreadState& t, uint32_t peer, CommunicationEvent what, uint64_t distance,
                uint64_t word_distance = PairReuseTrace::kFirstEvent, uint64_t weight = 1) {
    PcPeerCounts* c = t.open_counts.find_or_insert(PcPeerCounts::make_key(kOpen, peer));
    if (!c) {
      ++t.dropped;
      return;
    }
    c->count(what);
    count_distance(t, peer, distance, 0, weight);
    count_distance(t, peer, word_distance, kWordDistance, weight);
  }

  // The open section's reuse count of `peer` and its count of events from
  // `peer` at `distance` (created at 0 if absent), for a caller that counts
  // a repeat of an event just recorded; nullptr when out of memory. Valid
  // while open_generation(t) is unchanged.
  uint64_t* open_reuse_count(ThreadState& t, uint32_t peer) {
    PcPeerCounts* c = t.open_counts.find_or_insert(PcPeerCounts::make_key(kOpen, peer));
    return c ? &c->rar : nullptr;
  }
  uint64_t* open_distance_count(ThreadState& t, uint32_t peer, uint64_t distance) {
    PcWriterDistanceCount* d = t.open_distances.find_or_insert({(kOpen << 16) | peer, distance});
    return d ? &d->count : nullptr;
  }

  // Changes whenever the pointers open_reuse_count and open_distance_count
  // returned may have moved (their tables grew, or a section closed).
  uint64_t open_generation(const ThreadState& t) const {
    return t.open_counts.generation() + t.open_distances.generation();
  }

  // Closes the open section at `site` (a pc, or kThreadExitSite).
  void close(ThreadState& t, uint64_t site);

  // Visits totals: `pc` is the closing site. Call when no thread updates.
  template <class Visitor>
  void for_each_count(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) {
      t.counts.for_each([&](const PcPeerCounts& c) { visit(t.tid, c); });
    });
  }
  template <class Visitor>
  void for_each_distance(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) {
      // A count the memo made ready and never used, or only a warm-up
      // instance's events (weight 0), stays 0: no row.
      t.distances.for_each([&](const PcWriterDistanceCount& d) {
        if (d.count != 0) visit(t.tid, d);
      });
    });
  }

  uint64_t dropped() const;

 private:
  void count_distance(ThreadState& t, uint32_t peer, uint64_t distance, uint64_t unit,
                      uint64_t weight) {
    if (distance == PairReuseTrace::kFirstEvent || distance == PairReuseTrace::kOutOfMemory ||
        weight == 0)  // a warm-up instance's event (CommunicationReuseDistance::sample_segment)
      return;
    if (distance != PairReuseTrace::kUnmeasured) distance |= unit;
    if (PcWriterDistanceCount* d =
            t.open_distances.find_or_insert({(kOpen << 16) | peer, distance}))
      d->count += weight;
    else
      ++t.dropped;
  }

  template <class Visitor>
  void for_each_thread(Visitor&& visit) const {
    threads_.for_each(visit);
  }

  PerThreadStates<ThreadState> threads_;
};

}  // namespace weft
