#include "findings/memory_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "analyzers/traces/traces_tables.h"
#include "common/loop_trace.h"
#include "diagnosis/trace_hints.h"
#include "findings/false_sharing_findings.h"
#include "findings/source_lines.h"

namespace weft {
namespace {

// An instruction is worth a finding when it makes at least this share of
// the traced accesses (and kMinAccesses).
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

// The loops whose chunks the OpenMP runtime handed out, by loop key.
std::vector<LoopSchedule> runtime_schedules(const Profile& profile) {
  struct Loop {
    LoopScheduleKind kind = LoopScheduleKind::Unknown;
    std::map<uint32_t, std::vector<IterationChunk>> chunks;  // by thread
  };
  std::map<uint64_t, Loop> loops;
  for (const SyncRecord& r : profile.omp_loop_chunks()) {
    Loop& loop = loops[omp_loop_key(r.object)];
    if (omp_loop_schedule(r.object) != LoopScheduleKind::Unknown)
      loop.kind = omp_loop_schedule(r.object);
    loop.chunks[r.thread].push_back({r.arg0, r.arg1});
  }
  std::vector<LoopSchedule> out;
  for (auto& [key, loop] : loops) {
    std::vector<std::vector<IterationChunk>> per_thread;
    for (auto& [thread, chunks] : loop.chunks) per_thread.push_back(std::move(chunks));
    LoopSchedule s;
    s.pc = key;
    s.position = position_of(profile, key);
    s.schedule = classify_schedule(per_thread, runtime_kind(loop.kind));
    s.name = schedule_name(s.schedule);
    s.source = "runtime";
    out.push_back(std::move(s));
  }
  return out;
}

struct DecodedTraces {
  std::vector<TracedInstruction> all;
  std::vector<int64_t> region_of;  // parallel to `all`
  uint64_t total_accesses = 0;
};

DecodedTraces decode_traces(const Profile& profile) {
  DecodedTraces d;
  for (MemoryTraceInfo& t : memory_traces(profile)) {
    TracedInstruction i;
    i.thread = t.thread;
    i.pc = t.pc;
    i.access_size = t.access_size;
    i.reads = t.reads;
    i.writes = t.writes;
    i.accesses = t.accesses;
    i.lost = t.lost;
    i.trace = decode_loop_trace(t.encoding.data(), t.encoding.size());
    d.total_accesses += t.accesses;
    d.all.push_back(std::move(i));
    d.region_of.push_back(t.region_id);
  }
  return d;
}

// Loops of outlined parallel bodies without runtime chunks: the schedule
// is recovered from which iterations each thread's instructions touched.
std::vector<LoopSchedule> trace_schedules(const Profile& profile, const DecodedTraces& traces,
                                          const std::vector<LoopSchedule>& from_runtime) {
  std::set<std::string> functions_with_chunks;
  for (const LoopSchedule& s : from_runtime) functions_with_chunks.insert(s.position.function);
  std::map<int64_t, RegionInfo> regions;
  for (RegionInfo& r : profile.regions()) regions[r.id] = std::move(r);
  const uint32_t threads = profile.thread_count();

  // region -> pc -> streams (one per thread), for the loops of outlined
  // bodies (the pc's physical function) without runtime chunks.
  std::map<uint64_t, bool> candidate_pc;
  std::map<int64_t, std::map<uint64_t, std::vector<TracedInstruction>>> by_region;
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
    if (known->second) by_region[region->first][pc].push_back(traces.all[i]);
  }
  std::vector<LoopSchedule> out;
  for (auto& [region_id, pcs] : by_region) {
    std::vector<std::vector<TracedInstruction>> candidates;
    std::vector<uint64_t> candidate_pcs;
    for (auto& [pc, streams] : pcs) {
      if (streams.size() < 2) continue;  // a loop one thread ran tells no schedule
      candidates.push_back(std::move(streams));
      candidate_pcs.push_back(pc);
    }
    const std::optional<size_t> pick = pick_representative(candidates);
    if (!pick) continue;
    LoopSchedule s;
    s.schedule = schedule_from_traces(candidates[*pick], threads);
    if (s.schedule.kind == ScheduleKind::Unknown) continue;
    s.pc = candidate_pcs[*pick];
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

// reuse_degree over several instructions' addresses together.
ReuseDegree reuse_degree_of(const std::vector<const TracedInstruction*>& group) {
  if (group.size() == 1) return reuse_degree(*group.front());
  constexpr uint64_t kLimit = uint64_t{1} << 22;
  std::unordered_set<uint64_t> distinct;
  ReuseDegree r;
  for (const TracedInstruction* t : group) {
    if (r.addresses >= kLimit) break;
    expand_loop_trace(
        t->trace,
        [&](uint64_t a) {
          distinct.insert(a);
          ++r.addresses;
        },
        kLimit - r.addresses);
  }
  r.distinct = distinct.size();
  r.degree = r.distinct ? static_cast<double>(r.addresses) / static_cast<double>(r.distinct) : 0;
  return r;
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

struct Pattern {
  StridePattern stride;
  std::string line;  // "file:line", empty when unknown
};

bool may_be_unrolled(const Pattern& p) {
  return !p.line.empty() && p.stride.kind != StrideClass::Irregular && !p.stride.column_wise;
}

// An unrolled loop is several copies of one access on one source line,
// each striding over the others' elements: n copies with the same stride
// and size walk memory with stride / n together.
void merge_unrolled_copies(std::map<uint64_t, Pattern>& patterns,
                           const std::map<uint64_t, InstructionTotals>& by_pc, unsigned line_size) {
  std::map<std::tuple<std::string, int64_t, uint32_t, bool>, int64_t> copies;
  for (const auto& [pc, p] : patterns) {
    const TracedInstruction& t = *by_pc.at(pc).busiest;
    if (may_be_unrolled(p)) ++copies[{p.line, p.stride.stride, t.access_size, t.writes}];
  }
  for (auto& [pc, p] : patterns) {
    if (!may_be_unrolled(p)) continue;
    const TracedInstruction& t = *by_pc.at(pc).busiest;
    StridePattern& stride = p.stride;
    const int64_t n = copies.at({p.line, stride.stride, t.access_size, t.writes});
    if (n > 1 && stride.stride % n == 0) {
      stride.stride /= n;
      const uint64_t step = static_cast<uint64_t>(std::llabs(stride.stride));
      stride.kind = step == 0               ? StrideClass::Zero
                    : step <= t.access_size ? StrideClass::Unit
                    : step < line_size      ? StrideClass::NonUnit
                                            : StrideClass::Large;
    }
  }
}

// The access pattern of each instruction whose source line (or itself,
// without one) reaches the threshold, as its busiest thread walks memory.
std::map<uint64_t, Pattern> stride_patterns(const std::map<uint64_t, InstructionTotals>& by_pc,
                                            const LineAccesses& lines, uint64_t threshold,
                                            unsigned line_size) {
  std::map<uint64_t, Pattern> patterns;
  for (const auto& [pc, totals] : by_pc) {
    auto line = lines.line_of.find(pc);
    if ((line == lines.line_of.end() ? totals.accesses : lines.accesses.at(line->second)) <
        threshold)
      continue;
    patterns.emplace(pc, Pattern{stride_pattern(*totals.busiest, line_size),
                                 line == lines.line_of.end() ? "" : line->second});
  }
  merge_unrolled_copies(patterns, by_pc, line_size);
  return patterns;
}

MemoryHint column_wise_hint(const StridePattern& stride, const TracedInstruction& t) {
  MemoryHint hint;
  hint.kind = "column-wise";
  hint.evidence = fmt::format(
      "the inner loop moves by {} bytes while an enclosing loop moves by {} ({:.0f}% of {} "
      "accesses of thread {}): each access touches a new line",
      stride.stride, stride.outer_stride, 100 * stride.coverage, t.accesses, t.thread);
  hint.suggestion =
      "interchange the loops so that the innermost one walks the contiguous dimension, or "
      "transpose the array";
  return hint;
}

MemoryHint non_unit_stride_hint(const StridePattern& stride, const TracedInstruction& t) {
  MemoryHint hint;
  hint.kind = "non-unit-stride";
  hint.evidence = fmt::format(
      "stride {} bytes on {}-byte accesses ({:.0f}% of {} accesses of thread {}): {:.0f}% of "
      "each line fetched is used",
      stride.stride, t.access_size, 100 * stride.coverage, t.accesses, t.thread,
      100.0 * t.access_size / static_cast<double>(std::llabs(stride.stride)));
  hint.suggestion =
      "split the interleaved data into separate arrays (structure of arrays) so that the "
      "loop reads consecutive elements";
  return hint;
}

MemoryHint large_stride_hint(const StridePattern& stride, const TracedInstruction& t,
                             unsigned line_size) {
  MemoryHint hint;
  hint.kind = "large-stride";
  hint.evidence = fmt::format(
      "stride {} bytes ({:.0f}% of {} accesses of thread {}): every access loads a new "
      "{}-byte line",
      stride.stride, 100 * stride.coverage, t.accesses, t.thread, line_size);
  hint.suggestion =
      "reorder the loops or the data so that consecutive iterations use "
      "neighbouring addresses";
  return hint;
}

// The reuse degree of the loads of one source line in one thread together
// (an unrolled repetition is several instructions reading the same data),
// computed once per line: its instructions' findings merge later.
class LineReuse {
 public:
  LineReuse(const DecodedTraces& traces, const std::map<uint64_t, std::string>& line_of)
      : traces_(traces), line_of_(line_of) {}

  const ReuseDegree& of(const TracedInstruction& load) {
    const std::pair<uint32_t, std::string> key{load.thread, line_key(load.pc)};
    auto found = reuse_.find(key);
    if (found != reuse_.end()) return found->second;
    std::vector<const TracedInstruction*> group;
    for (const TracedInstruction& other : traces_.all) {
      if (other.thread != load.thread || !other.reads || other.writes) continue;
      if (line_key(other.pc) == key.second) group.push_back(&other);
    }
    return reuse_.emplace(key, reuse_degree_of(group)).first->second;
  }

 private:
  // "file:line", or the pc in decimal without a source line.
  std::string line_key(uint64_t pc) const {
    auto line = line_of_.find(pc);
    return line == line_of_.end() ? std::to_string(pc) : line->second;
  }

  const DecodedTraces& traces_;
  const std::map<uint64_t, std::string>& line_of_;
  std::map<std::pair<uint32_t, std::string>, ReuseDegree> reuse_;
};

std::optional<MemoryHint> reuse_hint(const TracedInstruction& t, const ReuseDegree& reuse) {
  // A loop-invariant scalar (a handful of addresses) is not data reuse.
  if (reuse.degree < kMinReuseDegree || reuse.distinct < kMinReuseAddresses) return std::nullopt;
  MemoryHint hint;
  hint.kind = "reuse";
  hint.evidence =
      fmt::format("thread {} loads each of its {} addresses {:.1f} times on average ({} accesses)",
                  t.thread, reuse.distinct, reuse.degree, reuse.addresses);
  hint.suggestion =
      "the data is reused: keep it in a local variable or register across the repeated "
      "loads, or block the loop so that the reuses happen while it is still in L1";
  return hint;
}

// The column-wise, stride or reuse finding of each instruction with a
// pattern, in pc order.
std::vector<MemoryHint> access_pattern_hints(const DecodedTraces& traces,
                                             const std::map<uint64_t, InstructionTotals>& by_pc,
                                             const LineAccesses& lines,
                                             const std::map<uint64_t, Pattern>& patterns,
                                             unsigned line_size) {
  std::vector<MemoryHint> hints;
  LineReuse line_reuse(traces, lines.line_of);
  for (const auto& [pc, pattern] : patterns) {
    const InstructionTotals& totals = by_pc.at(pc);
    const TracedInstruction& t = *totals.busiest;
    const StridePattern& stride = pattern.stride;
    std::optional<MemoryHint> hint;
    if (stride.column_wise)
      hint = column_wise_hint(stride, t);
    else if (stride.kind == StrideClass::NonUnit)
      hint = non_unit_stride_hint(stride, t);
    else if (stride.kind == StrideClass::Large)
      hint = large_stride_hint(stride, t, line_size);
    else if (t.reads && !t.writes)
      hint = reuse_hint(t, line_reuse.of(t));
    if (!hint) continue;
    hint->pc = pc;
    hint->weight = pattern.line.empty() ? totals.accesses : lines.accesses.at(pattern.line);
    hints.push_back(std::move(*hint));
  }
  return hints;
}

// 4K aliasing: a store and a load of one loop in one thread; per pair of
// instructions, the thread and loop where it is most frequent.
std::vector<MemoryHint> aliasing_hints(const Profile& profile, const DecodedTraces& traces,
                                       const std::map<uint64_t, InstructionTotals>& by_pc) {
  std::map<std::pair<uint32_t, int64_t>, std::vector<TracedInstruction>> by_loop;
  for (size_t i = 0; i < traces.all.size(); ++i)
    if (traces.all[i].accesses >= kMinAccesses && traces.region_of[i] != 0)
      by_loop[{traces.all[i].thread, traces.region_of[i]}].push_back(traces.all[i]);
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
        "the load and the store at {} share their low 12 address bits in {:.0f}% of {} "
        "iterations (addresses {} bytes apart, thread {}): the load waits for the store",
        code_location(position_of(profile, pair.store_pc), pair.store_pc), 100 * pair.fraction,
        pair.compared, pair.distance, pair.thread);
    hint.suggestion =
        "offset one of the arrays by a cache line or two (pad the allocation, or allocate them "
        "together with 64..128 bytes between), so that they are not a multiple of 4 KiB apart";
    hints.push_back(std::move(hint));
  }
  return hints;
}

std::vector<MemoryHint> trace_hints(const Profile& profile, const DecodedTraces& traces) {
  const std::map<uint64_t, InstructionTotals> by_pc = totals_by_pc(traces);
  const uint64_t threshold = std::max(kMinAccesses, traces.total_accesses / kShareDivisor);
  const unsigned line_size = false_sharing_line_size(profile);
  const LineAccesses lines = accesses_by_line(profile, by_pc);
  const std::map<uint64_t, Pattern> patterns = stride_patterns(by_pc, lines, threshold, line_size);

  std::vector<MemoryHint> hints = access_pattern_hints(traces, by_pc, lines, patterns, line_size);
  std::vector<MemoryHint> aliasing = aliasing_hints(profile, traces, by_pc);
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

  out.schedules = runtime_schedules(profile);
  if (out.traces) {
    std::vector<LoopSchedule> recovered = trace_schedules(profile, traces, out.schedules);
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
  // at least kMinFalseSharingEvents transfers (events and accesses are not
  // comparable weights), then the trace findings by accesses.
  constexpr size_t kSharingHints = 3;  // per kind
  size_t races = 0, false_sharing = 0;
  for (const SharingItem& item : items) {
    if (item.source_lines.empty()) continue;
    const bool race = item.kind == SharingKind::Unsynchronised;
    if (race ? races == kSharingHints
             : false_sharing == kSharingHints || item.events < kMinFalseSharingEvents)
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
