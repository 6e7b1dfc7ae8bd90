#include "views/predict_view.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "views/text_table.h"

namespace weft {
namespace {

using nlohmann::json;

std::string number_text(double value) { return fmt::format("{:.6g}", value); }

std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

std::string instruction_text(const ReuseInstructionKey& key, const std::string& function,
                             const std::string& file, uint32_t line) {
  std::string where = file.empty() ? std::string() : fmt::format("{}:{} ", file, line);
  where += function.empty() ? std::string("?") : function;
  return fmt::format("{} ({}+{:#x}, {})", where, key.module, key.offset,
                     key.locality == ReuseLocality::Remote ? "remote" : "local");
}

json instruction_json(const ReuseInstructionKey& key, const std::string& function,
                      const std::string& file, uint32_t line) {
  return {{"module", key.module},
          {"offset", key.offset},
          {"function", function.empty() ? json(nullptr) : json(function)},
          {"file", file.empty() ? json(nullptr) : json(file)},
          {"line", line == 0 ? json(nullptr) : json(line)},
          {"locality", key.locality == ReuseLocality::Remote ? "remote" : "local"}};
}

json optional_thread(const std::optional<uint32_t>& thread) {
  return thread ? json(*thread) : json(nullptr);
}

std::string run_text(const char* label, const std::string& name, double size, uint32_t threads) {
  return fmt::format("{} {} (size {}, {} threads)", label, name.empty() ? "-" : name,
                     number_text(size), threads);
}

std::string mapping_text(const ReusePrediction& p) {
  switch (p.pattern_function) {
    case PatternFunction::Identity:
      return "thread i from thread i (same thread counts)";
    case PatternFunction::Modulo:
      return "thread i from thread i mod the training threads (--no-grouping)";
    case PatternFunction::None:
      return "no pattern function explains the grouping (only thread 0 is mapped)";
    default:
      return fmt::format("by thread grouping, mostly the {} pattern function",
                         pattern_function_name(p.pattern_function));
  }
}

// ---- --size ----

std::string patterns_text(const ThreadPrediction& t) {
  std::string text;
  for (size_t i = 0; i < t.patterns.size(); ++i) {
    const ReusePattern& p = t.patterns[i];
    text += fmt::format("{}[{}-{} mean {} {} {}]", i == 0 ? "" : " ", number_text(p.min),
                        number_text(p.max), number_text(p.mean), percent(p.frequency),
                        size_fit_name(t.fits[i]));
  }
  if (t.cold > 0)
    text += fmt::format(" cold {}", percent(t.accesses > 0 ? t.cold / t.accesses : 0));
  return text.empty() ? "-" : text;
}

// Runs of thread ids as "1-3,7".
std::string thread_list(const std::vector<uint32_t>& threads) {
  std::string text;
  for (size_t i = 0; i < threads.size();) {
    size_t j = i;
    while (j + 1 < threads.size() && threads[j + 1] == threads[j] + 1) ++j;
    text += (text.empty() ? "" : ",") +
            (j == i ? std::to_string(threads[i]) : fmt::format("{}-{}", threads[i], threads[j]));
    i = j + 1;
  }
  return text;
}

std::string render_prediction_table(const ReusePrediction& p) {
  std::string text = fmt::format(
      "weft predict: {} reuse patterns of a run of size {} with {} threads\n",
      locality_choice_name(p.locality), number_text(p.reference_size), p.reference_threads);
  text += "  " + run_text("test", p.test_name, p.test_size, p.test_threads) + "\n";
  text += "  " + run_text("train", p.train_name, p.train_size, p.train_threads) + "\n";
  text += "  threads mapped " + mapping_text(p) + "\n";
  text += fmt::format("  patterns on {} bin(s) per power of two\n", p.pattern_sub_bins);
  if (!p.cache_bytes.empty()) {
    std::string ratios;
    for (size_t c = 0; c < p.cache_bytes.size(); ++c)
      ratios += fmt::format("{}{} {}", c == 0 ? "" : ", ", human_bytes(p.cache_bytes[c]),
                            percent(p.miss_ratios[c]));
    text += fmt::format(
        "  predicted miss ratio (fully associative LRU, {}-byte granules, over {} predictable "
        "accesses): {}\n",
        p.granule_bytes, number_text(p.predicted_accesses), ratios);
  }
  if (p.instructions.empty()) return text + "\nno instruction with reuse histograms\n";
  for (const InstructionPrediction& ip : p.instructions) {
    text += fmt::format("\n{}  [{}]\n", instruction_text(ip.key, ip.function, ip.file, ip.line),
                        pattern_function_name(ip.pattern_function));
    using A = TextTable::Align;
    std::vector<A> columns = {A::Left, A::Left, A::Left, A::Left};
    std::vector<std::string> header = {"threads", "region", "from test/train", "patterns"};
    for (uint64_t bytes : p.cache_bytes) {
      columns.push_back(A::Right);
      header.push_back("miss " + human_bytes(bytes));
    }
    TextTable table(columns);
    table.add_row(header);
    // Threads with the same region, sources' text and prediction share a row.
    std::map<std::vector<std::string>, std::vector<uint32_t>> rows;
    std::vector<std::vector<std::string>> order;
    for (const ThreadPrediction& t : ip.threads) {
      std::vector<std::string> cells = {
          pattern_region_name(ip.pattern_function, t.region),
          t.test_thread && t.train_thread ? fmt::format("{}/{}", *t.test_thread, *t.train_thread)
                                          : std::string("-"),
          t.predictable ? patterns_text(t) : "not predictable: " + t.reason};
      for (size_t c = 0; c < p.cache_bytes.size(); ++c)
        cells.push_back(t.predictable ? percent(t.miss_ratios[c]) : "-");
      // Different sources make different rows only where they matter: a
      // region's threads are all predicted from one pair.
      auto [it, added] = rows.emplace(cells, std::vector<uint32_t>{});
      if (added) order.push_back(cells);
      it->second.push_back(t.thread);
    }
    for (const std::vector<std::string>& cells : order) {
      std::vector<std::string> row = {thread_list(rows[cells])};
      row.insert(row.end(), cells.begin(), cells.end());
      table.add_row(row);
    }
    text += table.render("  ");
  }
  return text;
}

json pattern_json(const ReusePattern& p, const SizeFit& fit) {
  return {{"min", p.min},     {"max", p.max},
          {"mean", p.mean},   {"frequency", p.frequency},
          {"count", p.count}, {"model", size_fit_name(fit)}};
}

json histogram_json(const ReuseDistanceHistogram& h) {
  json bins = json::array();
  for (uint32_t b = 0; b < h.counts.size(); ++b)
    if (h.counts[b] > 0)
      bins.push_back({{"bin", b},
                      {"low", reuse_bin_low(b)},
                      {"high", reuse_bin_high(b)},
                      {"count", h.counts[b]}});
  return {{"bins", bins}, {"cold", h.cold}};
}

json run_json(const std::string& name, double size, uint32_t threads) {
  return {
      {"profile", name.empty() ? json(nullptr) : json(name)}, {"size", size}, {"threads", threads}};
}

json common_json(const ReusePrediction& p) {
  return {{"test", run_json(p.test_name, p.test_size, p.test_threads)},
          {"train", run_json(p.train_name, p.train_size, p.train_threads)},
          {"grouping", p.grouping},
          {"locality", locality_choice_name(p.locality)},
          {"pattern_bins", p.pattern_sub_bins},
          {"pattern_function", pattern_function_name(p.pattern_function)}};
}

std::string render_prediction_json(const ReusePrediction& p) {
  json out = common_json(p);
  out["reference"] = run_json("", p.reference_size, p.reference_threads);
  out["granule"] = p.granule_bytes;
  out["caches"] = p.cache_bytes;
  out["miss_ratios"] = p.miss_ratios;
  out["predicted_accesses"] = p.predicted_accesses;
  json instructions = json::array();
  for (const InstructionPrediction& ip : p.instructions) {
    json i = instruction_json(ip.key, ip.function, ip.file, ip.line);
    i["pattern_function"] = pattern_function_name(ip.pattern_function);
    json threads = json::array();
    for (const ThreadPrediction& t : ip.threads) {
      json patterns = json::array();
      for (size_t k = 0; k < t.patterns.size(); ++k)
        patterns.push_back(pattern_json(t.patterns[k], t.fits[k]));
      threads.push_back(
          {{"thread", t.thread},
           {"region", t.region < 0 ? json(nullptr) : json(t.region)},
           {"region_name", t.region < 0 ? json(nullptr)
                                        : json(pattern_region_name(ip.pattern_function, t.region))},
           {"test_thread", optional_thread(t.test_thread)},
           {"train_thread", optional_thread(t.train_thread)},
           {"predictable", t.predictable},
           {"reason", t.predictable ? json(nullptr) : json(t.reason)},
           {"accesses", t.accesses},
           {"cold", t.cold},
           {"patterns", patterns},
           {"histogram", histogram_json(t.histogram)},
           {"miss_ratios", t.miss_ratios}});
    }
    i["threads"] = threads;
    instructions.push_back(i);
  }
  out["instructions"] = instructions;
  return out.dump();
}

// ---- --against ----

json score_json(const PredictionScore& s) {
  return {{"coverage", s.coverage()}, {"accuracy", s.accuracy()}, {"operations", s.operations}};
}

std::string score_cells(const PredictionScore& s) {
  return fmt::format("coverage {}, accuracy {} of {} operations", percent(s.coverage()),
                     percent(s.accuracy()), number_text(s.operations));
}

std::string render_evaluation_table(const ReuseEvaluation& e) {
  const ReusePrediction& p = e.prediction;
  std::string text = fmt::format("weft predict: {} reuse patterns of {} against the profile\n",
                                 locality_choice_name(p.locality), e.reference_name);
  text += "  " + run_text("test", p.test_name, p.test_size, p.test_threads) + "\n";
  text += "  " + run_text("train", p.train_name, p.train_size, p.train_threads) + "\n";
  text +=
      "  " + run_text("reference", e.reference_name, p.reference_size, p.reference_threads) + "\n";
  text += "  threads mapped " + mapping_text(p) + "\n";
  text += fmt::format("  patterns on {} bin(s) per power of two\n", p.pattern_sub_bins);
  text += "overall: " + score_cells(e.overall) + "\n";
  using A = TextTable::Align;
  text += "\ninstructions\n";
  if (e.instructions.empty()) {
    text += "  none in the reference\n";
  } else {
    TextTable table({A::Left, A::Left, A::Right, A::Right, A::Right});
    table.add_row({"instruction", "mapped by", "coverage", "accuracy", "operations"});
    for (const InstructionScore& i : e.instructions)
      table.add_row({instruction_text(i.key, i.function, i.file, i.line),
                     pattern_function_name(i.pattern_function), percent(i.score.coverage()),
                     percent(i.score.accuracy()), number_text(i.score.operations)});
    text += table.render("  ");
  }
  text += "\nthreads\n";
  if (e.threads.empty()) return text + "  none\n";
  TextTable table({A::Right, A::Left, A::Right, A::Right, A::Right});
  table.add_row({"thread", "region", "coverage", "accuracy", "operations"});
  for (const ThreadScore& t : e.threads)
    table.add_row({std::to_string(t.thread), pattern_region_name(p.pattern_function, t.region),
                   percent(t.score.coverage()), percent(t.score.accuracy()),
                   number_text(t.score.operations)});
  return text + table.render("  ");
}

std::string render_evaluation_json(const ReuseEvaluation& e) {
  const ReusePrediction& p = e.prediction;
  json out = common_json(p);
  out["reference"] = run_json(e.reference_name, p.reference_size, p.reference_threads);
  out["overall"] = score_json(e.overall);
  json instructions = json::array();
  for (const InstructionScore& i : e.instructions) {
    json item = instruction_json(i.key, i.function, i.file, i.line);
    item.update(score_json(i.score));
    item["pattern_function"] = pattern_function_name(i.pattern_function);
    instructions.push_back(item);
  }
  out["instructions"] = instructions;
  json threads = json::array();
  for (const ThreadScore& t : e.threads) {
    json item = {
        {"thread", t.thread},
        {"group", t.region < 0 ? json(nullptr) : json(t.region)},
        {"region",
         t.region < 0 ? json(nullptr) : json(pattern_region_name(p.pattern_function, t.region))}};
    item.update(score_json(t.score));
    threads.push_back(item);
  }
  out["threads"] = threads;
  return out.dump();
}

}  // namespace

std::string render_prediction(const ReusePrediction& prediction, OutputFormat format) {
  if (format == OutputFormat::Csv) throw ViewError("weft predict has no CSV output");
  return format == OutputFormat::Json ? render_prediction_json(prediction)
                                      : render_prediction_table(prediction);
}

std::string render_evaluation(const ReuseEvaluation& evaluation, OutputFormat format) {
  if (format == OutputFormat::Csv) throw ViewError("weft predict has no CSV output");
  return format == OutputFormat::Json ? render_evaluation_json(evaluation)
                                      : render_evaluation_table(evaluation);
}

}  // namespace weft
