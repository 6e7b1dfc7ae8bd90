#include "diagnosis/schedule_recovery.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

// Inference of the schedule from runs (no runtime kind)
// ----------------------------------------------------
// A thread's chunks that follow each other in its execution order and in
// iteration space are merged into one run first: a trace shows a thread
// that took chunk k and then chunk k+1 as one run. Let N be the iteration
// count, T the team size (chunks_per_thread.size()), the runs sorted by
// their first iteration, the final run the one holding the last iteration
// and "non-final" all the others. Checked in this order:
//
// 1. static (unchunked): every thread has at most one run, the runs are in
//    thread order (a lower thread number gets a lower block), and either the
//    team's block sizes (0 for a thread without one) differ by at most 1
//    (libgomp, libomp's balanced split) or block k is [k*B, (k+1)*B) with
//    B = ceil(N/T), the last one short (libomp's greedy split).
// 2. static,c: at least 2 runs; run k is [k*c, (k+1)*c) (the last may be
//    short) with c the first run's size, and belongs to thread k mod T
//    (round-robin in thread order; such chunks never merge when T >= 2).
// 3. guided: the runs must show chunks that shrink with the iterations left.
//    Non-increasing sizes in iteration order would be the exact test, but a
//    merged run is the sum of two or more consecutive guided chunks and so
//    breaks monotonicity anywhere. Merging only makes runs larger, though,
//    and both runtimes hand out, at R iterations left, a chunk of at least
//    R/(2T) - 1 (libgomp: max(ceil(R/T), min); libomp: floor(R/(2T)), or
//    the minimum once R < 2T(min + 1)). So guided needs
//      a. at least 2 non-final runs,
//      b. every non-final run j holding at least R_j/(2T) - 1 iterations,
//         R_j = the iterations left at its start (this is what rejects
//         dynamic: with chunk c < N/(2T), the early runs would need about
//         N/(2Tc) merged chunks each),
//      c. and evidence that the chunks shrink, either
//         - the first run more than twice the smallest non-final run, unless
//           all non-final runs are multiples of that smallest one and it is
//           > 1 (dynamic with large chunks whose first ones merged), or
//         - a guided sequence that reproduces every run boundary (see
//           below) and whose first chunk is larger than its smallest one
//           (this catches power-of-two sequences such as 512, 256, ... and
//           sequences whose first chunk is only twice the minimum).
//    The sequences tried: libgomp's rule, max(ceil(R/(2T)), min), and
//    libomp's actual floor/threshold rule, with T = the team size or the
//    threads that ran iterations and min = 1 .. the smallest non-final run;
//    a sequence fits when every run starts at one of its chunk boundaries
//    (merges only hide boundaries). The fit implying the fewest merges wins
//    (maximum likelihood when a boundary hides with probability < 1/2;
//    ties: the smaller min). The chunk reported is the smallest non-final
//    chunk of that sequence, else the smallest non-final run: exact when
//    the runs show the tail's boundaries; when merges hide them it can be
//    larger than what the runtime handed out (never smaller in the tests).
// 4. dynamic,c: c = the gcd of the non-final runs, accepted when some
//    non-final run is exactly c (an unmerged chunk; all others are then
//    multiples of it). Round-robin assignments were taken by rule 2.
// 5. otherwise Unknown (e.g. a single run that is not a static block, or
//    dynamic whose every non-final chunk merged).

namespace weft {
namespace {

struct Run {
  int64_t begin = 0;
  int64_t end = 0;
  uint32_t thread = 0;
  int64_t size() const { return end - begin; }
};

struct Prepared {
  std::string problem;    // non-empty: the chunks do not tile one range
  std::vector<Run> runs;  // sorted by begin; relative to the first iteration
  int64_t n = 0;
  unsigned active = 0;  // threads with a run
  int64_t team = 1;     // chunks_per_thread.size(), at least 1
};

Prepared prepare(const std::vector<std::vector<IterationChunk>>& chunks_per_thread, bool merge) {
  Prepared p;
  p.team = std::max<int64_t>(1, static_cast<int64_t>(chunks_per_thread.size()));
  for (size_t t = 0; t < chunks_per_thread.size(); ++t) {
    bool any = false;
    for (const IterationChunk& chunk : chunks_per_thread[t]) {
      if (chunk.end < chunk.begin) {
        p.problem = "a chunk ends before it begins";
        return p;
      }
      if (chunk.end == chunk.begin) continue;
      any = true;
      if (merge && !p.runs.empty() && p.runs.back().thread == t &&
          p.runs.back().end == chunk.begin) {
        p.runs.back().end = chunk.end;
      } else {
        p.runs.push_back({chunk.begin, chunk.end, static_cast<uint32_t>(t)});
      }
    }
    p.active += any ? 1 : 0;
  }
  if (p.runs.empty()) {
    p.problem = "no iterations";
    return p;
  }
  std::sort(p.runs.begin(), p.runs.end(), [](const Run& a, const Run& b) {
    return std::tie(a.begin, a.end, a.thread) < std::tie(b.begin, b.end, b.thread);
  });
  const int64_t first = p.runs.front().begin;
  for (size_t i = 1; i < p.runs.size(); ++i) {
    if (p.runs[i].begin < p.runs[i - 1].end) {
      p.problem = "chunks overlap at iteration " + std::to_string(p.runs[i].begin);
      return p;
    }
    if (p.runs[i].begin > p.runs[i - 1].end) {
      p.problem = "no chunk holds iteration " + std::to_string(p.runs[i - 1].end);
      return p;
    }
  }
  for (Run& run : p.runs) {
    run.begin -= first;
    run.end -= first;
  }
  p.n = p.runs.back().end;
  return p;
}

std::string header(const Prepared& p) {
  return std::to_string(p.active) + (p.active == 1 ? " thread, " : " threads, ") +
         std::to_string(p.n) + " iterations";
}

// Every thread at most one run, runs in thread order.
bool one_block_per_thread(const Prepared& p) {
  for (size_t k = 1; k < p.runs.size(); ++k) {
    if (p.runs[k].thread <= p.runs[k - 1].thread) return false;
  }
  return true;
}

bool static_blocks(const Prepared& p) {
  if (!one_block_per_thread(p)) return false;
  // Balanced: the team's sizes (0 without a block) differ by at most 1.
  int64_t lo =
      p.runs.size() < static_cast<size_t>(p.team) ? 0 : std::numeric_limits<int64_t>::max();
  int64_t hi = 0;
  for (const Run& run : p.runs) lo = std::min(lo, run.size()), hi = std::max(hi, run.size());
  if (hi - lo <= 1) return true;
  // Greedy: block k = [k*B, (k+1)*B), B = ceil(N/T), for thread k.
  const int64_t block = (p.n + p.team - 1) / p.team;
  for (size_t k = 0; k < p.runs.size(); ++k) {
    const int64_t begin = static_cast<int64_t>(k) * block;
    if (p.runs[k].thread != k || p.runs[k].begin != begin ||
        p.runs[k].end != std::min(begin + block, p.n)) {
      return false;
    }
  }
  return true;
}

bool static_round_robin(const Prepared& p, int64_t& chunk) {
  if (p.runs.size() < 2) return false;
  const int64_t c = p.runs.front().size();
  for (size_t k = 0; k < p.runs.size(); ++k) {
    const Run& run = p.runs[k];
    const int64_t begin = static_cast<int64_t>(k) * c;
    if (run.begin != begin || run.end != std::min(begin + c, p.n) ||
        run.thread != static_cast<int64_t>(k) % p.team) {
      return false;
    }
  }
  chunk = c;
  return true;
}

// Sizes of the runs (or chunks) but the final one (the one ending at n).
std::vector<int64_t> non_final_sizes(const Prepared& p) {
  std::vector<int64_t> sizes;
  for (const Run& run : p.runs) {
    if (run.end != p.n) sizes.push_back(run.size());
  }
  return sizes;
}

int64_t gcd_of(const std::vector<int64_t>& sizes) {
  int64_t g = 0;
  for (int64_t s : sizes) g = std::gcd(g, s);
  return g;
}

// The most frequent size (ties: the smaller); the gcd when some size is not
// a multiple of it.
int64_t mode_or_gcd(const std::vector<int64_t>& sizes) {
  std::map<int64_t, size_t> counts;
  for (int64_t s : sizes) ++counts[s];
  int64_t mode = 0;
  size_t best = 0;
  for (const auto& [size, count] : counts) {
    if (count > best) mode = size, best = count;
  }
  for (int64_t s : sizes) {
    if (s % mode != 0) return gcd_of(sizes);
  }
  return mode;
}

enum class GuidedRule { Libgomp, LibompCeil, Libomp };

const char* rule_name(GuidedRule rule) {
  switch (rule) {
    case GuidedRule::Libgomp:
      return "libgomp max(ceil(R/T), min)";
    case GuidedRule::LibompCeil:
      return "max(ceil(R/(2T)), min)";
    case GuidedRule::Libomp:
      return "libomp floor(R/(2T))";
  }
  return "";
}

int64_t guided_chunk(GuidedRule rule, int64_t remaining, int64_t threads, int64_t min_chunk) {
  int64_t q = 0;
  switch (rule) {
    case GuidedRule::Libgomp:
      q = std::max((remaining + threads - 1) / threads, min_chunk);
      break;
    case GuidedRule::LibompCeil:
      q = std::max((remaining + 2 * threads - 1) / (2 * threads), min_chunk);
      break;
    case GuidedRule::Libomp:
      // kmp_sch_guided_iterative_chunked: below 2T(min + 1) iterations left,
      // chunks of min; above, remaining * (0.5 / T) in double, truncated.
      if (remaining < 2 * threads * (min_chunk + 1)) {
        q = min_chunk;
      } else {
        q = static_cast<int64_t>(static_cast<double>(remaining) *
                                 (0.5 / static_cast<double>(threads)));
      }
      break;
  }
  return std::clamp<int64_t>(q, 1, remaining);
}

struct GuidedSequence {
  int64_t chunks = -1;   // -1: some run starts inside one of its chunks
  int64_t first = 0;     // its first chunk
  int64_t smallest = 0;  // its smallest chunk but the final one
};

// The guided sequence (rule, threads, min_chunk) over n iterations, and
// whether every run starts at one of its chunk boundaries.
GuidedSequence guided_sequence(const Prepared& p, GuidedRule rule, int64_t threads,
                               int64_t min_chunk) {
  GuidedSequence sequence;
  int64_t position = 0;
  int64_t chunks = 0;
  size_t next = 0;  // the next run start to meet
  while (position < p.n) {
    if (next < p.runs.size() && p.runs[next].begin < position) return sequence;  // inside a chunk
    if (next < p.runs.size() && p.runs[next].begin == position) ++next;
    const int64_t chunk = guided_chunk(rule, p.n - position, threads, min_chunk);
    if (chunks == 0) sequence.first = chunk;
    if (position + chunk < p.n || chunks == 0) {
      sequence.smallest = chunks == 0 ? chunk : std::min(sequence.smallest, chunk);
    }
    position += chunk;
    ++chunks;
  }
  if (next == p.runs.size()) sequence.chunks = chunks;
  return sequence;
}

struct GuidedFit {
  bool fits = false;
  GuidedRule rule = GuidedRule::Libgomp;
  int64_t min_chunk = 0;  // the rule's parameter
  int64_t first = 0;      // the sequence's first chunk
  int64_t smallest = 0;   // the sequence's smallest chunk but the final one
};

// The guided sequence that explains the runs with the fewest merges (ties:
// the smaller minimum, then libgomp, libomp-ceil, libomp; the team size
// before the active thread count): a maximum-likelihood choice when a
// boundary is hidden with probability < 1/2. Every non-final run holds at
// least one chunk of at least the minimum, so the candidate minimums are
// 1 .. smallest (beyond kCandidates, only the divisors of smallest).
GuidedFit fit_guided(const Prepared& p, int64_t smallest) {
  GuidedFit best;
  if (smallest <= 0) return best;
  constexpr int64_t kCandidates = 4096;
  std::vector<int64_t> candidates;
  for (int64_t d = 1; d <= std::min(smallest, kCandidates); ++d) candidates.push_back(d);
  for (int64_t d = 1; d <= smallest / d; ++d) {
    if (smallest % d == 0) {
      if (d > kCandidates) candidates.push_back(d);
      if (smallest / d > kCandidates) candidates.push_back(smallest / d);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<int64_t> team_sizes{p.team};
  if (p.active != p.team && p.active > 0) team_sizes.push_back(p.active);
  int64_t best_merges = 0;
  for (int64_t m : candidates) {
    for (GuidedRule rule : {GuidedRule::Libgomp, GuidedRule::LibompCeil, GuidedRule::Libomp}) {
      for (int64_t threads : team_sizes) {
        const GuidedSequence sequence = guided_sequence(p, rule, threads, m);
        if (sequence.chunks < 0) continue;
        const int64_t merges = sequence.chunks - static_cast<int64_t>(p.runs.size());
        if (!best.fits || merges < best_merges) {
          best = {true, rule, m, sequence.first, sequence.smallest};
          best_merges = merges;
        }
      }
    }
  }
  return best;
}

// The guided chunk to report: the smallest non-final chunk of the fitted
// sequence (what the runtime handed out, merged or not), else the smallest
// non-final run.
int64_t guided_minimum(const GuidedFit& fit, int64_t smallest, std::string& note) {
  if (fit.fits) {
    note = std::string(rule_name(fit.rule)) + " with minimum " + std::to_string(fit.min_chunk) +
           " fits every boundary, smallest chunk " + std::to_string(fit.smallest);
    return fit.smallest;
  }
  note = "no runtime sequence fits, smallest run " + std::to_string(smallest);
  return smallest;
}

const char* kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::Static:
      return "static";
    case ScheduleKind::Dynamic:
      return "dynamic";
    case ScheduleKind::Guided:
      return "guided";
    case ScheduleKind::Unknown:
      return "unknown";
  }
  return "unknown";
}

RecoveredSchedule from_runtime(const std::vector<std::vector<IterationChunk>>& chunks_per_thread,
                               ScheduleKind kind) {
  RecoveredSchedule result;
  result.kind = kind;
  const Prepared p = prepare(chunks_per_thread, /*merge=*/false);
  result.iterations = p.n;
  result.threads = p.active;
  const std::string from = std::string("runtime ") + kind_name(kind) + ": ";
  if (!p.problem.empty()) {
    result.evidence = from + p.problem;
    return result;
  }
  const std::vector<int64_t> non_final = non_final_sizes(p);
  std::string note;
  if (kind == ScheduleKind::Static && one_block_per_thread(p)) {
    result.chunk = 0;
    note = "one block per thread in thread order";
  } else if (kind == ScheduleKind::Guided) {
    const int64_t smallest = non_final.empty()
                                 ? p.runs.front().size()
                                 : *std::min_element(non_final.begin(), non_final.end());
    result.chunk = guided_minimum(fit_guided(p, smallest), smallest, note);
  } else {
    result.chunk = non_final.empty() ? p.runs.front().size() : mode_or_gcd(non_final);
    note = std::to_string(p.runs.size()) + " chunks, chunk " + std::to_string(result.chunk);
  }
  result.evidence = from + header(p) + ", " + note;
  return result;
}

// Rule 3b: every non-final run holds at least R/(2T) - 1 iterations, R the
// iterations left at its start.
bool runs_keep_up_with_guided(const Prepared& p, int64_t threads) {
  for (const Run& run : p.runs) {
    if (run.end == p.n) continue;
    // 2T(size + 1) >= remaining, i.e. size + 1 >= ceil(remaining / 2T).
    const int64_t remaining = p.n - run.begin;
    if (run.size() + 1 < (remaining + 2 * threads - 1) / (2 * threads)) return false;
  }
  return true;
}

// Rules 3 to 5 (guided, dynamic, else unknown) for runs that are neither
// static form: sets the kind, chunk and evidence of `result`.
void classify_guided_or_dynamic(const Prepared& p, const std::string& head,
                                RecoveredSchedule& result) {
  const std::string runs = std::to_string(p.runs.size()) + " runs";
  const std::vector<int64_t> non_final = non_final_sizes(p);
  if (non_final.empty()) {
    result.evidence = head + ", a single run that is not a static block";
    return;
  }
  const int64_t smallest = *std::min_element(non_final.begin(), non_final.end());
  const int64_t g = gcd_of(non_final);
  const bool multiples_of_smallest = g == smallest;

  // 3. guided.
  const int64_t threads = std::max<int64_t>(p.team, p.active);
  const int64_t first = p.runs.front().size();
  const GuidedFit fit = fit_guided(p, smallest);
  const bool guided = non_final.size() >= 2 &&
                      ((first > 2 * smallest && !(multiples_of_smallest && smallest > 1)) ||
                       (fit.fits && fit.first > fit.smallest)) &&
                      runs_keep_up_with_guided(p, threads);
  if (guided) {
    std::string note;
    result.kind = ScheduleKind::Guided;
    result.chunk = guided_minimum(fit, smallest, note);
    result.evidence = head + ", " + runs + " from " + std::to_string(first) + " down to " +
                      std::to_string(smallest) + ", each >= remaining/" +
                      std::to_string(2 * threads) + " - 1; " + note;
    return;
  }
  // 4. dynamic.
  if (multiples_of_smallest) {
    const auto exact = std::count(non_final.begin(), non_final.end(), g);
    result.kind = ScheduleKind::Dynamic;
    result.chunk = g;
    result.evidence = head + ", " + runs + ", all multiples of " + std::to_string(g) + " (" +
                      std::to_string(exact) + " exactly " + std::to_string(g) +
                      "), not round-robin";
    return;
  }
  result.evidence = head + ", " + runs + ": no schedule fits (gcd " + std::to_string(g) +
                    ", smallest non-final run " + std::to_string(smallest) + ")";
}

}  // namespace

std::string schedule_name(const RecoveredSchedule& schedule) {
  if (schedule.kind == ScheduleKind::Unknown) return "unknown";
  std::string name = kind_name(schedule.kind);
  if (schedule.chunk > 0) name += "," + std::to_string(schedule.chunk);
  return name;
}

RecoveredSchedule classify_schedule(
    const std::vector<std::vector<IterationChunk>>& chunks_per_thread,
    std::optional<ScheduleKind> runtime_kind) {
  if (runtime_kind && *runtime_kind != ScheduleKind::Unknown) {
    return from_runtime(chunks_per_thread, *runtime_kind);
  }
  RecoveredSchedule result;
  const Prepared p = prepare(chunks_per_thread, /*merge=*/true);
  result.iterations = p.n;
  result.threads = p.active;
  if (!p.problem.empty()) {
    result.evidence = p.problem;
    return result;
  }
  const std::string head = header(p);

  // 1. static, one block per thread.
  if (static_blocks(p)) {
    int64_t lo = p.n, hi = 0;
    for (const Run& run : p.runs) lo = std::min(lo, run.size()), hi = std::max(hi, run.size());
    result.kind = ScheduleKind::Static;
    result.evidence = head + ", one block per thread in thread order, sizes " + std::to_string(lo) +
                      ".." + std::to_string(hi);
    return result;
  }
  // 2. static,c: round-robin.
  int64_t chunk = 0;
  if (static_round_robin(p, chunk)) {
    result.kind = ScheduleKind::Static;
    result.chunk = chunk;
    result.evidence = head + ", " + std::to_string(p.runs.size()) + " chunks of " +
                      std::to_string(chunk) + ", round-robin in thread order";
    return result;
  }
  classify_guided_or_dynamic(p, head, result);
  return result;
}

namespace {

// Walks the addresses of each stream's pieces: visit(piece, address) for
// every access of a piece, in each stream's order; a piece reaching past the
// trace's end calls past_end(piece).
template <class Visit, class PastEnd>
void walk_pieces(const std::vector<TracedInstruction>& streams,
                 const std::vector<std::vector<const StreamPiece*>>& by_stream, Visit&& visit,
                 PastEnd&& past_end) {
  for (size_t s = 0; s < streams.size(); ++s) {
    const std::vector<const StreamPiece*>& mine = by_stream[s];
    if (mine.empty()) continue;
    size_t next = 0;
    uint64_t index = 0;
    expand_loop_trace(
        streams[s].trace,
        [&](uint64_t a) {
          while (next < mine.size() && mine[next]->end <= index) ++next;
          if (next < mine.size() && mine[next]->begin <= index) visit(*mine[next], a);
          ++index;
        },
        mine.back()->end);
    for (; next < mine.size(); ++next)
      if (mine[next]->end > index) past_end(*mine[next]);
  }
}

}  // namespace

std::vector<std::optional<ThreadChunks>> chunks_per_execution(
    const std::vector<TracedInstruction>& streams, const std::vector<StreamPiece>& pieces,
    size_t executions, uint32_t thread_count) {
  constexpr uint64_t kMaxAddresses = uint64_t{1} << 30;
  std::vector<std::optional<ThreadChunks>> result(executions);
  if (thread_count == 0 || executions == 0) return result;

  // Each stream's pieces in order; an execution is refused (bad) on any
  // violation of the rules.
  std::vector<std::vector<const StreamPiece*>> by_stream(streams.size());
  for (const StreamPiece& piece : pieces) {
    if (piece.stream >= streams.size() || piece.execution >= executions || piece.begin >= piece.end)
      continue;
    by_stream[piece.stream].push_back(&piece);
  }
  struct Execution {
    bool bad = false;
    bool seen = false;  // some piece
    uint64_t n = 0;
    uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
    int direction = 0;  // +1: addresses grow with the iterations, -1: shrink
    uint64_t stride = 0;
    std::vector<bool> threads;  // threads with a stream in it
    std::vector<bool> taken;    // by iteration
  };
  std::vector<Execution> ex(executions);
  for (size_t s = 0; s < streams.size(); ++s) {
    auto& mine = by_stream[s];
    std::sort(mine.begin(), mine.end(), [](const StreamPiece* a, const StreamPiece* b) {
      return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
    });
    const TracedInstruction& stream = streams[s];
    std::set<size_t> in;
    for (size_t k = 0; k < mine.size(); ++k) {
      Execution& e = ex[mine[k]->execution];
      e.seen = true;
      if (k > 0 && mine[k]->begin < mine[k - 1]->end) e.bad = true;  // overlapping pieces
      // A lossy stream recorded its first accesses only (its budget, or its
      // share of it, ran out): its executions past them are unknown.
      if (mine[k]->end > stream.accesses - std::min(stream.lost, stream.accesses) ||
          stream.thread >= thread_count)
        e.bad = true;
      in.insert(mine[k]->execution);
    }
    for (size_t id : in) {
      Execution& e = ex[id];
      if (e.threads.empty()) e.threads.assign(thread_count, false);
      if (stream.thread < thread_count) {
        if (e.threads[stream.thread]) e.bad = true;  // two streams of one thread
        e.threads[stream.thread] = true;
      }
    }
  }

  // At most kMaxAddresses per execution; only the pieces of executions
  // still in the running are expanded.
  std::vector<uint64_t> sizes(executions, 0);
  for (const auto& mine : by_stream)
    for (const StreamPiece* piece : mine) {
      uint64_t& size = sizes[piece->execution];
      size = std::min(size + (piece->end - piece->begin), kMaxAddresses + 1);
    }
  for (size_t id = 0; id < executions; ++id)
    if (sizes[id] > kMaxAddresses) ex[id].bad = true;
  for (auto& mine : by_stream)
    std::erase_if(mine, [&](const StreamPiece* piece) { return ex[piece->execution].bad; });

  // Pass 1: per execution the addresses' range and count, and per stream
  // whether they grow or shrink.
  struct StreamState {
    uint64_t count = 0;
    uint64_t first = 0;
    int64_t previous = -1;  // pass 2: the previous iteration
  };
  std::vector<std::map<size_t, StreamState>> state(streams.size());
  const StreamPiece* current = nullptr;
  StreamState* st = nullptr;
  auto state_of = [&](const StreamPiece& piece) -> StreamState& {
    if (&piece != current) {
      current = &piece;
      st = &state[piece.stream][piece.execution];
    }
    return *st;
  };
  walk_pieces(
      streams, by_stream,
      [&](const StreamPiece& piece, uint64_t a) {
        Execution& e = ex[piece.execution];
        if (e.bad) return;
        StreamState& ss = state_of(piece);
        e.lo = std::min(e.lo, a);
        e.hi = std::max(e.hi, a);
        ++e.n;
        if (ss.count == 0) ss.first = a;
        if (ss.count == 1) {
          const int direction = a > ss.first ? 1 : a < ss.first ? -1 : 0;
          if (direction == 0 || (e.direction != 0 && e.direction != direction)) {
            e.bad = true;  // a repeated address, or threads disagree
          } else {
            e.direction = direction;
          }
        }
        ++ss.count;
      },
      [&](const StreamPiece& piece) { ex[piece.execution].bad = true; });
  for (Execution& e : ex) {
    if (e.bad || !e.seen || e.n < 2 || e.hi == e.lo) {
      e.bad = true;
      continue;
    }
    if (e.direction == 0) e.direction = 1;  // no thread ran two iterations
    const uint64_t span = e.hi - e.lo;
    if (span % (e.n - 1) != 0) {
      e.bad = true;
      continue;
    }
    e.stride = span / (e.n - 1);
    e.taken.assign(e.n, false);
  }

  // Pass 2: each address's iteration; a thread's consecutive iterations
  // form one chunk.
  std::vector<ThreadChunks> chunks(executions);
  current = nullptr;
  for (auto& per_stream : state)
    for (auto& [id, ss] : per_stream) ss.previous = -1;
  walk_pieces(
      streams, by_stream,
      [&](const StreamPiece& piece, uint64_t a) {
        Execution& e = ex[piece.execution];
        if (e.bad) return;
        StreamState& ss = state_of(piece);
        const uint64_t offset = e.direction > 0 ? a - e.lo : e.hi - a;
        if (offset % e.stride != 0) {
          e.bad = true;
          return;
        }
        const int64_t iteration = static_cast<int64_t>(offset / e.stride);
        if (e.taken[iteration] || iteration <= ss.previous) {
          e.bad = true;
          return;
        }
        e.taken[iteration] = true;
        ThreadChunks& mine = chunks[piece.execution];
        if (mine.empty()) mine.resize(thread_count);
        std::vector<IterationChunk>& thread = mine[streams[piece.stream].thread];
        if (!thread.empty() && iteration == ss.previous + 1) {
          thread.back().end = iteration + 1;
        } else {
          thread.push_back({iteration, iteration + 1});
        }
        ss.previous = iteration;
      },
      [](const StreamPiece&) {});
  for (size_t id = 0; id < executions; ++id)
    if (!ex[id].bad) result[id] = std::move(chunks[id]);
  return result;
}

std::optional<std::vector<std::vector<IterationChunk>>> chunks_from_traces(
    const std::vector<TracedInstruction>& streams, uint32_t thread_count) {
  if (thread_count == 0) return std::nullopt;
  std::vector<StreamPiece> pieces;
  std::vector<bool> seen(thread_count, false);
  for (size_t s = 0; s < streams.size(); ++s) {
    const TracedInstruction& stream = streams[s];
    if (stream.thread >= thread_count || seen[stream.thread]) return std::nullopt;
    seen[stream.thread] = true;
    if (stream.lost > 0 || trace_length(stream.trace) < stream.accesses) return std::nullopt;
    pieces.push_back({s, 0, 0, stream.accesses});
  }
  auto result = chunks_per_execution(streams, pieces, 1, thread_count);
  return std::move(result.front());
}

RecoveredSchedule classify_traced_chunks(const ThreadChunks& chunks) {
  RecoveredSchedule schedule = classify_schedule(chunks);
  int64_t runs = 0;
  for (const auto& thread_chunks : chunks) runs += static_cast<int64_t>(thread_chunks.size());
  if (schedule.kind != ScheduleKind::Static && schedule.iterations < 2 * runs) {
    schedule.kind = ScheduleKind::Unknown;
    schedule.chunk = 0;
    schedule.evidence = "chunks of about one iteration: the instruction may be in an inner loop";
  }
  return schedule;
}

RecoveredSchedule schedule_from_traces(const std::vector<TracedInstruction>& per_thread_streams,
                                       uint32_t thread_count) {
  const auto chunks = chunks_from_traces(per_thread_streams, thread_count);
  if (!chunks) return {};
  return classify_traced_chunks(*chunks);
}

RecoveredSchedule merge_executions(const std::vector<RecoveredSchedule>& per_execution) {
  RecoveredSchedule merged;
  merged.executions = static_cast<int64_t>(per_execution.size());
  merged.agreeing = 0;
  if (per_execution.empty()) return merged;
  // Names in order of first appearance, with their counts and first entry.
  std::vector<std::string> names;
  std::map<std::string, std::pair<int64_t, size_t>> tally;
  for (size_t i = 0; i < per_execution.size(); ++i) {
    const std::string name = schedule_name(per_execution[i]);
    auto [it, fresh] = tally.try_emplace(name, 0, i);
    if (fresh) names.push_back(name);
    ++it->second.first;
  }
  std::string best;
  for (const std::string& name : names) {
    if (name == "unknown") continue;
    if (best.empty() || tally.at(name).first > tally.at(best).first) best = name;
  }
  if (best.empty()) best = "unknown";
  const auto& [count, first] = tally.at(best);
  merged = per_execution[first];
  merged.executions = static_cast<int64_t>(per_execution.size());
  merged.agreeing = count;
  merged.others.clear();
  for (const RecoveredSchedule& e : per_execution) {
    if (schedule_name(e) != best) continue;
    merged.iterations = std::max(merged.iterations, e.iterations);
    merged.threads = std::max(merged.threads, e.threads);
  }
  for (const std::string& name : names)
    if (name != best) merged.others.push_back({name, tally.at(name).first});
  std::stable_sort(
      merged.others.begin(), merged.others.end(),
      [](const ScheduleTally& a, const ScheduleTally& b) { return a.executions > b.executions; });
  return merged;
}

std::optional<RepresentativeChunks> pick_representative(
    const std::vector<TracedCandidate>& candidates, size_t executions, uint32_t thread_count) {
  std::optional<RepresentativeChunks> best;
  size_t best_qualified = 0;
  uint64_t best_total = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    uint64_t total = 0;
    for (const StreamPiece& piece : candidates[i].pieces)
      if (piece.end > piece.begin) total += piece.end - piece.begin;
    if (best && total >= best_total && best_qualified == executions) continue;
    auto chunks =
        chunks_per_execution(candidates[i].streams, candidates[i].pieces, executions, thread_count);
    const auto qualified = static_cast<size_t>(
        std::count_if(chunks.begin(), chunks.end(), [](const auto& c) { return c.has_value(); }));
    if (qualified == 0) continue;
    if (!best || qualified > best_qualified ||
        (qualified == best_qualified && total < best_total)) {
      best = RepresentativeChunks{i, std::move(chunks)};
      best_qualified = qualified;
      best_total = total;
    }
  }
  return best;
}

}  // namespace weft
