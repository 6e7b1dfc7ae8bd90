#include "views/view_format.h"

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

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  for (OutputFormat format : {OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json}) {
    if (name == output_format_name(format)) return format;
  }
  return std::nullopt;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace weft
