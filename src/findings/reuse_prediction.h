// Prediction of a larger run's reuse patterns from two training runs
// (docs/prediction.md): problem-size scaling of each pattern, thread
// grouping, geometric pattern functions and the thread mapping they give,
// predicted histograms and miss ratios, and coverage and accuracy against
// a reference run. Works on the histograms alone (`InstructionReuse`), so
// it is the same on hand-made data and on profiles.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/reuse/reuse_tables.h"
#include "findings/reuse_patterns.h"

namespace weft {

// Threads join a group when all their patterns match the group's by this
// share (the paper's 95%).
inline constexpr double kGroupMatchShare = 0.95;
// A predicted pattern is correct when it overlaps the observed one by at
// least this share (the paper's 90%).
inline constexpr double kPredictionOverlap = 0.90;
// Patterns are formed on a grid of this many bins per power of two
// (docs/prediction.md, "Resolution").
inline constexpr uint32_t kDefaultPatternSubBins = 1;

// One run's histograms, with its thread count and problem size.
struct ReuseRun {
  std::string name;  // the profile's path, for messages
  std::vector<InstructionReuse> histograms;
  uint32_t threads = 0;
  double size = 0;
};

// Which histograms are predicted: the remote ones (the paper's), the local
// ones, or both (each locality of an instruction on its own).
enum class LocalityChoice { Remote, Local, All };
const char* locality_choice_name(LocalityChoice choice);  // "remote", "local", "all"

// An instruction across runs: its module's file name (no directory), its
// offset in the module, and the locality of the histogram.
struct ReuseInstructionKey {
  std::string module;
  uint64_t offset = 0;
  ReuseLocality locality = ReuseLocality::Remote;
  auto operator<=>(const ReuseInstructionKey&) const = default;
};

// ---- Problem-size scaling ----

// v(size) = a + b * size^exponent, exponent 0 (constant), 1/3, 1/2, 1, 2
// or 3. The last two serve sizes that are a per-thread order N of 2-D and
// 3-D data (the footprint, and so the distances, grow as N^2 or N^3).
enum class SizeModel { Constant, CubeRoot, SquareRoot, Linear, Square, Cube };
// "constant", "cbrt", "sqrt", "linear", "square", "cube"
const char* size_model_name(SizeModel model);

// v(size) = a * size^lower + b * size^model: `lower` is Constant (the
// a + b * size^e above) unless the values grow at a rate between two of the
// exponents, when both terms are kept (a polynomial through the origin).
struct SizeFit {
  SizeModel model = SizeModel::Constant;
  SizeModel lower = SizeModel::Constant;
  double a = 0;
  double b = 0;
  double at(double size) const;
};

// The model through (s1, v1) and (s2, v2). Their growth exponent p =
// log(v2/v1) / log(s2/s1) picks it: within 0.1 of one of the exponents (or
// outside (1/3, 3)), that exponent e with an intercept, a + b * size^e; between
// two adjacent ones, e_low < p < e_high, the sum a * size^e_low + b *
// size^e_high (a stencil's halo distance grows as c2 N^2 + c1 N: p = 1.4
// from N = 16 to 24, and neither N nor N^2 alone reaches N = 64). A
// constant is their mean. Values of 0 that change: linear.
SizeFit fit_size(double s1, double v1, double s2, double v2);
// "sqrt", "linear+square", ...: the model's terms, the lower one first.
std::string size_fit_name(const SizeFit& fit);

// ---- Thread scaling ----

// How reference threads are mapped to training threads: the same id (all
// three runs have as many threads), id modulo the training run's threads
// (--no-grouping), or through a geometric pattern function chosen per
// instruction; None when no function explains an instruction's grouping.
enum class PatternFunction { Identity, Modulo, Uniform, Line, Grid2D, Cube3D, Hypercube, None };
// "identity", "modulo", "uniform", "1-D", "2-D", "3-D", "hypercube", "none"
const char* pattern_function_name(PatternFunction function);

// The geometric functions tried, in this order (the simplest first).
inline constexpr PatternFunction kPatternFunctions[] = {
    PatternFunction::Uniform, PatternFunction::Line, PatternFunction::Grid2D,
    PatternFunction::Cube3D, PatternFunction::Hypercube};

// The region of `thread` among `threads` under a geometric function; -1
// when the function is not defined for that many threads (docs/prediction.md
// lists the regions).
int pattern_region(PatternFunction function, uint32_t threads, uint32_t thread);
std::string pattern_region_name(PatternFunction function, int region);

// One thread's patterns of an instruction; nullopt when the thread did not
// execute it.
using ThreadPatterns = std::optional<std::vector<ReusePattern>>;

// The groups of threads 1..T-1 (thread 0 is always its own, group -1): in
// id order, a thread joins the first group whose averaged patterns its own
// match by `share` (threads that did not execute the instruction form
// groups of their own), else starts a new one. Group ids from 0.
std::vector<int> group_threads(const std::vector<ThreadPatterns>& threads, double share);

// Whether `function` explains `groups` (from group_threads): defined for
// that many threads, and no region of threads 1..T-1 split across groups.
bool function_explains(PatternFunction function, const std::vector<int>& groups);

// ---- Prediction ----

struct PredictionOptions {
  double reference_size = 0;
  uint32_t reference_threads = 0;
  bool grouping = true;  // false: --no-grouping
  LocalityChoice locality = LocalityChoice::Remote;
  std::vector<uint64_t> cache_bytes;  // --cache: miss ratios predicted for these
  uint64_t granule_bytes = 64;
  // --pattern-bins: the grid patterns are formed on (reuse_patterns.h).
  uint32_t pattern_sub_bins = kDefaultPatternSubBins;
};

// One reference thread's prediction for one instruction.
struct ThreadPrediction {
  uint32_t thread = 0;
  int region = -1;                       // under the instruction's pattern function; -1 without one
  std::optional<uint32_t> test_thread;   // the training threads it is predicted from
  std::optional<uint32_t> train_thread;  // (none: no mapping)
  // Predictable: mapped, executed in both training runs by the mapped
  // threads, and every pattern regular. Otherwise `reason` says why.
  bool predictable = false;
  std::string reason;
  std::vector<ReusePattern> patterns;  // predicted (matched ones, when not predictable)
  std::vector<SizeFit> fits;           // of each pattern's mean distance
  double accesses = 0;                 // predicted
  double cold = 0;                     // predicted
  // The predicted histogram: each pattern's accesses spread evenly over
  // its distances (histogram_of_patterns), and the cold ones.
  ReuseDistanceHistogram histogram;
  std::vector<double> miss_ratios;  // per PredictionOptions::cache_bytes
};

struct InstructionPrediction {
  ReuseInstructionKey key;
  std::string function;
  std::string file;
  uint32_t line = 0;
  PatternFunction pattern_function = PatternFunction::None;
  // The reference threads whose mapped training threads executed it in at
  // least one training run, or that have no mapping; by id.
  std::vector<ThreadPrediction> threads;
};

struct ReusePrediction {
  std::string test_name, train_name;
  double test_size = 0, train_size = 0, reference_size = 0;
  uint32_t test_threads = 0, train_threads = 0, reference_threads = 0;
  bool grouping = true;
  LocalityChoice locality = LocalityChoice::Remote;
  uint64_t granule_bytes = 64;
  uint32_t pattern_sub_bins = kDefaultPatternSubBins;
  std::vector<uint64_t> cache_bytes;
  // The function most instructions were mapped with (Identity, Modulo, or
  // the geometric one chosen most often; None when none fits any).
  PatternFunction pattern_function = PatternFunction::None;
  std::vector<InstructionPrediction> instructions;  // by key
  std::vector<double> miss_ratios;                  // over every predicted access, per cache size
  double predicted_accesses = 0;
};

ReusePrediction predict_reuse(const ReuseRun& test, const ReuseRun& train,
                              const PredictionOptions& options);

// ---- Evaluation against a reference run ----

// Operations are the reference's accesses (cold ones included).
struct PredictionScore {
  double operations = 0;
  double covered = 0;  // predictable
  double correct = 0;  // covered and every pattern predicted correctly
  double coverage() const { return operations > 0 ? covered / operations : 0; }
  double accuracy() const { return covered > 0 ? correct / covered : 0; }
  void add(const PredictionScore& other);
};

struct InstructionScore {
  ReuseInstructionKey key;
  std::string function;
  std::string file;
  uint32_t line = 0;
  PatternFunction pattern_function = PatternFunction::None;
  PredictionScore score;
};

struct ThreadScore {
  uint32_t thread = 0;
  int region = -1;  // under the prediction's pattern_function; -1 for thread 0 (always from 0)
  PredictionScore score;
};

struct ReuseEvaluation {
  std::string reference_name;
  ReusePrediction prediction;  // for the reference's size and threads
  PredictionScore overall;
  std::vector<InstructionScore> instructions;  // every instruction the reference has, by key
  std::vector<ThreadScore> threads;            // every reference thread with operations
};

// Whether `predicted` matches `observed`: as many patterns, each
// overlapping the observed one of the same rank by kPredictionOverlap.
bool prediction_correct(const std::vector<ReusePattern>& predicted,
                        const std::vector<ReusePattern>& observed);

// Predicts the reference's size and thread count (options' reference_size
// and reference_threads are taken from `reference`) and scores it.
ReuseEvaluation evaluate_reuse_prediction(const ReuseRun& test, const ReuseRun& train,
                                          const ReuseRun& reference, PredictionOptions options);

// ---- From profiles (`weft predict`) ----

// What the command line gives: sizes override the profiles' meta
// `problem_size`, threads the reference's thread count.
struct PredictQuery {
  std::optional<double> test_size;
  std::optional<double> train_size;
  std::optional<double> reference_size;       // --size
  std::optional<uint32_t> reference_threads;  // --threads
  bool grouping = true;
  LocalityChoice locality = LocalityChoice::Remote;
  std::vector<uint64_t> cache_bytes;
  uint32_t pattern_sub_bins = kDefaultPatternSubBins;
};

// A profile's reuse histograms with its thread count and problem size
// (`size`, else meta `problem_size`); a FindingError naming `size_option`
// when it has none, or when the profile was recorded without the reuse
// analysis.
ReuseRun reuse_run(const Profile& profile, std::optional<double> size,
                   const std::string& size_option);

// `weft predict TEST TRAIN --size N [--threads T]`: the granule is the
// training profile's meta `reuse_granule` (else 64 bytes).
ReusePrediction find_reuse_prediction(const Profile& test, const Profile& train,
                                      const PredictQuery& query);
// `weft predict TEST TRAIN --against REF`.
ReuseEvaluation find_reuse_evaluation(const Profile& test, const Profile& train,
                                      const Profile& reference, const PredictQuery& query);

}  // namespace weft
