#include "analyzers/crd/communication_reuse_distance.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <new>

#include "analyzers/state/page_memory.h"
#include "analyzers/state/per_thread_slot.h"

namespace weft {

PairReuseTrace::~PairReuseTrace() {
  release_slots();
  release(recent_, sizeof(RecentGranules));
}

PairReuseTrace::RecentGranules* PairReuseTrace::recent_or_made() {
  if (__builtin_expect(recent_ == nullptr, 0))
    recent_ = static_cast<RecentGranules*>(reserve_packed(sizeof(RecentGranules)));
  return recent_;
}

void PairReuseTrace::release_slots() {
  release(tree_, (slots_ + 1) * sizeof(uint32_t));
  release(granule_at_, slots_ * sizeof(uint64_t));
  tree_ = nullptr;
  granule_at_ = nullptr;
}

size_t PairReuseTrace::memory_bytes() const {
  return (tree_ ? (slots_ + 1) * sizeof(uint32_t) + slots_ * sizeof(uint64_t) : 0) +
         last_time_.memory_bytes() + (recent_ ? sizeof(RecentGranules) : 0);
}

uint64_t PairReuseTrace::marks_through(uint64_t time) const {
  uint64_t sum = 0;
  for (uint64_t i = time + 1; i > 0; i &= i - 1) sum += tree_[i];
  return sum;
}

void PairReuseTrace::add_mark(uint64_t time, int32_t delta) {
  for (uint64_t i = time + 1; i <= slots_; i += i & (~i + 1))
    tree_[i] = static_cast<uint32_t>(static_cast<int64_t>(tree_[i]) + delta);
}

bool PairReuseTrace::compact() {
  const uint64_t new_slots = std::max(kInitialSlots, std::bit_ceil(2 * (distinct_ + 1)));
  // A pair whose distinct granules hold steady compacts into the arrays it
  // has: no mapping churn on every pass over its data.
  const bool in_place = tree_ != nullptr && new_slots == slots_;
  uint32_t* tree = tree_;
  uint64_t* granule_at = granule_at_;
  if (!in_place) {
    // A pair's first arrays are small: packed beside others' (a pair of a
    // few granules, as a short thread's are, costs their bytes, not pages).
    void* (*reserve)(size_t) = tree_ == nullptr ? reserve_packed : reserve_zeroed;
    tree = static_cast<uint32_t*>(reserve((new_slots + 1) * sizeof(uint32_t)));
    granule_at = static_cast<uint64_t*>(reserve(new_slots * sizeof(uint64_t)));
    if (!tree || !granule_at) {
      release(tree, (new_slots + 1) * sizeof(uint32_t));
      release(granule_at, new_slots * sizeof(uint64_t));
      return false;
    }
  }
  // Live marks keep their order; the distance of an event only depends on
  // the order of the marks, so renumbering changes no result. (In place,
  // `next` never passes `time`.) A segment's start, and the window's and
  // the run's, move to the first live mark at or after them.
  uint64_t next = 0;
  uint32_t start = starts_ > kSegmentStarts ? starts_ - kSegmentStarts : 0;
  uint32_t instance = instance_starts_ > kSegmentStarts ? instance_starts_ - kSegmentStarts : 0;
  uint64_t* const asked[] = {&window_time_, &run_time_};
  bool moved[std::size(asked)] = {};
  for (uint64_t time = 0; time < now_; ++time) {
    for (; start < starts_ && start_time_[start % kSegmentStarts] <= time; ++start)
      start_time_[start % kSegmentStarts] = static_cast<uint32_t>(next);
    for (; instance < instance_starts_ && instance_time_[instance % kSegmentStarts] <= time;
         ++instance)
      instance_time_[instance % kSegmentStarts] = static_cast<uint32_t>(next);
    for (size_t i = 0; i < std::size(asked); ++i)
      if (!moved[i] && *asked[i] <= time) {
        *asked[i] = next;
        moved[i] = true;
      }
    const uint64_t key = granule_at_[time];
    if (key == 0) continue;
    last_time_.find(key)->time = static_cast<uint32_t>(next);
    granule_at[next++] = key;
  }
  for (; start < starts_; ++start)
    start_time_[start % kSegmentStarts] = static_cast<uint32_t>(next);
  for (; instance < instance_starts_; ++instance)
    instance_time_[instance % kSegmentStarts] = static_cast<uint32_t>(next);
  for (size_t i = 0; i < std::size(asked); ++i)
    if (!moved[i]) *asked[i] = next;
  if (in_place) __builtin_memset(granule_at + next, 0, (slots_ - next) * sizeof(uint64_t));
  // Linear-time build: node i covers times (i - lowbit(i), i], all marked below `next`.
  for (uint64_t i = 1; i <= new_slots; ++i) {
    const uint64_t low = i - (i & (~i + 1));
    tree[i] = static_cast<uint32_t>(std::min(i, next) - std::min(low, next));
  }
  if (!in_place) {
    release_slots();
    tree_ = tree;
    granule_at_ = granule_at;
    slots_ = new_slots;
  }
  now_ = next;
  return true;
}

bool PairReuseTrace::drop_unmarked_entries() {
  last_key_ = 0;
  last_entry_ = nullptr;
  if (last_time_.retain_if([&](const GranuleTime& g) { return granule_at_[g.time] == g.key; }) &&
      compact())
    return true;
  // Out of memory: the pair stops measuring, as a capped one.
  capped_ = true;
  release_capped();
  return false;
}

void PairReuseTrace::release_capped() {
  if (!capped_ || released_) return;
  release_slots();
  last_time_.clear();
  last_entry_ = nullptr;
  released_ = true;
}

uint64_t PairReuseTrace::record(uint64_t granule) {
  if (capped_) {
    release_capped();
    return kUnmeasured;
  }
  const uint64_t key = granule + 1;
  // A repeat of the latest event's granule: distance 0, and moving its mark
  // one step later would change no later distance (no mark lies between).
  // The first event of a segment moves it all the same: the granule's time
  // tells which segment read it last.
  if (key == last_key_ && (starts_ == 0 || now_ > start_time_[(starts_ - 1) % kSegmentStarts])) {
    previous_time_ = now_ - 1;
    return 0;
  }
  if (now_ == slots_ && !compact()) return kOutOfMemory;
  GranuleTime* entry = last_time_.find(key);
  uint64_t distance = kFirstEvent;
  if (entry) {
    previous_time_ = entry->time;
    distance = distinct_ - marks_through(entry->time);
    granule_at_[entry->time] = 0;
    add_mark(entry->time, -1);
  } else {
    if ((max_granules_ != 0 && distinct_ >= max_granules_) || distinct_ >= kMaxDistinct) {
      // The pair's state stops here: later distances could not be exact.
      // Its epochs stay until release_capped(), for the owner to end them.
      capped_ = true;
      return kUnmeasured;
    }
    entry = last_time_.find_or_insert(key);
    if (!entry) return kOutOfMemory;
    ++distinct_;
  }
  entry->time = static_cast<uint32_t>(now_);
  last_key_ = key;
  last_entry_ = entry;
  granule_at_[now_] = key;
  add_mark(now_, +1);
  ++now_;
  return distance;
}

CommunicationReuseDistance::CommunicationReuseDistance(const CrdConfig& config)
    : config_(config),
      sample_budget_(config.sample_granules ? config.sample_granules : ~uint64_t{0}),
      readers_(static_cast<std::atomic<ReaderState*>*>(
          reserve_zeroed(config.max_threads * sizeof(std::atomic<ReaderState*>)))) {}

CommunicationReuseDistance::~CommunicationReuseDistance() {
  for (unsigned i = 0; i < config_.max_threads; ++i) {
    ReaderState* r = readers_[i].load();
    if (!r) continue;
    for (PairReuseTrace** pairs : {r->pairs, r->word_pairs, r->long_pairs}) {
      for (unsigned w = 0; w < r->pair_slots; ++w) {
        if (PairReuseTrace* pair = pairs[w]) {
          pair->~PairReuseTrace();
          release(pair, sizeof(PairReuseTrace));
        }
      }
    }
    r->~ReaderState();
    release(r, sizeof(ReaderState));
  }
  release(readers_, config_.max_threads * sizeof(std::atomic<ReaderState*>));
}

CommunicationReuseDistance::ReaderState* CommunicationReuseDistance::attach(uint32_t tid) {
  if (tid >= config_.max_threads || !readers_) return nullptr;
  return publish_once(readers_[tid], [&](ReaderState& fresh) {
    fresh.tid = tid;
    if (config_.long_sample_granules != 0) fresh.long_budget = config_.long_sample_granules;
    return true;
  });
}

bool CommunicationReuseDistance::grow_pairs(ReaderState& reader, uint32_t writer) {
  if (writer >= config_.max_threads) return false;
  const auto slots = std::min(config_.max_threads, std::max(8u, std::bit_ceil(writer + 1)));
  // One mapping for the three arrays: a page holds them for 170 writers.
  auto* all = static_cast<PairReuseTrace**>(reserve_zeroed(3 * slots * sizeof(PairReuseTrace*)));
  if (!all) return false;
  if (reader.pair_slots) {
    const size_t bytes = reader.pair_slots * sizeof(PairReuseTrace*);
    __builtin_memcpy(all, reader.pairs, bytes);
    __builtin_memcpy(all + slots, reader.word_pairs, bytes);
    __builtin_memcpy(all + 2 * slots, reader.long_pairs, bytes);
  }
  release(reader.pairs, 3 * reader.pair_slots * sizeof(PairReuseTrace*));
  reader.pairs = all;
  reader.word_pairs = all + slots;
  reader.long_pairs = all + 2 * slots;
  reader.pair_slots = slots;
  return true;
}

PairReuseTrace* CommunicationReuseDistance::create_pair(PairReuseTrace** pairs, uint32_t writer,
                                                        uint64_t cap) {
  // Packed: a pair costs its size, not a page (a live reader keeps one per
  // writer it read, exited writers included).
  void* memory = reserve_packed(sizeof(PairReuseTrace));
  if (!memory) return nullptr;
  return pairs[writer] = new (memory) PairReuseTrace(cap);
}

void CommunicationReuseDistance::end_epoch(ReaderState& reader, uint32_t writer,
                                           const GranuleEpoch& epoch, uint64_t weight) {
  weight *= instance_weight(epoch);
  if (weight == 0) return;  // began in a warm-up instance: stands for none
  reader.code_sets.node(epoch.code).count += weight;
  if (epoch.section == kLostSet) return;
  if (epoch.ordinal == reader.ordinal) {
    OpenEpochEnds* open =
        reader.open_ends.find_or_insert(kOpenEnd | uint64_t{writer} << 32 | epoch.section);
    if (open)
      open->count += weight;
    else
      ++reader.dropped;
    return;
  }
  const uint32_t set = with_site(reader, writer, epoch.section, reader.sites[epoch.ordinal]);
  if (set != kLostSet) reader.section_sets.node(set).count += weight;
}

void CommunicationReuseDistance::stop_epochs(ReaderState& reader, uint32_t writer) {
  PairReuseTrace* pair = reader.pairs[writer];
  if (!pair) return;
  const uint64_t weight = uint64_t{1} << reader.sample_shift;
  pair->for_each_epoch([&](const GranuleEpoch& epoch) {
    if (epoch.code != ReuseSets::kNone) end_epoch(reader, writer, epoch, weight);
  });
  pair->release_capped();
}

CommunicationReuseDistance::EventDistances CommunicationReuseDistance::on_sampled_event(
    ReaderState& reader, uint64_t pc, uint32_t writer, uintptr_t addr, uint64_t granule,
    bool true_communication) {
  EventDistances out;
  out.weight = reader.instance_weight;
  PairReuseTrace* pair = pair_of(reader, TraceKind::kLine, writer);
  if (pair == nullptr) {
    out.line = PairReuseTrace::kOutOfMemory;
    return out;
  }
  if (config_.segment_sampling > 1) pair->enter_segment(reader.segment, reader.segment);
  constexpr unsigned kNear = PairReuseTrace::RecentGranules::kSize;
  const unsigned near = pair->visit_recent(granule);
  const unsigned shift = reader.sample_shift;
  if (!granule_in_crd_sample(granule, shift)) {
    // A short distance is exact for every granule; a longer one is
    // measured on the sample only, which stands for the rest.
    if (near < kNear) {
      out.line = near;
      count(reader, pc, writer, near, 0, out.weight);
    }
    return out;
  }
  const uint64_t traced = record(reader, *pair, granule);
  after_line_event(reader, writer, pc, true_communication, traced, uint64_t{1} << shift);
  if (near < kNear) {
    out.line = near;
  } else if (traced < PairReuseTrace::kOutOfMemory) {
    // The sample's distance scaled by the rate; at least kNear, which the
    // recent granules rule out.
    out.line = std::max<uint64_t>(kNear, traced << shift);
    out.weight = reader.instance_weight << shift;
  } else {
    out.line = traced;
  }
  count(reader, pc, writer, out.line, 0, out.weight);
  if (traced != PairReuseTrace::kUnmeasured) trace_word(reader, pc, writer, addr, granule, out);
  if (reader.traced > sample_budget_) lower_rate(reader);
  return out;
}

void CommunicationReuseDistance::lower_rate(ReaderState& reader) {
  // The granules that leave the sample drop their epochs uncounted: the
  // ones that stay stand for them when their epochs end, at the new rate.
  // The recent granules are filled while the trace still holds them all;
  // a word trace keeps the words of the granules its line trace keeps.
  lower_until_fits(reader, reader.pairs, reader.sample_shift, reader.traced, sample_budget_,
                   granule_in_crd_sample, [&](uint32_t writer, unsigned shift, const auto& keep) {
                     if (PairReuseTrace* pair = reader.pairs[writer]; pair && shift == 1)
                       pair->fill_recent();
                     if (PairReuseTrace* pair = reader.word_pairs[writer]) pair->retain(keep);
                   });
}

CommunicationReuseDistance::EventDistances CommunicationReuseDistance::on_windowed_event(
    ReaderState& reader, uint64_t pc, uint32_t writer, uintptr_t addr, uint64_t granule,
    bool true_communication) {
  EventDistances out;
  out.weight = reader.instance_weight;
  bool counted = false;    // by the instance's traces (a capped pair's events too)
  bool estimated = false;  // in the window, its sample's granules stand for it
  if (PairReuseTrace* pair = pair_of(reader, TraceKind::kLine, writer)) {
    // The instance's window: from the loop's previous execution, if every
    // segment since was traced, else from the first traced one since.
    pair->enter_segment(reader.segment, std::max(reader.window_from, reader.traced_from),
                        reader.traced_from);
    constexpr unsigned kNear = PairReuseTrace::RecentGranules::kSize;
    const unsigned shift = reader.sample_shift;
    // The recent granules (a sampled trace's exact short distances) hold
    // the current run of traced segments only.
    const unsigned near = shift != 0 ? pair->visit_recent(granule) : kNear;
    uint64_t traced = PairReuseTrace::kFirstEvent;
    if (granule_in_crd_sample(granule, shift)) {
      traced = record(reader, *pair, granule);
      after_line_event(reader, writer, pc, true_communication, traced, uint64_t{1} << shift);
    } else {
      estimated = true;
    }
    if (near < kNear) {
      out.line = near;
      counted = true;
    } else if (traced < PairReuseTrace::kOutOfMemory && pair->previous_in_window()) {
      // The sample's distance scaled by its rate; at least kNear (a short
      // one the recent granules held); exact at rate 1.
      out.line = shift == 0 ? traced : std::max<uint64_t>(kNear, traced << shift);
      out.weight = reader.instance_weight << shift;
      counted = true;
    } else if (traced == PairReuseTrace::kUnmeasured) {
      out.line = traced;
      counted = true;
    }
    if (counted) {
      count(reader, pc, writer, out.line, 0, out.weight);
      if (traced != PairReuseTrace::kUnmeasured) trace_word(reader, pc, writer, addr, granule, out);
    } else {
      out.line = PairReuseTrace::kFirstEvent;
    }
  }
  long_event(reader, pc, writer, granule,
             counted     ? kCounted
             : estimated ? kEstimated
                         : kNotCounted,
             out);
  if (reader.traced > sample_budget_) lower_rate(reader);
  if (reader.long_traced > reader.long_budget) lower_long_rate(reader);
  return out;
}

void CommunicationReuseDistance::long_event(ReaderState& reader, uint64_t pc, uint32_t writer,
                                            uint64_t granule, InstanceCount instance,
                                            EventDistances& out) {
  if (!granule_in_crd_sample(granule, reader.long_shift)) return;
  PairReuseTrace* pair = pair_of(reader, TraceKind::kLong, writer);
  if (!pair) return;
  pair->enter_segment(reader.segment, reader.window_from, reader.traced_from);
  const uint64_t distance = record(reader, *pair, granule);
  if (distance == PairReuseTrace::kFirstEvent) ++reader.long_traced;
  if (instance == kCounted || distance >= PairReuseTrace::kOutOfMemory) return;
  // Before the window: a reuse no instance's traces see, measured in every
  // segment. In it: an instance's event its traces could not measure (an
  // untraced segment broke the window: its previous event came before the
  // break), unless their sample stands for it (it came after: the line
  // sample's granules of that part are counted, scaled by its rate).
  const unsigned shift = reader.long_shift;
  const bool in_window = pair->previous_in_window();
  if (in_window && instance == kEstimated && pair->previous_in_run()) return;
  const uint64_t weight = (in_window ? reader.instance_weight : 1) << shift;
  if (weight == 0) return;
  out.line = distance << shift;
  out.weight = weight;
  count(reader, pc, writer, out.line, 0, weight);
}

void CommunicationReuseDistance::begin_long_sample(ReaderState& reader) {
  reader.long_sample = true;
  reader.long_traced = 0;
  for (uint32_t writer = 0; writer < reader.pair_slots; ++writer) {
    const PairReuseTrace* line = reader.pairs[writer];
    if (!line) continue;
    PairReuseTrace* pair = pair_of(reader, TraceKind::kLong, writer);
    if (!pair) return;
    // The segments' starts come with the granules, so that the first
    // windows know which reads came in them.
    uint64_t serial = 0;
    line->for_each_in_order(
        [&](uint64_t granule) {
          if (!granule_in_crd_sample(granule, reader.long_shift)) return;
          pair->enter_segment(serial, serial);
          if (pair->record(granule) == PairReuseTrace::kFirstEvent) ++reader.long_traced;
        },
        [&](uint64_t start) { serial = start; });
    if (reader.long_traced > reader.long_budget) lower_long_rate(reader);
  }
}

void CommunicationReuseDistance::lower_long_rate(ReaderState& reader) {
  lower_until_fits(reader, reader.long_pairs, reader.long_shift, reader.long_traced,
                   reader.long_budget, granule_in_crd_sample,
                   [](uint32_t, unsigned, const auto&) {});
}

void CommunicationReuseDistance::finish_reader(uint32_t tid) {
  if (tid >= config_.max_threads || !readers_) return;
  ReaderState* reader = readers_[tid].load(std::memory_order_acquire);
  if (!reader) return;
  const uint64_t weight = uint64_t{1} << reader->sample_shift;
  for (uint32_t writer = 0; writer < reader->pair_slots; ++writer) {
    for (PairReuseTrace** pairs : {reader->pairs, reader->word_pairs, reader->long_pairs}) {
      PairReuseTrace* pair = pairs[writer];
      if (!pair) continue;
      if (pairs == reader->pairs)
        pair->for_each_epoch([&](const GranuleEpoch& epoch) {
          if (epoch.code != ReuseSets::kNone) end_epoch(*reader, writer, epoch, weight);
        });
      pair->~PairReuseTrace();
      release(pair, sizeof(PairReuseTrace));
      pairs[writer] = nullptr;
    }
  }
  reader->traced = 0;
  reader->long_traced = 0;
}

void CommunicationReuseDistance::compact_reader(uint32_t tid) {
  if (tid >= config_.max_threads || !readers_) return;
  ReaderState* reader = readers_[tid].load(std::memory_order_acquire);
  if (!reader) return;
  // What stays is packed into memory of its size: the distances, the sets,
  // the sites of its sections (one more, for the close at the capture's
  // write). The traces' slots go: a later event makes them again.
  release(reader->pairs, 3 * reader->pair_slots * sizeof(PairReuseTrace*));
  reader->pairs = reader->word_pairs = reader->long_pairs = nullptr;
  reader->pair_slots = 0;
  reader->distances.shrink_to_fit();
  reader->code_sets.shrink_to_fit();
  reader->section_sets.shrink_to_fit();
  reader->open_ends.shrink_to_fit();
  if (reader->sites && !is_packed(reader->sites)) {
    const uint32_t fit = reader->ordinal + 1;
    if (auto* sites = static_cast<uint64_t*>(reserve_packed(fit * sizeof(uint64_t)))) {
      __builtin_memcpy(sites, reader->sites, reader->ordinal * sizeof(uint64_t));
      release(reader->sites, reader->site_capacity * sizeof(uint64_t));
      reader->sites = sites;
      reader->site_capacity = fit;
    }
  }
}

void CommunicationReuseDistance::close_section(ReaderState& reader, uint64_t site) {
  if (reader.open_ends.size() != 0) {
    reader.open_ends.for_each([&](const OpenEpochEnds& open) {
      const auto writer = static_cast<uint32_t>((open.key & ~kOpenEnd) >> 32);
      const auto set = with_site(reader, writer, static_cast<uint32_t>(open.key), site);
      if (set != kLostSet) reader.section_sets.node(set).count += open.count;
    });
    reader.open_ends.zero();
  }
  if (reader.ordinal == reader.site_capacity) {
    // Doubles; a thread closes a section per barrier, so this is rare.
    const uint32_t capacity = reader.site_capacity ? reader.site_capacity * 2 : 1024;
    auto* sites = capacity <= ReaderState::kMaxSections
                      ? static_cast<uint64_t*>(reserve_zeroed(capacity * sizeof(uint64_t)))
                      : nullptr;
    if (!sites || capacity <= reader.site_capacity) {
      release(sites, capacity * sizeof(uint64_t));
      ++reader.dropped;  // the next section's events join this one's
      return;
    }
    if (reader.sites)
      __builtin_memcpy(sites, reader.sites, reader.site_capacity * sizeof(uint64_t));
    release(reader.sites, reader.site_capacity * sizeof(uint64_t));
    reader.sites = sites;
    reader.site_capacity = capacity;
  }
  reader.sites[reader.ordinal++] = site;
}

template <class Visit>
static void for_each_pair(const std::atomic<CommunicationReuseDistance::ReaderState*>* readers,
                          unsigned max_threads, Visit visit) {
  for (unsigned i = 0; i < max_threads; ++i) {
    const auto* r = readers[i].load(std::memory_order_acquire);
    if (!r) continue;
    for (unsigned w = 0; w < r->pair_slots; ++w) {
      for (const PairReuseTrace* const* pairs : {r->pairs, r->word_pairs, r->long_pairs})
        if (const PairReuseTrace* pair = pairs[w]) visit(*pair);
    }
  }
}

uint64_t CommunicationReuseDistance::dropped() const {
  uint64_t n = 0;
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load())
      n += r->dropped + r->code_sets.lost() + r->section_sets.lost();
  return n;
}

uint64_t CommunicationReuseDistance::capped_pairs() const {
  uint64_t n = 0;  // word traces are never capped
  for_each_pair(readers_, config_.max_threads, [&](const PairReuseTrace& p) { n += p.capped(); });
  return n;
}

unsigned CommunicationReuseDistance::max_sample_shift() const {
  unsigned shift = 0;
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load()) shift = std::max(shift, r->sample_shift);
  return shift;
}

unsigned CommunicationReuseDistance::max_long_shift() const {
  unsigned shift = 0;
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load()) shift = std::max(shift, r->long_shift);
  return shift;
}

uint64_t CommunicationReuseDistance::next_stretch(ReaderState& reader, uint64_t clock,
                                                  bool& analyzed) {
  const uint64_t weight = reader.analyzed_weight;
  analyzed = true;
  if (reader.phase == StretchPhase::kNone) return kNoStretch;
  ++reader.stretch;
  const uint64_t part = reader.cycle_events / kStretchRate;
  switch (reader.phase) {
    case StretchPhase::kWhole:
    case StretchPhase::kCounted:
      // A skipped stretch. The first one is 5/16 of a cycle: then an
      // instance that ends at a random point of a cycle is counted, on
      // average, as many events as it had (a cycle's counted stretch lies
      // 7/16 of a cycle before its end). Its end stays on the grid the
      // first one began, so that a skipped stretch that ran past its end
      // (it ends at the reader's next slow-path event) shortens the next.
      if (reader.phase == StretchPhase::kWhole) reader.cycle_end = clock + 5 * part / 2;
      reader.phase = StretchPhase::kSkipped;
      analyzed = false;
      ++reader.skipped_stretches;
      enter_stretch(reader, false, 0);
      return std::max(reader.cycle_end, clock + 1);
    case StretchPhase::kSkipped:
      // A cycle begins: a warm-up, then a counted stretch. Past the serials
      // the instance has room for (a cycle takes three), its rest is
      // analyzed whole.
      if (reader.stretch + 2 >= kStretchesPerSegment) {
        reader.phase = StretchPhase::kNone;
        enter_stretch(reader, true, weight);
        return kNoStretch;
      }
      if (reader.cycles != 0 && reader.cycles % kCyclesPerDoubling == 0) reader.cycle_events *= 2;
      ++reader.cycles;
      reader.cycle_end += reader.cycle_events;
      reader.phase = StretchPhase::kWarmUp;
      enter_stretch(reader, true, 0);
      return clock + reader.cycle_events / kStretchRate;
    case StretchPhase::kWarmUp:
      reader.phase = StretchPhase::kCounted;
      enter_stretch(reader, true, weight * kStretchRate);
      return clock + part;
    case StretchPhase::kNone:
      break;
  }
  return kNoStretch;
}

uint64_t CommunicationReuseDistance::skipped_stretches() const {
  uint64_t n = 0;
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load()) n += r->skipped_stretches;
  return n;
}

uint64_t CommunicationReuseDistance::skipped_segments() const {
  uint64_t n = 0;
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load()) n += r->skipped_segments;
  return n;
}

size_t CommunicationReuseDistance::memory_bytes() const {
  size_t n = 0;
  for_each_pair(readers_, config_.max_threads,
                [&](const PairReuseTrace& p) { n += p.memory_bytes(); });
  for (unsigned i = 0; i < config_.max_threads; ++i)
    if (const ReaderState* r = readers_[i].load())
      n += r->code_sets.memory_bytes() + r->section_sets.memory_bytes();
  return n;
}

}  // namespace weft
