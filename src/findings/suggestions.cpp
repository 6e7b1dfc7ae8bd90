#include "findings/suggestions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "findings/placement_findings.h"

namespace weft {
namespace {

std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

}  // namespace

const char* suggestion_kind_name(SuggestionKind kind) {
  switch (kind) {
    case SuggestionKind::DataAffinity:
      return "data-affinity";
    case SuggestionKind::ThreadAffinity:
      return "thread-affinity";
    case SuggestionKind::Broadcast:
      break;
  }
  return "broadcast";
}

namespace {

using VolumeMatrix = ThreadVolumes;

// The threads that communicate at all: the others are left out of the
// grouping (a thread that only forks and joins does not need a cache).
std::vector<uint32_t> communicating_threads(const VolumeMatrix& v) {
  std::vector<uint32_t> threads;
  for (size_t i = 0; i < v.size(); ++i)
    for (double events : v[i])
      if (events > 0.0) {
        threads.push_back(static_cast<uint32_t>(i));
        break;
      }
  return threads;
}

double cross_volume(const VolumeMatrix& v, const std::vector<uint32_t>& threads,
                    const std::vector<bool>& in_first) {
  double cross = 0.0;
  for (size_t a = 0; a < threads.size(); ++a)
    for (size_t b = a + 1; b < threads.size(); ++b)
      if (in_first[a] != in_first[b]) cross += v[threads[a]][threads[b]];
  return cross;
}

}  // namespace

ThreadGrouping best_thread_grouping(const CommunicationMatrix& raw,
                                    const CommunicationMatrix& rar) {
  const VolumeMatrix v = pair_volumes(raw, rar);
  const std::vector<uint32_t> threads = communicating_threads(v);
  ThreadGrouping grouping;
  const size_t n = threads.size();
  if (n < 2) return grouping;
  const size_t first_size = (n + 1) / 2;
  double total = 0.0;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) total += v[threads[a]][threads[b]];
  grouping.even_spread_cross = total * 2.0 * static_cast<double>(first_size) *
                               static_cast<double>(n - first_size) /
                               (static_cast<double>(n) * static_cast<double>(n - 1));

  std::vector<bool> best(n, false);
  double best_cross = -1.0;
  if (n <= 16) {
    // Every split into groups of first_size and n - first_size threads.
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      if (static_cast<size_t>(__builtin_popcount(mask)) != first_size) continue;
      std::vector<bool> in_first(n);
      for (size_t a = 0; a < n; ++a) in_first[a] = (mask >> a) & 1u;
      const double cross = cross_volume(v, threads, in_first);
      if (best_cross < 0.0 || cross < best_cross) {
        best_cross = cross;
        best = in_first;
      }
    }
  } else {
    for (size_t a = 0; a < first_size; ++a) best[a] = true;
    best_cross = cross_volume(v, threads, best);
    for (bool improved = true; improved;) {
      improved = false;
      for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b)
          if (best[a] && !best[b]) {
            std::vector<bool> swapped = best;
            swapped[a] = false;
            swapped[b] = true;
            if (const double cross = cross_volume(v, threads, swapped); cross < best_cross) {
              best = swapped;
              best_cross = cross;
              improved = true;
            }
          }
    }
  }
  grouping.cross = best_cross;
  grouping.groups.resize(2);
  for (size_t a = 0; a < n; ++a) grouping.groups[best[a] ? 0 : 1].push_back(threads[a]);
  if (grouping.groups[0].front() != threads.front())
    std::swap(grouping.groups[0], grouping.groups[1]);
  return grouping;
}

namespace {

std::vector<ThreadPairVolume> top_thread_pairs(const LocalityMetrics& metrics, size_t limit) {
  std::vector<ThreadPairVolume> pairs;
  const VolumeMatrix v = pair_volumes(metrics.raw, metrics.rar);
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j)
      if (v[i][j] > 0.0)
        pairs.push_back(
            {static_cast<uint32_t>(i), static_cast<uint32_t>(j), static_cast<uint64_t>(v[i][j])});
  std::stable_sort(
      pairs.begin(), pairs.end(),
      [](const ThreadPairVolume& a, const ThreadPairVolume& b) { return a.events > b.events; });
  if (pairs.size() > limit) pairs.resize(limit);
  return pairs;
}

// Mean of the non-zero CRR entries; 0 when there is none.
double mean_nonzero_crr(const CrrMatrix& crr) {
  double sum = 0.0;
  size_t count = 0;
  for (const auto& row : crr) {
    for (double value : row) {
      if (value != 0.0) {
        sum += value;
        ++count;
      }
    }
  }
  return count == 0 ? 0.0 : sum / static_cast<double>(count);
}

// The centre of a star: a thread whose writes (`as_writer`) or reads make
// at least `min_share` of the region's raw + rar, with two partners or
// more. A broadcast's writer, a gather's reader.
struct StarCentre {
  uint32_t thread = 0;
  uint64_t events = 0;  // raw + rar of its side
  size_t partners = 0;  // threads on the other side
};

std::optional<StarCentre> star_centre(const LocalityMetrics& metrics, bool as_writer,
                                      double min_share) {
  const uint64_t total = metrics.raw_total + metrics.rar_total;
  const size_t n = metrics.raw.size();
  for (uint32_t centre = 0; centre < n; ++centre) {
    StarCentre star{centre, 0, 0};
    for (size_t other = 0; other < n; ++other) {
      const size_t writer = as_writer ? centre : other, reader = as_writer ? other : centre;
      if (reader >= metrics.raw[writer].size()) continue;
      const uint64_t events = metrics.raw[writer][reader] + metrics.rar[writer][reader];
      star.events += events;
      if (events > 0) ++star.partners;
    }
    if (total > 0 && star.partners >= 2 &&
        static_cast<double>(star.events) >= min_share * static_cast<double>(total))
      return star;
  }
  return std::nullopt;
}

// One thread's writes that make at least kBroadcastMinWriterShare of the
// communication, read by two threads or more.
struct Broadcast {
  uint32_t writer = 0;
  uint64_t events = 0;     // raw + rar of its writes
  uint64_t transfers = 0;  // raw + borrowed of its writes: the granules read here that moved
  uint64_t total = 0;      // raw + rar of the region
  size_t readers = 0;
};

std::optional<Broadcast> find_broadcast(const LocalityMetrics& metrics) {
  const std::optional<StarCentre> star = star_centre(metrics, true, kBroadcastMinWriterShare);
  if (!star) return std::nullopt;
  Broadcast b{star->thread, star->events, 0, metrics.raw_total + metrics.rar_total, star->partners};
  for (size_t j = 0; j < metrics.raw[b.writer].size(); ++j)
    b.transfers += metrics.raw[b.writer][j] + metrics.borrowed[b.writer][j];
  return b;
}

// One thread reads at least kGatherMinReaderShare of the region's
// communication, from two writers or more: results collected after a
// parallel phase. Which writer a placement puts beside the reader is
// decided by who happened to write each datum last, so no mapping is
// advised (docs/metrics.md).
bool is_gather(const LocalityMetrics& metrics) {
  return star_centre(metrics, false, kGatherMinReaderShare).has_value();
}

// "{0, 1}"
std::string group_text(const std::vector<uint32_t>& group) {
  return fmt::format("{{{}}}", fmt::join(group, ", "));
}

bool is_consecutive(const std::vector<uint32_t>& group) {
  for (size_t i = 1; i < group.size(); ++i)
    if (group[i] != group[i - 1] + 1) return false;
  return true;
}

Suggestion base_suggestion(SuggestionKind kind, const RegionInfo& region) {
  Suggestion suggestion;
  suggestion.kind = kind;
  suggestion.region = region.name;
  suggestion.file = region.file;
  suggestion.first_line = region.first_line;
  suggestion.last_line = region.last_line;
  suggestion.location = region_location(region);
  return suggestion;
}

}  // namespace

std::vector<Suggestion> suggest(const RegionInfo& region, const LocalityMetrics& metrics,
                                const std::vector<RegionInfo>& regions) {
  std::vector<Suggestion> suggestions;
  const bool openmp = inside_omp_parallel(region, regions);

  // Capacity is judged on every event (what a cache holds are granules),
  // the median on the line visits (most events re-read the granule just read).
  const CrdSummary& crd = metrics.crd;
  const std::optional<uint64_t> median = metrics.median();
  const uint64_t median_cutoff = metrics.cutoffs.min;
  const bool many_beyond = crd.events >= kDataAffinityMinEvents &&
                           crd.fraction_beyond_min() >= kDataAffinityMinFractionBeyondMin;
  const bool median_beyond =
      crd.events >= kDataAffinityMinEvents && median && *median >= median_cutoff;
  if (metrics.crd_recorded && (many_beyond || median_beyond)) {
    Suggestion s = base_suggestion(SuggestionKind::DataAffinity, region);
    s.evidence = fmt::format(
        "{} of the CRD events are beyond the min cutoff of {} granules ({} between the cutoffs, "
        "{} above the max cutoff of {}); median CRD of the line visits {} {} the min cutoff",
        percent(crd.fraction_beyond_min()), metrics.cutoffs.min, percent(crd.fraction_between),
        percent(crd.fraction_above_max), metrics.cutoffs.max, median.value_or(0),
        median_beyond ? ">=" : "<");
    s.actions = {
        "code: array blocking - tile the arrays so that the data a thread receives is read again "
        "while it is still in the cache",
        "code: loop interchange / reordering - traverse communicated data so that each element "
        "is reused soon after it is first read",
        "code: loop fusion - merge the loops that read the same communicated data",
    };
    if (openmp) {
      s.actions.push_back(
          "runtime: OpenMP schedule - pick schedule(static, CHUNK) so that each thread works on "
          "the iterations whose data it wrote itself (data-affinity scheduling)");
    }
    suggestions.push_back(std::move(s));
  }

  // A broadcast: one thread's writes read by the others (data it
  // initialised). No placement makes it local to every reader.
  if (const std::optional<Broadcast> b = find_broadcast(metrics)) {
    // A few granules read again and again (a flag, a size, a table the
    // main thread set) stay in every reader's cache: nothing to act on.
    if (b->transfers < kBroadcastMinTransfers) return suggestions;
    Suggestion s = base_suggestion(SuggestionKind::Broadcast, region);
    s.broadcast_writer = b->writer;
    s.evidence = fmt::format(
        "thread {} wrote {} of the data communicated here ({} of {} events), read by {} threads: "
        "a broadcast, which no thread placement makes local to every reader",
        b->writer, percent(static_cast<double>(b->events) / static_cast<double>(b->total)),
        b->events, b->total, b->readers);
    s.actions = {
        "code: if each reader reads a part of its own, let each thread write (initialise) that "
        "part itself: the data is then in its cache, and on a NUMA machine in its node, by first "
        "touch",
        "code: if every reader reads most of it (a table, a search over all of it), its transfers "
        "are each reader's first reads, which no placement avoids: make the data smaller (float "
        "for double, only the fields read), or let each thread compute what it reads when that "
        "costs less than the transfer"};
    suggestions.push_back(std::move(s));
    return suggestions;
  }

  if (metrics.communicating_pairs < kThreadAffinityMinPairs) return suggestions;
  if (is_gather(metrics)) return suggestions;
  const ThreadGrouping grouping = best_thread_grouping(metrics.raw, metrics.rar);
  if (grouping.groups.size() < 2 || grouping.groups[1].empty() ||
      grouping.even_spread_cross <= 0.0 ||
      grouping.cross > kThreadAffinityMaxCrossFraction * grouping.even_spread_cross)
    return suggestions;
  Suggestion s = base_suggestion(SuggestionKind::ThreadAffinity, region);
  std::vector<std::string> reasons;
  reasons.push_back(fmt::format(
      "grouping threads {} and {} onto two shared caches leaves {:.0f} events between the caches, "
      "{:.0f}% fewer than an even spread ({:.0f})",
      group_text(grouping.groups[0]), group_text(grouping.groups[1]), grouping.cross,
      100.0 * (1.0 - grouping.cross / grouping.even_spread_cross), grouping.even_spread_cross));
  const double spread = std::sqrt(metrics.homogeneity);
  const double mean_crr = mean_nonzero_crr(metrics.crr);
  const double variation = mean_crr > 0.0 ? spread / mean_crr : 0.0;
  if (metrics.balance > kThreadAffinityMinBalance)
    reasons.push_back(
        fmt::format("CRR balance {:.1f}% > {:.0f}%", metrics.balance, kThreadAffinityMinBalance));
  if (mean_crr > 0.0 && variation >= kThreadAffinityMinVariation)
    reasons.push_back(fmt::format(
        "CRR homogeneity {:.3g}: sqrt(H) = {:.3g} is {:.2f} x the mean non-zero CRR {:.3g} "
        "(>= {:.0f})",
        metrics.homogeneity, spread, variation, mean_crr, kThreadAffinityMinVariation));
  s.evidence = fmt::format("{}; {} communicating thread pairs", fmt::join(reasons, "; "),
                           metrics.communicating_pairs);
  s.groups = grouping.groups;
  s.pairs = top_thread_pairs(metrics, kSuggestedPairs);
  std::vector<std::string> named;
  for (const ThreadPairVolume& pair : s.pairs)
    named.push_back(fmt::format("{} and {} ({} events)", pair.first, pair.second, pair.events));
  const bool consecutive = is_consecutive(grouping.groups[0]) && is_consecutive(grouping.groups[1]);
  s.actions = {
      fmt::format(
          "runtime: thread mapping - place threads {} on cores that share a cache and threads {} "
          "on "
          "cores that share another (the heaviest pairs: {}){}",
          group_text(grouping.groups[0]), group_text(grouping.groups[1]), fmt::join(named, ", "),
          !openmp ? " (pthread_setaffinity_np)"
          : consecutive
              ? " (e.g. OMP_PLACES=cores OMP_PROC_BIND=close: consecutive threads share a cache)"
              : " (an OMP_PLACES list that gives each group the cores of one cache, with "
                "OMP_PROC_BIND=close)"),
      "runtime: or let weft place every thread on a real machine's caches: `weft place "
      "--profile FILE --print` shows the mapping and its modeled gain over scatter and an "
      "unpinned run, `weft place --profile FILE -- PROGRAM ARGS` runs the program pinned that "
      "way (docs/commands.md)"};
  suggestions.push_back(std::move(s));
  return suggestions;
}

std::vector<Suggestion> merge_same_findings(std::vector<Suggestion> suggestions) {
  std::vector<Suggestion> merged;
  auto same_finding = [](const Suggestion& a, const Suggestion& b) {
    if (a.kind != b.kind) return false;
    if (a.kind == SuggestionKind::Broadcast) return a.broadcast_writer == b.broadcast_writer;
    if (a.kind == SuggestionKind::ThreadAffinity) return a.groups == b.groups;
    return false;  // data affinity is about each region's own loop
  };
  for (Suggestion& s : suggestions) {
    auto first = std::find_if(merged.begin(), merged.end(),
                              [&](const Suggestion& m) { return same_finding(m, s); });
    if (first == merged.end())
      merged.push_back(std::move(s));
    else
      first->also_in.push_back(fmt::format("{} ({})", s.region, s.location));
  }
  return merged;
}

std::string format_suggestion(const Suggestion& suggestion) {
  std::string text = fmt::format("{} {} ({}): {}\n", suggestion_kind_name(suggestion.kind),
                                 suggestion.region, suggestion.location, suggestion.evidence);
  if (!suggestion.reads_at.empty())
    text += fmt::format("  read mostly at {}{}\n", suggestion.reads_at,
                        suggestion.reads_code.empty() ? "" : ": " + suggestion.reads_code);
  if (const std::optional<ReadObject>& o = suggestion.reads_object)
    text += fmt::format(
        "  data read mostly: {}{}, {} of the region's communication\n", o->description,
        o->allocated_code.empty() ? "" : " (" + o->allocated_code + ")", percent(o->share));
  if (!suggestion.also_in.empty())
    text += fmt::format("  the same in {}\n", fmt::join(suggestion.also_in, ", "));
  for (const std::string& action : suggestion.actions) text += "  - " + action + "\n";
  return text;
}

}  // namespace weft
