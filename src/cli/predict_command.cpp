// `weft predict TEST TRAIN --size N | --against REF`: the reuse patterns of
// a larger run predicted from two training profiles, or that prediction
// scored against a recorded reference (docs/prediction.md).
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "cli/command.h"
#include "findings/reuse_prediction.h"
#include "profile/profile.h"
#include "views/predict_view.h"

namespace weft {
namespace {

struct PredictCommand : Command {
  std::string test, train, against;
  uint64_t size = 0, threads = 0, test_size = 0, train_size = 0;
  std::vector<uint64_t> caches;
  bool no_grouping = false;
  uint32_t pattern_bins = kDefaultPatternSubBins;
  LocalityChoice locality = LocalityChoice::Remote;
  OutputFormat format = OutputFormat::Table;
  CLI::Option *size_option = nullptr, *threads_option = nullptr, *test_size_option = nullptr,
              *train_size_option = nullptr, *against_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "predict",
        "reuse patterns of a larger run predicted from two training runs (--size), or scored "
        "against a reference run (--against)");
    c->add_option("TEST", test, "the smaller training profile")->required();
    c->add_option("TRAIN", train, "the larger training profile")->required();
    size_option = c->add_option("--size", size,
                                "the predicted run's problem size (with --against: instead of "
                                "REF's meta problem_size)")
                      ->transform(whole_number(1));
    threads_option =
        c->add_option("--threads", threads, "the predicted run's threads (default: TRAIN's)")
            ->transform(whole_number(1, 1u << 20));
    test_size_option =
        c->add_option("--test-size", test_size, "TEST's problem size (default: its meta)")
            ->transform(whole_number(1));
    train_size_option =
        c->add_option("--train-size", train_size, "TRAIN's problem size (default: its meta)")
            ->transform(whole_number(1));
    against_option =
        c->add_option("--against", against, "score the prediction against this profile");
    c->add_flag("--no-grouping", no_grouping,
                "map thread i to thread i mod the training threads (no thread grouping)");
    CLI::Option* cache = as_size(c->add_option("--cache", caches,
                                               "cache sizes whose miss ratios are predicted "
                                               "(comma-separated: 32K,1M)"))
                             ->delimiter(',');
    c->add_option("--pattern-bins", pattern_bins,
                  "bins per power of two that patterns are formed on: 1, 2, 4 or 8 (the "
                  "histogram's own)")
        ->check(CLI::IsMember({1, 2, 4, 8}))
        ->capture_default_str();
    add_choice(c, "--locality", locality,
               {{"remote", LocalityChoice::Remote},
                {"local", LocalityChoice::Local},
                {"all", LocalityChoice::All}},
               "which histograms: remote (the paper's), local, or all");
    add_choice(c, "--format", format,
               {{"table", OutputFormat::Table}, {"json", OutputFormat::Json}}, "output format");
    against_option->excludes(threads_option);
    against_option->excludes(cache);
    return c;
  }

  int run() override {
    PredictQuery query;
    if (size_option->count() > 0) query.reference_size = static_cast<double>(size);
    if (threads_option->count() > 0) query.reference_threads = static_cast<uint32_t>(threads);
    if (test_size_option->count() > 0) query.test_size = static_cast<double>(test_size);
    if (train_size_option->count() > 0) query.train_size = static_cast<double>(train_size);
    query.grouping = !no_grouping;
    query.locality = locality;
    query.cache_bytes = caches;
    query.pattern_sub_bins = pattern_bins;
    const bool evaluate = against_option->count() > 0;
    if (!evaluate && !query.reference_size)
      throw std::runtime_error(
          "give the predicted run's problem size (--size N) or a reference profile (--against "
          "REF)");
    std::vector<Profile> profiles;
    profiles.push_back(Profile::open(test));
    profiles.push_back(Profile::open(train));
    if (evaluate) profiles.push_back(Profile::open(against));
    const std::string text =
        evaluate
            ? render_evaluation(find_reuse_evaluation(profiles[0], profiles[1], profiles[2], query),
                                format)
            : render_prediction(find_reuse_prediction(profiles[0], profiles[1], query), format);
    for (const Profile& profile : profiles)
      if (!profile.complete())
        fmt::print(stderr, "weft: warning: {} is an INCOMPLETE profile ({})\n", profile.path(),
                   profile.meta_value("incomplete_reason"));
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_predict_command() { return std::make_unique<PredictCommand>(); }

}  // namespace weft
