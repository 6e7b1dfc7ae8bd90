#include "findings/suggestions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace weft {
namespace {

std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

}  // namespace

const char* suggestion_kind_name(SuggestionKind kind) {
  return kind == SuggestionKind::DataAffinity ? "data-affinity" : "thread-affinity";
}

namespace {

std::vector<ThreadPairVolume> top_thread_pairs(const LocalityMetrics& metrics, size_t limit) {
  std::vector<ThreadPairVolume> pairs;
  const size_t threads = metrics.raw.size();
  for (size_t i = 0; i < threads; ++i) {
    for (size_t j = i + 1; j < threads; ++j) {
      const uint64_t events =
          metrics.raw[i][j] + metrics.rar[i][j] + metrics.raw[j][i] + metrics.rar[j][i];
      if (events > 0) pairs.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j), events});
    }
  }
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

  const CrdSummary& crd = metrics.crd;
  const bool many_beyond = crd.events >= kDataAffinityMinEvents &&
                           crd.fraction_beyond_min() >= kDataAffinityMinFractionBeyondMin;
  const bool median_beyond =
      crd.events >= kDataAffinityMinEvents && crd.median && *crd.median >= metrics.cutoffs.min;
  if (metrics.crd_recorded && (many_beyond || median_beyond)) {
    Suggestion s = base_suggestion(SuggestionKind::DataAffinity, region);
    s.evidence = fmt::format(
        "{} of {} CRD events are beyond the min cutoff of {} granules ({} between the cutoffs, "
        "{} above the max cutoff of {}); median CRD {} {} the min cutoff",
        percent(crd.fraction_beyond_min()), crd.events, metrics.cutoffs.min,
        percent(crd.fraction_between), percent(crd.fraction_above_max), metrics.cutoffs.max,
        *crd.median, median_beyond ? ">=" : "<");
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

  const double spread = std::sqrt(metrics.homogeneity);
  const double mean_crr = mean_nonzero_crr(metrics.crr);
  const double variation = mean_crr > 0.0 ? spread / mean_crr : 0.0;
  const bool unbalanced = metrics.balance > kThreadAffinityMinBalance;
  const bool heterogeneous = mean_crr > 0.0 && variation >= kThreadAffinityMinVariation;
  if (metrics.communicating_pairs >= kThreadAffinityMinPairs && (unbalanced || heterogeneous)) {
    Suggestion s = base_suggestion(SuggestionKind::ThreadAffinity, region);
    std::vector<std::string> reasons;
    if (unbalanced) {
      reasons.push_back(
          fmt::format("CRR balance {:.1f}% > {:.0f}%", metrics.balance, kThreadAffinityMinBalance));
    }
    if (heterogeneous) {
      reasons.push_back(fmt::format(
          "CRR homogeneity {:.3g}: sqrt(H) = {:.3g} is {:.2f} x the mean non-zero "
          "CRR {:.3g} (>= {:.0f})",
          metrics.homogeneity, spread, variation, mean_crr, kThreadAffinityMinVariation));
    }
    s.evidence = fmt::format("{}; {} communicating thread pairs", fmt::join(reasons, "; "),
                             metrics.communicating_pairs);
    s.pairs = top_thread_pairs(metrics, kSuggestedPairs);
    std::vector<std::string> named;
    for (const ThreadPairVolume& pair : s.pairs)
      named.push_back(fmt::format("{} and {} ({} events)", pair.first, pair.second, pair.events));
    s.actions = {fmt::format(
        "runtime: thread mapping - place threads {} on cores that share a cache{}",
        fmt::join(named, ", "),
        openmp ? " (e.g. OMP_PLACES=cores OMP_PROC_BIND=close)" : " (pthread_setaffinity_np)")};
    suggestions.push_back(std::move(s));
  }
  return suggestions;
}

std::string format_suggestion(const Suggestion& suggestion) {
  std::string text = fmt::format("{} {} ({}): {}\n", suggestion_kind_name(suggestion.kind),
                                 suggestion.region, suggestion.location, suggestion.evidence);
  for (const std::string& action : suggestion.actions) text += "  - " + action + "\n";
  return text;
}

}  // namespace weft
