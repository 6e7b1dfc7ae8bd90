#include "findings/memory_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "analyzers/traces/traces_tables.h"
#include "common/loop_trace.h"
#include "common/run_capture.h"
#include "diagnosis/trace_hints.h"
#include "findings/false_sharing_findings.h"
#include "findings/source_lines.h"
#include "findings/trace_findings.h"
#include "profile/section_instances.h"

namespace weft {
namespace {

// A source line is worth a finding when it makes at least this share of
// the traced accesses (and kMinAccesses), and the stream examined for it
// holds at least kMinAccesses (docs/metrics.md, "Memory findings").
constexpr uint64_t kMinAccesses = 256;
constexpr uint64_t kShareDivisor = 200;  // 0.5%
constexpr double kMinReuseDegree = 4.0;
constexpr uint64_t kMinReuseAddresses = 16;
constexpr double kMinAliasingFraction = 0.5;

std::optional<ScheduleKind> runtime_kind(LoopScheduleKind kind) {
  switch (kind) {
    case LoopScheduleKind::Static:
      return ScheduleKind::Static;
    case LoopScheduleKind::Dynamic:
      return ScheduleKind::Dynamic;
    case LoopScheduleKind::Guided:
      return ScheduleKind::Guided;
    case LoopScheduleKind::Unknown:
      break;
  }
  return std::nullopt;
}

bool is_outlined_parallel_body(const std::string& function) {
  return function.find("_omp_fn.") != std::string::npos ||
         function.find("omp_outlined") != std::string::npos;
}

SourcePosition position_of(const Profile& profile, uint64_t pc) {
  return profile.source_position(pc).value_or(SourcePosition{"??", "", 0});
}

// The executions of the run's loops: each thread's segments (docs/metrics.md,
// "Parallel section": segment k of a thread is its execution after its k-th
// section-closing record) grouped into section instances. A loop's
// execution is its part in one instance: a worksharing loop ends at a
// barrier, so each of its executions is in an instance of its own.
class LoopExecutions {
 public:
  explicit LoopExecutions(const std::vector<SyncRecord>& sync) {
    for (const SectionInstance& instance : find_section_instances(sync)) {
      const size_t id = next_++;
      for (const SectionInstanceThread& t : instance.threads)
        for (uint32_t segment = t.first_segment; segment <= t.segment; ++segment)
          slots_[{t.thread, segment}] = id;
    }
  }

  // The execution slot of the thread's segment: instances in order of their
  // first arrival; a segment of no instance (a team of one) is a slot of its
  // own, numbered after them.
  size_t slot(uint32_t thread, uint32_t segment) {
    auto [it, fresh] = slots_.try_emplace({thread, segment}, next_);
    if (fresh) ++next_;
    return it->second;
  }

 private:
  std::map<std::pair<uint32_t, uint32_t>, size_t> slots_;
  size_t next_ = 0;
};

// Classifications of one loop's executions, each distinct set of chunks
// classified once (a loop run a thousand times usually repeats a few).
class ClassifiedChunks {
 public:
  template <class Classify>
  const RecoveredSchedule& of(const ThreadChunks& chunks, Classify&& classify) {
    auto found = known_.find(chunks);
    if (found != known_.end()) return found->second;
    return known_.emplace(chunks, classify(chunks)).first->second;
  }

 private:
  std::map<ThreadChunks, RecoveredSchedule> known_;
};

// The functions that asked the runtime for chunks (the chunk records' call
// sites: the outlined body of a combined `parallel for`, whose loop key is
// the call in its parent) or set a loop up: their loops' schedules come
// from the runtime, not from the traces.
std::set<std::string> functions_with_chunks(const Profile& profile,
                                            const std::vector<SyncRecord>& sync) {
  std::set<uint64_t> pcs;
  for (const SyncRecord& r : sync)
    if (r.kind == SyncKind::OmpLoopChunk) {
      pcs.insert(r.pc);
      pcs.insert(omp_loop_key(r.object));
    }
  std::set<std::string> functions;
  for (uint64_t pc : pcs) functions.insert(position_of(profile, pc).function);
  return functions;
}

// The loops whose chunks the OpenMP runtime handed out, by loop key: each
// execution's chunks classified on their own, then merged.
std::vector<LoopSchedule> runtime_schedules(const Profile& profile,
                                            const std::vector<SyncRecord>& sync,
                                            LoopExecutions& executions) {
  struct Loop {
    LoopScheduleKind kind = LoopScheduleKind::Unknown;
    uint64_t first_call = 0;  // the call that handed out its first chunk
    std::set<uint32_t> threads;
    // By execution slot, then thread.
    std::map<size_t, std::map<uint32_t, std::vector<IterationChunk>>> chunks;
  };
  std::map<uint64_t, Loop> loops;
  uint32_t thread = 0, segment = 0;
  for (size_t i = 0; i < sync.size(); ++i) {
    const SyncRecord& r = sync[i];
    if (i == 0 || r.thread != thread) thread = r.thread, segment = 0;
    if (r.kind == SyncKind::OmpLoopChunk) {
      Loop& loop = loops[omp_loop_key(r.object)];
      if (omp_loop_schedule(r.object) != LoopScheduleKind::Unknown)
        loop.kind = omp_loop_schedule(r.object);
      if (loop.first_call == 0) loop.first_call = r.pc;
      loop.threads.insert(r.thread);
      loop.chunks[executions.slot(r.thread, segment)][r.thread].push_back({r.arg0, r.arg1});
    }
    if (closes_section(r.kind)) ++segment;
  }
  std::vector<LoopSchedule> out;
  for (auto& [key, loop] : loops) {
    const std::optional<ScheduleKind> kind = runtime_kind(loop.kind);
    ClassifiedChunks classified;
    std::vector<RecoveredSchedule> per_execution;
    for (auto& [slot, by_thread] : loop.chunks) {
      // The loop's team: every thread that ran one of its chunks.
      ThreadChunks per_thread;
      for (uint32_t t : loop.threads) {
        auto mine = by_thread.find(t);
        per_thread.push_back(mine == by_thread.end() ? std::vector<IterationChunk>{}
                                                     : std::move(mine->second));
      }
      per_execution.push_back(classified.of(
          per_thread, [&](const ThreadChunks& c) { return classify_schedule(c, kind); }));
    }
    // Named where the threads ask for chunks, inside the parallel body (a
    // combined `parallel for` of gcc's is set up by a call in its parent).
    LoopSchedule s;
    s.pc = loop.first_call != 0 ? loop.first_call : key;
    s.position = position_of(profile, s.pc);
    s.schedule = merge_executions(per_execution);
    s.name = schedule_name(s.schedule);
    s.source = "runtime";
    out.push_back(std::move(s));
  }
  return out;
}

struct DecodedTraces {
  std::vector<TracedInstruction> all;
  std::vector<int64_t> region_of;                                      // parallel to `all`
  std::vector<std::optional<std::vector<StreamSegmentRun>>> segments;  // likewise
  uint64_t total_accesses = 0;
  // The accesses of one thread's stream of a pc (0 when it has none).
  uint64_t accesses(uint32_t thread, uint64_t pc) const {
    auto found = index.find({thread, pc});
    return found == index.end() ? 0 : all[found->second].accesses;
  }
  std::map<std::pair<uint32_t, uint64_t>, size_t> index;  // (thread, pc) -> position in `all`
};

DecodedTraces decode_traces(const Profile& profile) {
  DecodedTraces d;
  for (MemoryTraceInfo& t : memory_traces(profile)) {
    TracedInstruction i = traced_instruction(t);
    d.total_accesses += t.accesses;
    d.index[{i.thread, i.pc}] = d.all.size();
    d.all.push_back(std::move(i));
    d.region_of.push_back(t.region_id);
    d.segments.push_back(std::move(t.segments));
  }
  return d;
}

// A stream's pieces, one per segment it has accesses in (StreamSegmentRun),
// as (segment, first access); nullopt without segment runs.
std::optional<std::vector<std::pair<uint32_t, uint64_t>>> segment_starts(
    const TracedInstruction& stream, const std::optional<std::vector<StreamSegmentRun>>& runs) {
  if (!runs) return std::nullopt;
  std::vector<std::pair<uint32_t, uint64_t>> starts;
  if (runs->empty() || runs->front().first_access > 0) starts.emplace_back(0, 0);
  for (const StreamSegmentRun& run : *runs)
    for (uint64_t j = 0; j < run.count; ++j) {
      const uint64_t at = run.first_access + j * run.access_step;
      if (at >= stream.accesses) break;
      starts.emplace_back(static_cast<uint32_t>(run.first_segment + j * run.segment_step), at);
    }
  return starts;
}

// Loops of outlined parallel bodies without runtime chunks: the schedule
// is recovered from which iterations each thread's instructions touched,
// per execution of the loop (the streams' pieces in each section
// instance), then merged.
std::vector<LoopSchedule> trace_schedules(const Profile& profile, const DecodedTraces& traces,
                                          const std::set<std::string>& functions_with_chunks,
                                          LoopExecutions& executions) {
  std::map<int64_t, RegionInfo> regions;
  for (RegionInfo& r : profile.regions()) regions[r.id] = std::move(r);
  const uint32_t threads = profile.thread_count();

  // region -> pc -> streams (one per thread, as indexes into traces.all),
  // for the loops of outlined bodies (the pc's physical function) without
  // runtime chunks.
  std::map<uint64_t, bool> candidate_pc;
  std::map<int64_t, std::map<uint64_t, std::vector<size_t>>> by_region;
  for (size_t i = 0; i < traces.all.size(); ++i) {
    auto region = regions.find(traces.region_of[i]);
    if (region == regions.end() || region->second.kind != "loop") continue;
    const uint64_t pc = traces.all[i].pc;
    auto [known, fresh] = candidate_pc.try_emplace(pc, false);
    if (fresh) {
      const std::string function = position_of(profile, pc).function;
      known->second =
          is_outlined_parallel_body(function) && !functions_with_chunks.contains(function);
    }
    if (known->second) by_region[region->first][pc].push_back(i);
  }
  std::vector<LoopSchedule> out;
  for (auto& [region_id, pcs] : by_region) {
    std::vector<TracedCandidate> candidates;
    std::vector<uint64_t> candidate_pcs;
    // Per candidate and stream, the segments it ran in; without segment
    // runs for every stream, the whole run is one execution (as in
    // profiles written before them).
    std::vector<std::vector<std::vector<std::pair<uint32_t, uint64_t>>>> starts;
    bool segmented = true;
    for (auto& [pc, indexes] : pcs) {
      if (indexes.size() < 2) continue;  // a loop one thread ran tells no schedule
      TracedCandidate candidate;
      std::vector<std::vector<std::pair<uint32_t, uint64_t>>> mine;
      for (size_t i : indexes) {
        candidate.streams.push_back(traces.all[i]);
        auto s = segment_starts(traces.all[i], traces.segments[i]);
        segmented = segmented && s.has_value();
        mine.push_back(s.value_or(std::vector<std::pair<uint32_t, uint64_t>>{}));
      }
      candidates.push_back(std::move(candidate));
      starts.push_back(std::move(mine));
      candidate_pcs.push_back(pc);
    }
    // The pieces, by execution slot, numbered densely in slot order.
    std::map<size_t, size_t> dense;
    for (size_t c = 0; c < candidates.size(); ++c) {
      for (size_t s = 0; s < candidates[c].streams.size(); ++s) {
        const TracedInstruction& stream = candidates[c].streams[s];
        if (!segmented) {
          candidates[c].pieces.push_back({s, 0, 0, stream.accesses});
          dense[0] = 0;
          continue;
        }
        const auto& mine = starts[c][s];
        for (size_t k = 0; k < mine.size(); ++k) {
          const uint64_t end = k + 1 < mine.size() ? mine[k + 1].second : stream.accesses;
          const size_t slot = executions.slot(stream.thread, mine[k].first);
          dense.try_emplace(slot, 0);
          candidates[c].pieces.push_back({s, slot, mine[k].second, end});
        }
      }
    }
    size_t next = 0;
    for (auto& [slot, id] : dense) id = next++;
    for (TracedCandidate& candidate : candidates)
      for (StreamPiece& piece : candidate.pieces) piece.execution = dense.at(piece.execution);

    const auto pick = pick_representative(candidates, dense.size(), threads);
    if (!pick) continue;
    // The representative's executions (those it ran in), in run order.
    std::vector<bool> ran(dense.size(), false);
    for (const StreamPiece& piece : candidates[pick->candidate].pieces)
      if (piece.end > piece.begin) ran[piece.execution] = true;
    ClassifiedChunks classified;
    std::vector<RecoveredSchedule> per_execution;
    for (size_t e = 0; e < dense.size(); ++e) {
      if (!ran[e]) continue;
      per_execution.push_back(pick->chunks[e]
                                  ? classified.of(*pick->chunks[e], classify_traced_chunks)
                                  : RecoveredSchedule{});
    }
    LoopSchedule s;
    s.schedule = merge_executions(per_execution);
    if (s.schedule.kind == ScheduleKind::Unknown) continue;
    s.pc = candidate_pcs[pick->candidate];
    const RegionInfo& region = regions.at(region_id);
    s.position = position_of(profile, s.pc);
    if (!region.file.empty() && region.first_line != 0) {
      s.position.file = region.file;
      s.position.line = region.first_line;
    }
    s.name = schedule_name(s.schedule);
    s.source = "traces";
    out.push_back(std::move(s));
  }
  return out;
}

// A dynamic or guided loop whose function has false sharing: its chunks
// are smaller than a line of the data its threads write.
void warn_about_chunks(std::vector<LoopSchedule>& schedules, const std::vector<SharingItem>& items,
                       const DecodedTraces& traces, uint32_t line_size) {
  for (LoopSchedule& s : schedules) {
    if (s.schedule.kind != ScheduleKind::Dynamic && s.schedule.kind != ScheduleKind::Guided)
      continue;
    uint64_t events = 0;
    const FalseSharingSite* top = nullptr;
    for (const SharingItem& item : items) {
      if (item.kind != SharingKind::FalseSharing) continue;
      for (const FalseSharingSite& site : item.sites)
        if (site.position.function == s.position.function) {
          events += site.events;
          if (!top || site.events > top->events) top = &site;
        }
    }
    if (!top) continue;
    uint32_t element = 8;
    for (const TracedInstruction& t : traces.all)
      if (t.pc == top->pc && t.access_size != 0) element = t.access_size;
    const int64_t per_line = std::max<int64_t>(1, line_size / element);
    s.warning = fmt::format(
        "chunks of {} iteration{} make threads write the same {}-byte lines: {} false-sharing "
        "events, most at {}; use chunks of at least {} iterations (a multiple of {} {}-byte "
        "elements), e.g. schedule({}, {})",
        s.schedule.chunk, s.schedule.chunk == 1 ? "" : "s", line_size, events,
        code_location(top->position, top->pc), per_line, per_line, element,
        s.schedule.kind == ScheduleKind::Guided ? "guided" : "dynamic",
        std::max<int64_t>(per_line, s.schedule.chunk));
  }
}

struct InstructionTotals {
  uint64_t accesses = 0;
  const TracedInstruction* busiest = nullptr;  // the thread with the most accesses
};

std::map<uint64_t, InstructionTotals> totals_by_pc(const DecodedTraces& traces) {
  std::map<uint64_t, InstructionTotals> by_pc;
  for (const TracedInstruction& t : traces.all) {
    InstructionTotals& totals = by_pc[t.pc];
    totals.accesses += t.accesses;
    if (!totals.busiest || t.accesses > totals.busiest->accesses) totals.busiest = &t;
  }
  return by_pc;
}

// The threshold applies to a source line's accesses (its copies together).
struct LineAccesses {
  std::map<uint64_t, std::string> line_of;   // "file:line" by pc, when the file is known
  std::map<std::string, uint64_t> accesses;  // by "file:line"
};

LineAccesses accesses_by_line(const Profile& profile,
                              const std::map<uint64_t, InstructionTotals>& by_pc) {
  LineAccesses lines;
  for (const auto& [pc, totals] : by_pc) {
    const SourcePosition at = position_of(profile, pc);
    if (at.file.empty()) continue;
    lines.line_of[pc] = at.file + ":" + std::to_string(at.line);
    lines.accesses[lines.line_of[pc]] += totals.accesses;
  }
  return lines;
}

// The accesses of a line's instructions together (its copies: unrolled,
// vectorized), or of the instruction alone when it has no source line.
uint64_t line_accesses(const LineAccesses& lines, uint64_t pc, const InstructionTotals& totals) {
  auto line = lines.line_of.find(pc);
  return line == lines.line_of.end() ? totals.accesses : lines.accesses.at(line->second);
}

struct Pattern {
  StridePattern stride;
  std::string line;  // "file:line", empty when unknown
  // The accesses the pattern was read from: the busiest thread's stream of
  // the instruction, with the streams of its unrolled copies in that thread.
  uint64_t examined = 0;
  // For a non-unit stride: the bytes of each |stride|-byte record that the
  // accesses of the instruction's loop in that thread use together (its
  // record's other fields, read or written on other lines), and how many
  // instructions those are (record_use).
  uint64_t record_bytes_used = 0;
  unsigned record_accesses = 1;
};

// Where a stream lies: its first address and the span of its addresses (a
// sample of 64 of them spread over the trace).
struct StreamExtent {
  uint64_t first = 0;
  uint64_t low = 0;
  uint64_t high = 0;  // the last byte
};

StreamExtent extent_of(const TracedInstruction& t) {
  const std::vector<uint64_t> sample = sample_loop_trace(t.trace, 64);
  if (sample.empty()) return {};
  const auto [low, high] = std::minmax_element(sample.begin(), sample.end());
  return {sample.front(), *low, *high + std::max<uint32_t>(t.access_size, 1) - 1};
}

// Each stream's extent, found once (by position in traces.all): the
// unrolled copies and the records' use both place streams by it.
class StreamExtents {
 public:
  explicit StreamExtents(const DecodedTraces& traces) : traces_(traces) {}
  const StreamExtent& of(size_t i) {
    auto found = extents_.find(i);
    if (found != extents_.end()) return found->second;
    return extents_.emplace(i, extent_of(traces_.all[i])).first->second;
  }

 private:
  const DecodedTraces& traces_;
  std::map<size_t, StreamExtent> extents_;
};

// The offset of `address` in a record of `record` bytes that starts at `origin`.
uint64_t offset_in_record(uint64_t address, uint64_t origin, uint64_t record) {
  return (address - origin) % record;  // unsigned: a lower address wraps to its offset too
}

bool may_be_unrolled(const Pattern& p) {
  return !p.line.empty() && p.stride.kind != StrideClass::Irregular && !p.stride.column_wise;
}

// The unrolled copies among the accesses of one line that stride `stride`
// bytes in one thread: u copies of an access start u-th parts of the
// stride apart (a[i], a[i + 1] at stride 16 on doubles: 2). Accesses that
// start elsewhere are other fields of a record (p[c].x and p[c].y, 8 bytes
// apart in records 8 KiB apart: each field strides 8 KiB), and accesses
// that start at one offset repeat the same addresses (an enclosing loop
// the compiler unrolled too): offsets count once. The largest u that
// splits the offsets into classes of u, each class a field's copies (x, y,
// x, y of two records per iteration at stride 64: two classes of 2).
// Returns u (1: no copies), and in `copies` the pcs of `pc`'s class.
unsigned unrolled_copies(const DecodedTraces& traces, StreamExtents& extents, uint32_t thread,
                         const std::vector<uint64_t>& pcs, int64_t stride, uint64_t pc,
                         std::vector<uint64_t>& copies) {
  const auto record = static_cast<uint64_t>(std::llabs(stride));
  if (record == 0) return 1;
  std::map<uint64_t, uint64_t> offset_of;  // by pc
  std::set<uint64_t> offsets;
  uint64_t origin = 0;
  for (uint64_t each : pcs) {
    auto found = traces.index.find({thread, each});
    if (found == traces.index.end()) return 1;
    const uint64_t first = extents.of(found->second).first;
    if (offset_of.empty()) origin = first;
    offset_of[each] = offset_in_record(first, origin, record);
    offsets.insert(offset_of[each]);
  }
  const auto n = static_cast<uint64_t>(offsets.size());
  for (uint64_t u = n; u > 1; --u) {
    if (n % u != 0 || record % u != 0) continue;
    const uint64_t part = record / u;
    std::map<uint64_t, uint64_t> class_size;
    for (uint64_t offset : offsets) ++class_size[offset % part];
    if (!std::all_of(class_size.begin(), class_size.end(),
                     [&](const auto& c) { return c.second == u; }))
      continue;
    for (uint64_t each : pcs)
      if (offset_of[each] % part == offset_of[pc] % part) copies.push_back(each);
    return static_cast<unsigned>(u);
  }
  return 1;
}

// An unrolled loop is several copies of one access on one source line,
// each striding over the others' elements: u copies with the same stride
// and size walk memory with stride / u together.
void merge_unrolled_copies(std::map<uint64_t, Pattern>& patterns,
                           const std::map<uint64_t, InstructionTotals>& by_pc,
                           const DecodedTraces& traces, StreamExtents& extents,
                           unsigned line_size) {
  using CopyKey = std::tuple<std::string, int64_t, uint32_t, bool>;
  std::map<CopyKey, std::vector<uint64_t>> same_access;  // the pcs of each access
  for (const auto& [pc, p] : patterns) {
    const TracedInstruction& t = *by_pc.at(pc).busiest;
    if (may_be_unrolled(p))
      same_access[{p.line, p.stride.stride, t.access_size, t.writes}].push_back(pc);
  }
  for (auto& [pc, p] : patterns) {
    const TracedInstruction& t = *by_pc.at(pc).busiest;
    p.examined = t.accesses;
    if (!may_be_unrolled(p)) continue;
    StridePattern& stride = p.stride;
    const std::vector<uint64_t>& same =
        same_access.at({p.line, stride.stride, t.access_size, t.writes});
    std::vector<uint64_t> copies;
    const unsigned u = same.size() > 1 ? unrolled_copies(traces, extents, t.thread, same,
                                                         stride.stride, pc, copies)
                                       : 1;
    if (u > 1) {
      stride.stride /= static_cast<int64_t>(u);
      const uint64_t step = static_cast<uint64_t>(std::llabs(stride.stride));
      stride.kind = step <= t.access_size ? StrideClass::Unit
                    : step < line_size    ? StrideClass::NonUnit
                                          : StrideClass::Large;
      p.examined = 0;
      for (uint64_t copy : copies) p.examined += traces.accesses(t.thread, copy);
    }
  }
}

// A non-unit stride through records of which the loop uses other fields
// too (streamcluster's gain loop reads each point's weight, coordinates'
// pointer, assignment and cost, on three lines: 24 of each 32 bytes) does
// not waste the rest of each line: those fields use it. So for each
// non-unit-stride instruction, the bytes of each record used by every
// access of its loop (innermost natural loop) in the same thread that
// strides as far through the same span of memory, reads and writes alike,
// placed by their offsets in the record (docs/metrics.md, "Memory
// findings").
void record_use(std::map<uint64_t, Pattern>& patterns,
                const std::map<uint64_t, InstructionTotals>& by_pc, const DecodedTraces& traces,
                StreamExtents& extents, unsigned line_size) {
  // Each stream's own stride (not merged with unrolled copies: four fields
  // of 8 bytes look like four copies; 0 when it has none), by position in
  // traces.all.
  std::map<size_t, int64_t> strides;
  auto stride_of = [&](size_t i) {
    auto found = strides.find(i);
    if (found != strides.end()) return found->second;
    const StridePattern s = stride_pattern(traces.all[i], line_size);
    return strides.emplace(i, s.kind == StrideClass::Irregular || s.column_wise ? 0 : s.stride)
        .first->second;
  };
  for (auto& [pc, p] : patterns) {
    if (p.stride.kind != StrideClass::NonUnit || p.stride.column_wise) continue;
    const TracedInstruction& t = *by_pc.at(pc).busiest;
    const size_t self = traces.index.at({t.thread, t.pc});
    const int64_t region = traces.region_of[self];
    const auto record = static_cast<uint64_t>(std::llabs(p.stride.stride));
    const StreamExtent own = extents.of(self);
    // [begin, end) of each access in the record, from the instruction's own.
    std::vector<std::pair<uint64_t, uint64_t>> used;
    unsigned accesses = 0;
    for (size_t i = 0; i < traces.all.size(); ++i) {
      const TracedInstruction& other = traces.all[i];
      if (other.thread != t.thread || (i != self && (region == 0 || traces.region_of[i] != region)))
        continue;
      // A stream striding a multiple of the record: an unrolled copy's.
      const int64_t stride = stride_of(i);
      if (stride == 0 || static_cast<uint64_t>(std::llabs(stride)) % record != 0) continue;
      const StreamExtent& extent = extents.of(i);
      if (extent.high < own.low || extent.low > own.high) continue;  // another array
      const uint64_t begin = offset_in_record(extent.first, own.first, record);
      const uint64_t end = begin + std::min<uint64_t>(other.access_size, record);
      ++accesses;
      if (end <= record) {
        used.emplace_back(begin, end);
      } else {  // wraps into the next record
        used.emplace_back(begin, record);
        used.emplace_back(0, end - record);
      }
    }
    std::sort(used.begin(), used.end());
    uint64_t bytes = 0, reached = 0;
    for (const auto& [begin, end] : used) {
      if (end <= reached) continue;
      bytes += end - std::max(begin, reached);
      reached = end;
    }
    p.record_bytes_used = bytes;
    p.record_accesses = accesses;
  }
}

// The access pattern of each instruction whose source line (or itself,
// without one) reaches the threshold, as its busiest thread walks memory.
std::map<uint64_t, Pattern> stride_patterns(const DecodedTraces& traces,
                                            const std::map<uint64_t, InstructionTotals>& by_pc,
                                            const LineAccesses& lines, uint64_t threshold,
                                            unsigned line_size) {
  std::map<uint64_t, Pattern> patterns;
  for (const auto& [pc, totals] : by_pc) {
    if (line_accesses(lines, pc, totals) < threshold) continue;
    auto line = lines.line_of.find(pc);
    patterns.emplace(pc, Pattern{stride_pattern(*totals.busiest, line_size),
                                 line == lines.line_of.end() ? "" : line->second, 0});
  }
  StreamExtents extents(traces);
  merge_unrolled_copies(patterns, by_pc, traces, extents, line_size);
  record_use(patterns, by_pc, traces, extents, line_size);
  return patterns;
}

MemoryHint column_wise_hint(const Pattern& pattern, const TracedInstruction& t) {
  const StridePattern& stride = pattern.stride;
  MemoryHint hint;
  hint.kind = "column-wise";
  hint.evidence = fmt::format(
      "the inner loop moves by {} bytes while an enclosing loop moves by {} ({:.0f}% of {} "
      "accesses of thread {}): each access touches a new line",
      stride.stride, stride.outer_stride, 100 * stride.coverage, pattern.examined, t.thread);
  hint.suggestion =
      "interchange the loops so that the innermost one walks the contiguous dimension, or "
      "transpose the array";
  return hint;
}

// A non-unit stride is a finding when the loop's accesses use at most half
// of each record: the loop fetches at least twice the data it uses. Over
// half (a record whose every field the loop reads, on several lines), a
// structure of arrays would fetch no less.
bool wastes_records(const Pattern& pattern) {
  return 2 * pattern.record_bytes_used <= static_cast<uint64_t>(std::llabs(pattern.stride.stride));
}

MemoryHint non_unit_stride_hint(const Pattern& pattern, const TracedInstruction& t) {
  const StridePattern& stride = pattern.stride;
  const auto record = static_cast<uint64_t>(std::llabs(stride.stride));
  MemoryHint hint;
  hint.kind = "non-unit-stride";
  hint.evidence = fmt::format(
      "stride {} bytes on {}-byte accesses ({:.0f}% of {} accesses of "
      "thread {}): ",
      stride.stride, t.access_size, 100 * stride.coverage, pattern.examined, t.thread);
  if (pattern.record_accesses > 1)
    hint.evidence += fmt::format("the loop's accesses to these records use {} of each {} bytes: ",
                                 pattern.record_bytes_used, record);
  hint.evidence += fmt::format(
      "{:.0f}% of each line fetched is used",
      100.0 * static_cast<double>(pattern.record_bytes_used) / static_cast<double>(record));
  hint.suggestion =
      "split the interleaved data into separate arrays (structure of arrays) so that the "
      "loop reads consecutive elements";
  return hint;
}

MemoryHint large_stride_hint(const Pattern& pattern, const TracedInstruction& t,
                             unsigned line_size) {
  const StridePattern& stride = pattern.stride;
  MemoryHint hint;
  hint.kind = "large-stride";
  hint.evidence = fmt::format(
      "stride {} bytes ({:.0f}% of {} accesses of thread {}): every access loads a new "
      "{}-byte line",
      stride.stride, 100 * stride.coverage, pattern.examined, t.thread, line_size);
  hint.suggestion =
      "reorder the loops or the data so that consecutive iterations use "
      "neighbouring addresses";
  return hint;
}

// The reuse of the loads of one source line in one thread together (an
// unrolled repetition is several instructions reading the same data),
// within one execution of their loop nest: the thread's streams in the
// loops of those loads. Computed once per line and thread: its
// instructions' findings merge later.
class LineReuse {
 public:
  LineReuse(const DecodedTraces& traces, const std::map<uint64_t, std::string>& line_of,
            unsigned line_size, uint64_t capacity_lines)
      : traces_(traces),
        line_of_(line_of),
        line_size_(line_size),
        capacity_lines_(capacity_lines) {}

  const NestReuse& of(const TracedInstruction& load) {
    const std::pair<uint32_t, std::string> key{load.thread, line_key(load.pc)};
    auto found = reuse_.find(key);
    if (found != reuse_.end()) return found->second;
    return reuse_
        .emplace(key, compute(load.thread,
                              [&](const TracedInstruction& other) {
                                return line_key(other.pc) == key.second;
                              }))
        .first->second;
  }

  // The same for the load's own instruction alone, in its nest.
  NestReuse of_instruction(const TracedInstruction& load) const {
    return compute(load.thread,
                   [&](const TracedInstruction& other) { return other.pc == load.pc; });
  }

 private:
  // The reuse of the loads of `thread` that `in_group` selects, in the
  // thread's streams of their loops.
  template <class InGroup>
  NestReuse compute(uint32_t thread, InGroup&& in_group_of) const {
    const std::vector<TracedInstruction>& all = traces_.all;
    std::vector<bool> in_group(all.size(), false);
    std::set<int64_t> loops;
    for (size_t i = 0; i < all.size(); ++i) {
      const TracedInstruction& other = all[i];
      if (other.thread != thread || !other.reads || other.writes) continue;
      if (!in_group_of(other)) continue;
      in_group[i] = true;
      if (traces_.region_of[i] != 0) loops.insert(traces_.region_of[i]);
    }
    std::vector<const TracedInstruction*> nest;
    std::vector<bool> nest_group;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].thread != thread) continue;
      if (!in_group[i] && !loops.contains(traces_.region_of[i])) continue;
      nest.push_back(&all[i]);
      nest_group.push_back(in_group[i]);
    }
    return nest_reuse(nest, nest_group, line_size_, capacity_lines_);
  }

  // "file:line", or the pc in decimal without a source line.
  std::string line_key(uint64_t pc) const {
    auto line = line_of_.find(pc);
    return line == line_of_.end() ? std::to_string(pc) : line->second;
  }

  const DecodedTraces& traces_;
  const std::map<uint64_t, std::string>& line_of_;
  unsigned line_size_;
  uint64_t capacity_lines_;
  std::map<std::pair<uint32_t, std::string>, NestReuse> reuse_;
};

std::string bytes_text(uint64_t bytes) {
  return bytes >= 1024 && bytes % 1024 == 0 ? fmt::format("{} KiB", bytes / 1024)
                                            : fmt::format("{} bytes", bytes);
}

std::optional<MemoryHint> reuse_hint(const TracedInstruction& t, const NestReuse& reuse,
                                     unsigned line_size) {
  // A loop-invariant scalar (a handful of addresses) is not data reuse.
  if (reuse.loads < kMinAccesses || reuse.degree < kMinReuseDegree ||
      reuse.distinct < kMinReuseAddresses)
    return std::nullopt;
  MemoryHint hint;
  hint.kind = "reuse";
  hint.evidence = fmt::format(
      "thread {} loads each of its {} addresses {:.1f} times within one run of the loop nest ({} "
      "loads), ",
      t.thread, reuse.distinct, reuse.degree, reuse.loads);
  hint.evidence +=
      reuse.span == 0
          ? std::string(
                "each reload with no other line of the nest touched since the previous one: a "
                "register holds it")
          : fmt::format(
                "each reload at most {} of the nest's data after the previous one: "
                "registers or L1 hold that span",
                bytes_text(reuse.span * line_size));
  // Concentrated on a few addresses (a quarter of them or fewer take half
  // of the loads): those are the values to keep, whatever the average.
  if (reuse.hot_addresses > 0 && 4 * reuse.hot_addresses <= reuse.distinct)
    hint.evidence += fmt::format(
        "; {} of the addresses take {:.0f}% of the loads, {:.0f} times each", reuse.hot_addresses,
        100.0 * static_cast<double>(reuse.hot_loads) / static_cast<double>(reuse.loads),
        static_cast<double>(reuse.hot_loads) / static_cast<double>(reuse.hot_addresses));
  if (reuse.executions > 1)
    hint.evidence += fmt::format(
        "; the nest runs {} times on the same data (an enclosing time-step loop), which is not "
        "counted as reuse",
        reuse.executions);
  hint.suggestion =
      "load each value once into a local variable (a register) and reuse it from there: scalar "
      "replacement, or unroll-and-jam of the loop that carries the reuse";
  return hint;
}

// Whether most loads of an instruction re-read, within one run of their
// loop nest, an address loaded within the L1's span before. A stride
// through such data (an inner loop over the same few records in every
// iteration of an outer one: streamcluster's assignment loop reads its 20
// centres 10,000 points apart) fetches no new line per access, whatever
// the stride: the line's finding is its reuse, if any. Not for column-wise
// walks, whose interchange also serves prefetching and vectorization.
bool reloads_from_l1(const NestReuse& reuse) {
  return reuse.loads >= kMinAccesses && 2 * reuse.held >= reuse.loads;
}

// The column-wise, stride or reuse finding of each instruction with a
// pattern, in pc order. Stride findings need kMinAccesses in the streams
// they were read from.
std::vector<MemoryHint> access_pattern_hints(const DecodedTraces& traces,
                                             const std::map<uint64_t, InstructionTotals>& by_pc,
                                             const LineAccesses& lines,
                                             const std::map<uint64_t, Pattern>& patterns,
                                             unsigned line_size, uint64_t capacity_lines) {
  std::vector<MemoryHint> hints;
  LineReuse line_reuse(traces, lines.line_of, line_size, capacity_lines);
  for (const auto& [pc, pattern] : patterns) {
    const InstructionTotals& totals = by_pc.at(pc);
    const TracedInstruction& t = *totals.busiest;
    const StridePattern& stride = pattern.stride;
    const bool stride_finding = stride.column_wise || stride.kind == StrideClass::NonUnit ||
                                stride.kind == StrideClass::Large;
    if (stride_finding && pattern.examined < kMinAccesses) continue;
    std::optional<MemoryHint> hint;
    if (stride.column_wise)
      hint = column_wise_hint(pattern, t);
    else if ((stride.kind == StrideClass::NonUnit || stride.kind == StrideClass::Large) &&
             t.reads && !t.writes && reloads_from_l1(line_reuse.of_instruction(t)))
      hint = reuse_hint(t, line_reuse.of(t), line_size);
    else if (stride.kind == StrideClass::NonUnit) {
      if (!wastes_records(pattern)) continue;  // the loop's other accesses use the rest
      hint = non_unit_stride_hint(pattern, t);
    } else if (stride.kind == StrideClass::Large)
      hint = large_stride_hint(pattern, t, line_size);
    // Reuse through irregular addresses (a bisection's probes, a gather)
    // is none a register can take: the compiler cannot name the reloaded
    // element, and the reloads already hit the L1.
    else if (t.reads && !t.writes && stride.kind != StrideClass::Irregular)
      hint = reuse_hint(t, line_reuse.of(t), line_size);
    if (!hint) continue;
    hint->pc = pc;
    hint->weight = line_accesses(lines, pc, totals);
    hints.push_back(std::move(*hint));
  }
  return hints;
}

// 4K aliasing: a store and a load of one loop in one thread; per pair of
// instructions, the thread and loop where it is most frequent.
// Both instructions' lines reach the threshold, and their streams compared
// hold kMinAccesses each.
std::vector<MemoryHint> aliasing_hints(const Profile& profile, const DecodedTraces& traces,
                                       const std::map<uint64_t, InstructionTotals>& by_pc,
                                       const LineAccesses& lines, uint64_t threshold) {
  std::map<std::pair<uint32_t, int64_t>, std::vector<TracedInstruction>> by_loop;
  for (size_t i = 0; i < traces.all.size(); ++i) {
    const TracedInstruction& t = traces.all[i];
    if (t.accesses < kMinAccesses || traces.region_of[i] == 0) continue;
    if (line_accesses(lines, t.pc, by_pc.at(t.pc)) < threshold) continue;
    by_loop[{t.thread, traces.region_of[i]}].push_back(t);
  }
  std::map<std::pair<uint64_t, uint64_t>, AliasingPair> best;
  for (const auto& [key, instructions] : by_loop) {
    if (instructions.size() < 2) continue;
    for (const AliasingPair& pair : find_4k_aliasing(instructions)) {
      if (pair.fraction < kMinAliasingFraction) continue;
      AliasingPair& b = best[{pair.store_pc, pair.load_pc}];
      if (pair.fraction > b.fraction) b = pair;
    }
  }
  std::vector<MemoryHint> hints;
  for (const auto& [pcs, pair] : best) {
    MemoryHint hint;
    hint.kind = "4k-aliasing";
    // At the load, or at the store when the compiler gave the load no line.
    hint.pc = position_of(profile, pair.load_pc).line != 0 ? pair.load_pc : pair.store_pc;
    auto load = by_pc.find(pair.load_pc);
    hint.weight = load == by_pc.end() ? 0 : load->second.accesses;
    hint.evidence = fmt::format(
        "the load at {} and the earlier store at {} share their low 12 address bits in {:.0f}% "
        "of {} iterations (addresses {} bytes apart, thread {}): the load waits for the store",
        code_location(position_of(profile, pair.load_pc), pair.load_pc),
        code_location(position_of(profile, pair.store_pc), pair.store_pc), 100 * pair.fraction,
        pair.compared, pair.distance, pair.thread);
    hint.suggestion =
        "offset one of the arrays by a cache line or two (pad the allocation, or allocate them "
        "together with 64..128 bytes between), so that they are not a multiple of 4 KiB apart";
    hints.push_back(std::move(hint));
  }
  return hints;
}

// The L1 data cache reuse is judged against: the simulated one when the
// profile has it (meta cache_levels, with the imbalance analysis), else
// weft's default.
uint64_t l1_bytes(const Profile& profile) {
  CacheGeometry geometry;
  const auto& meta = profile.meta();
  if (auto levels = meta.find("cache_levels"); levels != meta.end()) {
    CacheGeometry recorded;
    if (parse_cache_levels(levels->second.c_str(), recorded) && recorded.levels[0].size_bytes > 0)
      geometry = recorded;
  }
  return geometry.levels[0].size_bytes;
}

std::vector<MemoryHint> trace_hints(const Profile& profile, const DecodedTraces& traces) {
  const std::map<uint64_t, InstructionTotals> by_pc = totals_by_pc(traces);
  const uint64_t threshold = std::max(kMinAccesses, traces.total_accesses / kShareDivisor);
  const unsigned line_size = false_sharing_line_size(profile);
  const LineAccesses lines = accesses_by_line(profile, by_pc);
  const std::map<uint64_t, Pattern> patterns =
      stride_patterns(traces, by_pc, lines, threshold, line_size);

  std::vector<MemoryHint> hints = access_pattern_hints(traces, by_pc, lines, patterns, line_size,
                                                       l1_bytes(profile) / line_size);
  std::vector<MemoryHint> aliasing = aliasing_hints(profile, traces, by_pc, lines, threshold);
  hints.insert(hints.end(), std::make_move_iterator(aliasing.begin()),
               std::make_move_iterator(aliasing.end()));
  return hints;
}

}  // namespace

MemoryHints analyze_memory_hints(const Profile& profile, size_t top) {
  MemoryHints out;
  out.traces = profile.has_analysis(AnalysisId::Traces);
  out.false_sharing = profile.has_analysis(AnalysisId::FalseSharing);
  const uint32_t line_size = false_sharing_line_size(profile);

  std::vector<SharingItem> items;
  if (out.false_sharing) items = analyze_false_sharing(profile);
  DecodedTraces traces;
  if (out.traces) traces = decode_traces(profile);

  const std::vector<SyncRecord> sync = profile.sync_events();
  LoopExecutions executions(sync);
  out.schedules = runtime_schedules(profile, sync, executions);
  if (out.traces) {
    std::vector<LoopSchedule> recovered =
        trace_schedules(profile, traces, functions_with_chunks(profile, sync), executions);
    out.schedules.insert(out.schedules.end(), std::make_move_iterator(recovered.begin()),
                         std::make_move_iterator(recovered.end()));
  }
  warn_about_chunks(out.schedules, items, traces, line_size);
  std::stable_sort(out.schedules.begin(), out.schedules.end(),
                   [](const LoopSchedule& a, const LoopSchedule& b) {
                     return std::tie(a.position.file, a.position.line) <
                            std::tie(b.position.file, b.position.line);
                   });

  // The possible data races first, then the worst false-sharing items of
  // at least kMinFalseSharingEvents transfers that are neither negligible
  // nor a hand-over (SharingItem::actionable; events and accesses are not
  // comparable weights), then the trace findings by accesses.
  constexpr size_t kSharingHints = 3;  // per kind
  size_t races = 0, false_sharing = 0;
  for (const SharingItem& item : items) {
    if (item.source_lines.empty()) continue;
    const bool race = item.kind == SharingKind::Unsynchronised;
    if (race ? races == kSharingHints
             : false_sharing == kSharingHints || item.events < kMinFalseSharingEvents ||
                   !item.actionable())
      continue;
    ++(race ? races : false_sharing);
    MemoryHint hint;
    hint.kind = sharing_kind_name(item.kind);
    hint.pc = item.source_lines.front().pc;  // its busiest source line
    hint.weight = item.events;
    std::string offsets;
    for (const ThreadOffsets& t : item.threads)
      offsets +=
          fmt::format("{}t{} {}", offsets.empty() ? "" : ", ", t.thread, format_offsets(t.ranges));
    if (race) {
      hint.evidence = fmt::format(
          "unsynchronised sharing (possible data race): {} unsynchronised write{} on {}; bytes "
          "written over: {}",
          group_digits(item.events), item.events == 1 ? "" : "s", item_headline(item), offsets);
    } else {
      hint.evidence = fmt::format("{} false-sharing transfer{} on {}; bytes used: {}",
                                  group_digits(item.events), item.events == 1 ? "" : "s",
                                  item_headline(item), offsets);
    }
    hint.suggestion = item.fix;
    out.hints.push_back(std::move(hint));
  }
  if (out.traces) {
    std::vector<MemoryHint> from_traces = trace_hints(profile, traces);
    std::stable_sort(from_traces.begin(), from_traces.end(),
                     [](const MemoryHint& a, const MemoryHint& b) { return a.weight > b.weight; });
    out.hints.insert(out.hints.end(), std::make_move_iterator(from_traces.begin()),
                     std::make_move_iterator(from_traces.end()));
  }
  // One finding per kind and source line (unrolled or vectorized copies of
  // an access are several instructions of one line).
  std::vector<MemoryHint> merged;
  for (MemoryHint& hint : out.hints) {
    hint.position = position_of(profile, hint.pc);
    auto same = std::find_if(merged.begin(), merged.end(), [&](const MemoryHint& m) {
      return m.kind == hint.kind && m.position.file == hint.position.file &&
             m.position.line == hint.position.line && !hint.position.file.empty();
    });
    // Trace findings already weigh their whole line; only distinct lines add.
    if (same == merged.end()) merged.push_back(std::move(hint));
  }
  out.hints = std::move(merged);
  if (out.hints.size() > top) out.hints.resize(top);
  SourceLines sources;
  for (MemoryHint& hint : out.hints)
    hint.code = sources.line(hint.position.file, hint.position.line);
  return out;
}

}  // namespace weft
