#include "views/imbalance_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace weft {

namespace {

std::string render_json(const ImbalanceFindings& findings, size_t top) {
  nlohmann::json out;
  out["measure"] = busy_measure_name(findings.measure);
  out["no_barrier_recognised"] = findings.profile.no_barrier_recognised();
  out["sections"] = nlohmann::json::array();
  for (const SectionImbalance& s : findings.sections) {
    nlohmann::json causes = nlohmann::json::array();
    for (size_t i = 0; i < s.causes.size() && i < top; ++i) {
      const ImbalanceCauseLine& c = s.causes[i];
      nlohmann::json cause = {{"kind", c.kind},
                              {"score", c.score},
                              {"file", c.position.file},
                              {"line", c.position.line},
                              {"function", c.position.function},
                              {"pc", fmt::format("0x{:x}", c.pc)},
                              {"code", c.code}};
      if (!c.level.empty()) cause["level"] = c.level;
      causes.push_back(std::move(cause));
    }
    nlohmann::json busy = nlohmann::json::array();
    for (size_t i = 0; i < s.threads.size(); ++i)
      busy.push_back({{"thread", s.threads[i]}, {"busy", s.busy[i]}});
    out["sections"].push_back({{"location", section_location(s.region)},
                               {"region", s.region.name},
                               {"instances", s.instances},
                               {"analyzed_instances", s.analyzed_instances},
                               {"measured_instances", s.measured_instances},
                               {"imbalance", s.imbalance},
                               {"lost", s.lost},
                               {"idle_share", s.idle_share},
                               {"unlocated_causes", s.unlocated_causes},
                               {"threads", std::move(busy)},
                               {"causes", std::move(causes)}});
  }
  return out.dump(2) + "\n";
}

std::string render_table(const ImbalanceFindings& findings, size_t top) {
  const std::vector<SectionImbalance>& sections = findings.sections;
  const std::string unit = findings.measure == BusyMeasure::ModeledCycles
                               ? "modeled cycles"
                               : busy_measure_name(findings.measure);
  std::string out = fmt::format(
      "Load imbalance per parallel section, by lost time (the threads' idle time at the closing "
      "point, summed over instances; busy and lost in {}; imbalance = mean over instances of "
      "the threads' idle fraction)\n",
      unit);
  if (!findings.profile.complete)
    out += fmt::format("warning: INCOMPLETE profile ({})\n", findings.profile.incomplete_reason);
  if (const std::string note = instance_sampling_note(findings.profile); !note.empty())
    out += "note: " + note + "\n";
  if (findings.profile.no_barrier_recognised())
    out += no_barrier_note(findings.profile.threads, "");
  if (sections.empty()) out += "\nNo section instance with two or more threads was recorded.\n";
  constexpr size_t kBarWidth = 40;
  for (const SectionImbalance& s : sections) {
    const std::string measured = s.measured_instances < s.instances
                                     ? fmt::format("memory counted in {}, ", s.measured_instances)
                                     : std::string();
    out += fmt::format(
        "\n{}  instances {} ({}analyzed {})  lost {:.3g} ({} of its thread-time)  imbalance "
        "{:.1f}%\n",
        section_location(s.region), s.instances, measured, s.analyzed_instances, s.lost,
        share_text(s.idle_share), 100 * s.imbalance);
    out += "  busy per thread, summed over the instances:\n";
    const double longest = s.busy.empty() ? 0 : *std::max_element(s.busy.begin(), s.busy.end());
    for (size_t i = 0; i < s.threads.size(); ++i) {
      const size_t width =
          longest > 0 ? static_cast<size_t>(kBarWidth * s.busy[i] / longest + 0.5) : 0;
      out += fmt::format("  T{:<4} {:<{}} {:.3g}\n", s.threads[i], std::string(width, '#'),
                         kBarWidth, s.busy[i]);
    }
    const std::string unlocated =
        s.unlocated_causes == 0
            ? std::string()
            : fmt::format("  ({} cause{} at no source line, not ranked)\n", s.unlocated_causes,
                          s.unlocated_causes == 1 ? "" : "s");
    if (!s.ranks_causes()) {
      out += imbalance_unranked_note(s, "  ") + unlocated;
      continue;
    }
    out +=
        fmt::format("  {:<4} {:<13} {:>8}  {:<28} {}\n", "rank", "cause", "score", "where", "code");
    // A cause that explains less than 0.1% of the imbalance is listed in
    // the JSON only: nobody acts on it.
    size_t negligible = 0;
    for (size_t i = 0; i < s.causes.size() && i < top; ++i) {
      const ImbalanceCauseLine& c = s.causes[i];
      if (c.score < kNegligibleCauseScore) {
        negligible = s.causes.size() - i;
        break;
      }
      const std::string kind = c.level.empty() ? c.kind : c.kind + " " + c.level;
      out += fmt::format("  {:<4} {:<13} {:>8.3f}  {:<28} {}\n", i + 1, kind, c.score,
                         cause_location(c), c.code);
    }
    if (negligible != 0)
      out += fmt::format("  ({} more cause{} explaining under 0.1% each)\n", negligible,
                         negligible == 1 ? "" : "s");
    out += unlocated;
  }
  return out;
}

}  // namespace

std::string imbalance_unranked_note(const SectionImbalance& s, std::string_view indent) {
  if (s.balanced())
    return fmt::format("{}no cause ranked: balanced (idle under 1% of its thread-time){}\n", indent,
                       s.causes.empty() ? "" : "; --format json lists what the diagnosis found");
  // Forward selection tests each predictor with n - 2 degrees of freedom
  // (imbalance_diagnosis.cpp): with two threads any count that differs fits
  // the two busy times exactly, and none can be told from chance.
  if (s.largest_team < 3)
    return fmt::format(
        "{}no cause ranked: with {} thread{} per instance no count can be told from chance (the "
        "diagnosis needs 3 or more: record with more threads)\n",
        indent, s.largest_team, s.largest_team == 1 ? "" : "s");
  return fmt::format("{}no cause at a source line explains the busy times\n", indent);
}

std::string render_imbalance(const ImbalanceFindings& findings,
                             const ImbalanceRenderOptions& options) {
  if (options.format == OutputFormat::Csv)
    throw ViewError("imbalance has no csv format; use --format table or json");
  return options.format == OutputFormat::Json ? render_json(findings, options.top)
                                              : render_table(findings, options.top);
}

}  // namespace weft
