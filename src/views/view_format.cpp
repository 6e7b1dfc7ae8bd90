#include "views/view_format.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace weft {

const char* output_format_name(OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      return "table";
    case OutputFormat::Csv:
      return "csv";
    case OutputFormat::Json:
      return "json";
  }
  return "table";
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string share_text(double fraction) {
  const double percent = 100 * fraction;
  return percent == 0 || percent >= 1 ? fmt::format("{:.1f}%", percent)
                                      : fmt::format("{:.2g}%", percent);
}

std::string human_bytes(uint64_t bytes) {
  constexpr std::array<const char*, 4> units = {"B", "KiB", "MiB", "GiB"};
  size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (unit + 1 < units.size() && value >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, units[unit]);
  return fmt::format("{:.2f} {}", value, units[unit]);
}

std::string no_barrier_note(uint32_t threads, std::string_view indent) {
  return fmt::format(
      "{0}note: {1} threads but no barrier weft recognises (pthread, OpenMP or condition-variable "
      "barrier, marked section): the only section is the create->join span.\n"
      "{0}      Mark a hand-written barrier with <weft/sections.h> (WEFT_SECTION_END/BEGIN) or use "
      "pthread_barrier_wait; `weft record` named the busiest synchronization sites "
      "(docs/metrics.md, \"Parallel section\").\n",
      indent, threads);
}

}  // namespace weft
