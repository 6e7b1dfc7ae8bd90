#include "findings/reuse_prediction.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace weft {
namespace {

// ---- The runs, indexed by instruction and thread ----

struct ThreadEntry {
  ReuseDistanceHistogram histogram;
  ReusePatterns patterns;
};

struct InstructionEntry {
  std::string function, file;
  uint32_t line = 0;
  std::map<uint32_t, ThreadEntry> threads;
};

using RunIndex = std::map<ReuseInstructionKey, InstructionEntry>;

std::string file_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool selected(LocalityChoice choice, ReuseLocality locality) {
  switch (choice) {
    case LocalityChoice::Remote:
      return locality == ReuseLocality::Remote;
    case LocalityChoice::Local:
      return locality == ReuseLocality::Local;
    case LocalityChoice::All:
      return true;
  }
  return false;
}

void add_histogram(ReuseDistanceHistogram& into, const ReuseDistanceHistogram& h) {
  if (into.counts.size() < h.counts.size()) into.counts.resize(h.counts.size(), 0);
  if (into.distance_sums.size() < h.counts.size()) into.distance_sums.resize(h.counts.size(), 0);
  for (size_t b = 0; b < h.counts.size(); ++b) {
    into.counts[b] += h.counts[b];
    into.distance_sums[b] += b < h.distance_sums.size()
                                 ? h.distance_sums[b]
                                 : static_cast<double>(h.counts[b]) *
                                       static_cast<double>(reuse_bin_low(static_cast<uint32_t>(b)));
  }
  into.cold += h.cold;
}

// Every selected histogram with accesses, by key and thread; rows of one
// key and thread (one module file name loaded twice) are added.
RunIndex index_run(const ReuseRun& run, LocalityChoice choice, uint32_t sub_bins) {
  RunIndex index;
  for (const InstructionReuse& row : run.histograms) {
    if (!selected(choice, row.locality) || row.histogram.accesses() == 0) continue;
    InstructionEntry& entry = index[{file_name(row.module), row.module_offset, row.locality}];
    if (entry.function.empty() && entry.file.empty()) {
      entry.function = row.function;
      entry.file = row.file;
      entry.line = row.line;
    }
    add_histogram(entry.threads[row.thread].histogram, row.histogram);
  }
  for (auto& [key, entry] : index)
    for (auto& [thread, t] : entry.threads) t.patterns = reuse_patterns(t.histogram, sub_bins);
  return index;
}

// The instruction's patterns per thread of a run (at least `threads`
// entries).
std::vector<ThreadPatterns> thread_patterns(const InstructionEntry* entry, uint32_t threads) {
  std::vector<ThreadPatterns> result(threads);
  if (entry == nullptr) return result;
  for (const auto& [thread, t] : entry->threads) {
    if (thread >= result.size()) result.resize(thread + 1);
    result[thread] = t.patterns.patterns;
  }
  return result;
}

const InstructionEntry* find_entry(const RunIndex& index, const ReuseInstructionKey& key) {
  const auto it = index.find(key);
  return it == index.end() ? nullptr : &it->second;
}

const ThreadEntry* find_thread(const InstructionEntry* entry, std::optional<uint32_t> thread) {
  if (entry == nullptr || !thread) return nullptr;
  const auto it = entry->threads.find(*thread);
  return it == entry->threads.end() ? nullptr : &it->second;
}

// ---- Geometric functions ----

// n with n^power == threads, n >= 2; 0 when there is none.
uint32_t exact_root(uint32_t threads, int power) {
  for (uint32_t n = 2;; ++n) {
    uint64_t p = 1;
    for (int i = 0; i < power; ++i) p *= n;
    if (p == threads) return n;
    if (p > threads) return 0;
  }
}

// 0 low end, 1 inside, 2 high end of a side of n.
int side_class(uint32_t c, uint32_t n) { return c == 0 ? 0 : c == n - 1 ? 2 : 1; }

// A training run's regions under a function: the lowest thread (>= 1) of
// each region and the group of each region.
struct RunRegions {
  std::map<int, uint32_t> first_thread;
  std::map<int, int> group;
};

RunRegions run_regions(PatternFunction function, const std::vector<int>& groups) {
  RunRegions r;
  const uint32_t threads = static_cast<uint32_t>(groups.size());
  for (uint32_t t = 1; t < threads; ++t) {
    const int region = pattern_region(function, threads, t);
    if (region < 0) continue;
    r.first_thread.emplace(region, t);
    r.group.emplace(region, groups[t]);
  }
  return r;
}

// The training thread of `region` in run `own`: its lowest thread there;
// else, when the region is absent there, the lowest thread of a region the
// other run puts in the same group (lowest region first).
std::optional<uint32_t> representative(int region, const RunRegions& own, const RunRegions& other) {
  if (const auto it = own.first_thread.find(region); it != own.first_thread.end())
    return it->second;
  const auto g = other.group.find(region);
  if (g == other.group.end()) return std::nullopt;
  for (const auto& [r, group] : other.group)
    if (group == g->second)
      if (const auto it = own.first_thread.find(r); it != own.first_thread.end()) return it->second;
  return std::nullopt;
}

// ---- One thread's prediction ----

// Whether the pattern's distances do not decrease from the smaller run to
// the larger (equal sizes: always).
bool regular(const ReusePattern& small, const ReusePattern& large) {
  return large.min >= small.min && large.max >= small.max;
}

uint32_t bin_of(double distance, uint32_t sub_bins) {
  return pattern_bin(static_cast<uint64_t>(std::clamp(distance, 0.0, 1.8e19)), sub_bins);
}

double fitted(double s1, double v1, double s2, double v2, double at) {
  return std::max(0.0, fit_size(s1, v1, s2, v2).at(at));
}

void predict_patterns(ThreadPrediction& out, const ReusePatterns& a, const ReusePatterns& b,
                      double sa, double sb, double sref, const PredictionOptions& options) {
  const std::vector<ReusePattern>& pa = a.patterns;
  const std::vector<ReusePattern>& pb = b.patterns;
  const size_t n = std::min(pa.size(), pb.size());
  out.predictable = true;
  if (pa.size() != pb.size()) {
    out.predictable = false;
    out.reason = "the training runs have " + std::to_string(pa.size()) + " and " +
                 std::to_string(pb.size()) + " patterns";
  }
  out.accesses = fitted(sa, a.accesses, sb, b.accesses, sref);
  double cold_share = std::min(1.0, fitted(sa, a.cold_share, sb, b.cold_share, sref));
  double shares = cold_share;
  for (size_t i = 0; i < n; ++i) {
    if (sa != sb && !(sa < sb ? regular(pa[i], pb[i]) : regular(pb[i], pa[i])) && out.predictable) {
      out.predictable = false;
      out.reason = "pattern " + std::to_string(i + 1) + "'s distance decreases as the size grows";
    }
    ReusePattern p;
    p.mean = fitted(sa, pa[i].mean, sb, pb[i].mean, sref);
    // The range: the bins of the larger run's pattern around its mean's
    // bin, placed around the predicted mean's bin (docs/prediction.md).
    const ReusePattern& shape = sa <= sb ? pb[i] : pa[i];
    const uint32_t grid = options.pattern_sub_bins;
    const uint32_t middle = bin_of(shape.mean, grid);
    const uint32_t below = middle - std::min(middle, bin_of(shape.min, grid));
    const uint32_t above = bin_of(shape.max, grid) - std::min(bin_of(shape.max, grid), middle);
    const uint32_t centre = bin_of(p.mean, grid);
    p.min = static_cast<double>(pattern_bin_low(centre - std::min(centre, below), grid));
    p.max = static_cast<double>(pattern_bin_high(centre + above, grid));
    p.frequency = std::min(1.0, fitted(sa, pa[i].frequency, sb, pb[i].frequency, sref));
    shares += p.frequency;
    out.patterns.push_back(p);
    out.fits.push_back(fit_size(sa, pa[i].mean, sb, pb[i].mean));
  }
  // The shares add up to 1 again.
  if (shares > 0) {
    cold_share /= shares;
    for (ReusePattern& p : out.patterns) p.frequency /= shares;
  }
  out.cold = cold_share * out.accesses;
  for (ReusePattern& p : out.patterns) p.count = p.frequency * out.accesses;
  out.histogram = histogram_of_patterns(out.patterns, out.cold);
  for (uint64_t bytes : options.cache_bytes)
    out.miss_ratios.push_back(patterns_miss_ratio(
        out.patterns, out.cold, std::max<uint64_t>(1, bytes / options.granule_bytes)));
}

}  // namespace

const char* locality_choice_name(LocalityChoice choice) {
  switch (choice) {
    case LocalityChoice::Remote:
      return "remote";
    case LocalityChoice::Local:
      return "local";
    case LocalityChoice::All:
      return "all";
  }
  return "?";
}

const char* size_model_name(SizeModel model) {
  switch (model) {
    case SizeModel::Constant:
      return "constant";
    case SizeModel::CubeRoot:
      return "cbrt";
    case SizeModel::SquareRoot:
      return "sqrt";
    case SizeModel::Linear:
      return "linear";
    case SizeModel::Square:
      return "square";
    case SizeModel::Cube:
      return "cube";
  }
  return "?";
}

namespace {
double exponent_of(SizeModel model) {
  switch (model) {
    case SizeModel::Constant:
      return 0;
    case SizeModel::CubeRoot:
      return 1.0 / 3;
    case SizeModel::SquareRoot:
      return 0.5;
    case SizeModel::Linear:
      return 1;
    case SizeModel::Square:
      return 2;
    case SizeModel::Cube:
      return 3;
  }
  return 0;
}
}  // namespace

std::string size_fit_name(const SizeFit& fit) {
  if (fit.lower == SizeModel::Constant || fit.model == SizeModel::Constant)
    return size_model_name(fit.model);
  return std::string(size_model_name(fit.lower)) + "+" + size_model_name(fit.model);
}

double SizeFit::at(double size) const {
  if (model == SizeModel::Constant) return a;
  return a * std::pow(size, exponent_of(lower)) + b * std::pow(size, exponent_of(model));
}

SizeFit fit_size(double s1, double v1, double s2, double v2) {
  SizeFit fit;
  if (s1 == s2 || v1 == v2 || s1 <= 0 || s2 <= 0) {
    fit.a = (v1 + v2) / 2;
    return fit;
  }
  const double low = std::min(v1, v2), high = std::max(v1, v2);
  constexpr SizeModel kModels[] = {SizeModel::Constant, SizeModel::CubeRoot, SizeModel::SquareRoot,
                                   SizeModel::Linear,   SizeModel::Square,   SizeModel::Cube};
  if (low > 0) {
    // Growth between two exponents, near neither: both terms, through the origin.
    constexpr double kNear = 0.1;
    const double p = std::log(v2 / v1) / std::log(s2 / s1);
    for (size_t i = 1; i + 1 < std::size(kModels); ++i) {
      const double e_low = exponent_of(kModels[i]), e_high = exponent_of(kModels[i + 1]);
      if (p <= e_low + kNear || p >= e_high - kNear) continue;
      const double l1 = std::pow(s1, e_low), l2 = std::pow(s2, e_low);
      const double h1 = std::pow(s1, e_high), h2 = std::pow(s2, e_high);
      const double det = l1 * h2 - l2 * h1;
      if (det == 0) break;
      fit.lower = kModels[i];
      fit.model = kModels[i + 1];
      fit.a = (v1 * h2 - v2 * h1) / det;
      fit.b = (l1 * v2 - l2 * v1) / det;
      return fit;
    }
  }
  if (low <= 0) {
    fit.model = SizeModel::Linear;
  } else {
    const double growth = std::log(high / low), sizes = std::abs(std::log(s2 / s1));
    double best = INFINITY;
    for (SizeModel m : kModels) {
      const double error = std::abs(growth - exponent_of(m) * sizes);
      if (error < best) {
        best = error;
        fit.model = m;
      }
    }
  }
  if (fit.model == SizeModel::Constant) {
    fit.a = (v1 + v2) / 2;
    return fit;
  }
  const double e = exponent_of(fit.model);
  fit.b = (v2 - v1) / (std::pow(s2, e) - std::pow(s1, e));
  fit.a = v1 - fit.b * std::pow(s1, e);
  return fit;
}

const char* pattern_function_name(PatternFunction function) {
  switch (function) {
    case PatternFunction::Identity:
      return "identity";
    case PatternFunction::Modulo:
      return "modulo";
    case PatternFunction::Uniform:
      return "uniform";
    case PatternFunction::Line:
      return "1-D";
    case PatternFunction::Grid2D:
      return "2-D";
    case PatternFunction::Cube3D:
      return "3-D";
    case PatternFunction::Hypercube:
      return "hypercube";
    case PatternFunction::None:
      return "none";
  }
  return "?";
}

int pattern_region(PatternFunction function, uint32_t threads, uint32_t thread) {
  if (thread >= threads) return -1;
  switch (function) {
    case PatternFunction::Uniform:
      return threads >= 2 ? 0 : -1;
    case PatternFunction::Line:
      if (threads < 2) return -1;
      return thread == 0 ? 0 : thread == threads - 1 ? 1 : 2;
    case PatternFunction::Grid2D: {
      const uint32_t n = exact_root(threads, 2);
      if (n == 0) return -1;
      const uint32_t row = thread / n, column = thread % n;
      const int r = side_class(row, n), c = side_class(column, n);
      if (r != 1 && c != 1) return (r == 0 ? 0 : 2) + (c == 0 ? 0 : 1);  // corners 0-3
      if (r == 0) return 4;                                              // top edge
      if (r == 2) return 5;                                              // bottom edge
      if (c == 0) return 6;                                              // left edge
      if (c == 2) return 7;                                              // right edge
      return row == column ? 8 : column > row ? 9 : 10;                  // diagonal, above, below
    }
    case PatternFunction::Cube3D: {
      const uint32_t n = exact_root(threads, 3);
      if (n == 0) return -1;
      const uint32_t x = thread % n, y = (thread / n) % n, z = thread / (n * n);
      return 9 * side_class(z, n) + 3 * side_class(y, n) + side_class(x, n);
    }
    case PatternFunction::Hypercube: {
      if (threads < 2 || !std::has_single_bit(threads)) return -1;
      const int dimensions = std::countr_zero(threads);
      const int weight = std::popcount(thread);
      if (weight == 0) return 0;
      if (weight == dimensions) return 1;
      return weight % 2 == 1 ? 2 : 3;
    }
    case PatternFunction::Identity:
    case PatternFunction::Modulo:
    case PatternFunction::None:
      return -1;
  }
  return -1;
}

std::string pattern_region_name(PatternFunction function, int region) {
  if (region < 0) return "-";
  switch (function) {
    case PatternFunction::Uniform:
      return "all";
    case PatternFunction::Line: {
      static const char* const names[] = {"first", "last", "middle"};
      return region < 3 ? names[region] : "?";
    }
    case PatternFunction::Grid2D: {
      static const char* const names[] = {"corner top-left",
                                          "corner top-right",
                                          "corner bottom-left",
                                          "corner bottom-right",
                                          "edge top",
                                          "edge bottom",
                                          "edge left",
                                          "edge right",
                                          "diagonal",
                                          "interior above diagonal",
                                          "interior below diagonal"};
      return region < 11 ? names[region] : "?";
    }
    case PatternFunction::Cube3D: {
      if (region >= 27) return "?";
      static const char* const side[] = {"lo", "mid", "hi"};
      const int x = region % 3, y = region / 3 % 3, z = region / 9;
      const int boundary = (x != 1) + (y != 1) + (z != 1);
      static const char* const kinds[] = {"interior", "face", "edge", "corner"};
      return std::string(kinds[boundary]) + " x" + side[x] + " y" + side[y] + " z" + side[z];
    }
    case PatternFunction::Hypercube: {
      static const char* const names[] = {"zero", "all ones", "odd weight", "even weight"};
      return region < 4 ? names[region] : "?";
    }
    case PatternFunction::Identity:
    case PatternFunction::Modulo:
    case PatternFunction::None:
      break;
  }
  return "-";
}

std::vector<int> group_threads(const std::vector<ThreadPatterns>& threads, double share) {
  struct Group {
    bool executed = false;
    std::vector<ReusePattern> mean;
    size_t members = 0;
  };
  std::vector<Group> groups;
  std::vector<int> result(threads.size(), -1);
  for (size_t t = 1; t < threads.size(); ++t) {
    const ThreadPatterns& own = threads[t];
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      if (groups[g].executed != own.has_value()) continue;
      if (!own || pattern_lists_match(*own, groups[g].mean, share)) break;
    }
    if (g == groups.size()) groups.push_back({own.has_value(), {}, 0});
    Group& group = groups[g];
    if (own) {
      // The running arithmetic mean of the members' patterns.
      if (group.members == 0) group.mean = *own;
      const double k = static_cast<double>(group.members);
      for (size_t i = 0; i < group.mean.size() && group.members > 0; ++i) {
        ReusePattern& m = group.mean[i];
        const ReusePattern& p = (*own)[i];
        m.min = (m.min * k + p.min) / (k + 1);
        m.max = (m.max * k + p.max) / (k + 1);
        m.mean = (m.mean * k + p.mean) / (k + 1);
        m.frequency = (m.frequency * k + p.frequency) / (k + 1);
        m.count = (m.count * k + p.count) / (k + 1);
      }
    }
    ++group.members;
    result[t] = static_cast<int>(g);
  }
  return result;
}

bool function_explains(PatternFunction function, const std::vector<int>& groups) {
  const uint32_t threads = static_cast<uint32_t>(groups.size());
  if (pattern_region(function, threads, 0) < 0) return false;
  std::map<int, int> group_of_region;
  for (uint32_t t = 1; t < threads; ++t) {
    const auto [it, added] =
        group_of_region.emplace(pattern_region(function, threads, t), groups[t]);
    if (!added && it->second != groups[t]) return false;
  }
  return true;
}

ReusePrediction predict_reuse(const ReuseRun& test, const ReuseRun& train,
                              const PredictionOptions& options) {
  ReusePrediction out;
  out.test_name = test.name;
  out.train_name = train.name;
  out.test_size = test.size;
  out.train_size = train.size;
  out.reference_size = options.reference_size;
  out.test_threads = test.threads;
  out.train_threads = train.threads;
  out.reference_threads = options.reference_threads;
  out.grouping = options.grouping;
  out.locality = options.locality;
  out.granule_bytes = options.granule_bytes;
  out.pattern_sub_bins = options.pattern_sub_bins;
  out.cache_bytes = options.cache_bytes;

  const RunIndex a = index_run(test, options.locality, options.pattern_sub_bins);
  const RunIndex b = index_run(train, options.locality, options.pattern_sub_bins);
  std::vector<ReuseInstructionKey> keys;
  for (const auto& [key, entry] : a) keys.push_back(key);
  for (const auto& [key, entry] : b)
    if (!a.contains(key)) keys.push_back(key);
  std::sort(keys.begin(), keys.end());

  const uint32_t tref = options.reference_threads;
  const bool same_threads = test.threads == tref && train.threads == tref;
  const PatternFunction mode = same_threads        ? PatternFunction::Identity
                               : !options.grouping ? PatternFunction::Modulo
                                                   : PatternFunction::None;
  std::map<PatternFunction, size_t> chosen;
  std::vector<double> miss_sums(options.cache_bytes.size(), 0);

  for (const ReuseInstructionKey& key : keys) {
    const InstructionEntry* ea = find_entry(a, key);
    const InstructionEntry* eb = find_entry(b, key);
    const InstructionEntry& names = ea != nullptr ? *ea : *eb;
    InstructionPrediction ip;
    ip.key = key;
    ip.function = names.function;
    ip.file = names.file;
    ip.line = names.line;
    ip.pattern_function = mode;

    RunRegions ra, rb;
    if (mode == PatternFunction::None) {
      const std::vector<int> ga =
          group_threads(thread_patterns(ea, test.threads), kGroupMatchShare);
      const std::vector<int> gb =
          group_threads(thread_patterns(eb, train.threads), kGroupMatchShare);
      for (PatternFunction f : kPatternFunctions) {
        if (pattern_region(f, tref, 0) >= 0 && function_explains(f, ga) &&
            function_explains(f, gb)) {
          ip.pattern_function = f;
          ra = run_regions(f, ga);
          rb = run_regions(f, gb);
          break;
        }
      }
      ++chosen[ip.pattern_function];
    }

    for (uint32_t t = 0; t < tref; ++t) {
      ThreadPrediction tp;
      tp.thread = t;
      if (mode == PatternFunction::Identity) {
        tp.test_thread = tp.train_thread = t;
      } else if (mode == PatternFunction::Modulo) {
        if (test.threads > 0) tp.test_thread = t % test.threads;
        if (train.threads > 0) tp.train_thread = t % train.threads;
      } else if (t == 0) {
        tp.test_thread = tp.train_thread = 0;
      } else if (ip.pattern_function != PatternFunction::None) {
        tp.region = pattern_region(ip.pattern_function, tref, t);
        tp.test_thread = representative(tp.region, ra, rb);
        tp.train_thread = representative(tp.region, rb, ra);
      }
      const ThreadEntry* pa = find_thread(ea, tp.test_thread);
      const ThreadEntry* pb = find_thread(eb, tp.train_thread);
      if (!tp.test_thread || !tp.train_thread) {
        tp.reason = ip.pattern_function == PatternFunction::None
                        ? "no pattern function explains the threads' grouping"
                        : "no training thread in its region";
      } else if (pa == nullptr && pb == nullptr) {
        continue;  // the mapped threads never executed it
      } else if (pa == nullptr || pb == nullptr) {
        tp.reason = "not executed by thread " +
                    std::to_string(pa == nullptr ? *tp.test_thread : *tp.train_thread) + " of " +
                    (pa == nullptr ? "TEST" : "TRAIN");
      } else {
        predict_patterns(tp, pa->patterns, pb->patterns, test.size, train.size,
                         options.reference_size, options);
        if (tp.predictable) {
          out.predicted_accesses += tp.accesses;
          for (size_t c = 0; c < tp.miss_ratios.size(); ++c)
            miss_sums[c] += tp.miss_ratios[c] * tp.accesses;
        }
      }
      ip.threads.push_back(std::move(tp));
    }
    out.instructions.push_back(std::move(ip));
  }

  out.pattern_function = mode;
  if (mode == PatternFunction::None) {
    size_t most = 0;
    for (PatternFunction f : kPatternFunctions)
      if (chosen[f] > most) {
        most = chosen[f];
        out.pattern_function = f;
      }
  }
  for (double sum : miss_sums)
    out.miss_ratios.push_back(out.predicted_accesses > 0 ? sum / out.predicted_accesses : 0);
  return out;
}

void PredictionScore::add(const PredictionScore& other) {
  operations += other.operations;
  covered += other.covered;
  correct += other.correct;
}

bool prediction_correct(const std::vector<ReusePattern>& predicted,
                        const std::vector<ReusePattern>& observed) {
  if (predicted.size() != observed.size()) return false;
  for (size_t i = 0; i < predicted.size(); ++i)
    if (pattern_overlap(predicted[i], observed[i]) < kPredictionOverlap) return false;
  return true;
}

ReuseEvaluation evaluate_reuse_prediction(const ReuseRun& test, const ReuseRun& train,
                                          const ReuseRun& reference, PredictionOptions options) {
  options.reference_size = reference.size;
  options.reference_threads = reference.threads;
  ReuseEvaluation out;
  out.reference_name = reference.name;
  out.prediction = predict_reuse(test, train, options);

  std::map<std::pair<ReuseInstructionKey, uint32_t>, const ThreadPrediction*> predicted;
  std::map<ReuseInstructionKey, PatternFunction> functions;
  for (const InstructionPrediction& ip : out.prediction.instructions) {
    functions[ip.key] = ip.pattern_function;
    for (const ThreadPrediction& tp : ip.threads) predicted[{ip.key, tp.thread}] = &tp;
  }
  const PatternFunction function = out.prediction.pattern_function;
  const bool geometric = function != PatternFunction::Identity &&
                         function != PatternFunction::Modulo && function != PatternFunction::None;

  std::map<uint32_t, PredictionScore> by_thread;
  for (const auto& [key, entry] :
       index_run(reference, options.locality, options.pattern_sub_bins)) {
    InstructionScore is;
    is.key = key;
    is.function = entry.function;
    is.file = entry.file;
    is.line = entry.line;
    const auto f = functions.find(key);
    is.pattern_function = f != functions.end() ? f->second : PatternFunction::None;
    for (const auto& [thread, observed] : entry.threads) {
      PredictionScore s;
      s.operations = observed.patterns.accesses;
      const auto p = predicted.find({key, thread});
      if (p != predicted.end() && p->second->predictable) {
        s.covered = s.operations;
        if (prediction_correct(p->second->patterns, observed.patterns.patterns))
          s.correct = s.operations;
      }
      is.score.add(s);
      by_thread[thread].add(s);
      out.overall.add(s);
    }
    out.instructions.push_back(std::move(is));
  }
  for (const auto& [thread, score] : by_thread)
    out.threads.push_back(
        {thread, geometric && thread > 0 ? pattern_region(function, reference.threads, thread) : -1,
         score});
  return out;
}

}  // namespace weft
