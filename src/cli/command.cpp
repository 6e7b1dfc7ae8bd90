#include "cli/command.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace weft {

CLI::Validator size_in_bytes() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const size_t unit = text.find_first_not_of("0123456789");
        const std::string_view digits = std::string_view(text).substr(0, unit);
        uint64_t number = 0;
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), number);
        const bool unit_is_letters =
            unit == std::string::npos ||
            text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", unit) ==
                std::string::npos;
        if (digits.empty() || error != std::errc() || !unit_is_letters)
          return "'" + text + "' is not a size (e.g. 4096, 64K, 32M, 1G)";
        return CLI::AsSizeValue(false)(text);  // the digits and unit, as bytes
      },
      "SIZE");
}

std::optional<uint64_t> parse_size(std::string text) {
  if (!size_in_bytes()(text).empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

CLI::Validator whole_number(uint64_t min, uint64_t max) {
  const std::string range = max == UINT64_MAX ? fmt::format("of at least {}", min)
                                              : fmt::format("from {} to {}", min, max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::string refused = "'" + text + "' is not a whole number " + range;
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return refused;
        const size_t nonzero = text.find_first_not_of('0');
        text = nonzero == std::string::npos ? "0" : text.substr(nonzero);  // never octal
        uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || value < min || value > max) return refused;
        return "";
      },
      "N");
}

CLI::Validator decimal_number(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::string refused =
            fmt::format("'{}' is not a decimal number from {} to {}", text, min, max);
        const size_t dot = text.find('.');
        if (text.empty() || text == "." ||
            text.find_first_not_of("0123456789.") != std::string::npos ||
            (dot != std::string::npos && text.find('.', dot + 1) != std::string::npos))
          return refused;
        double value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return refused;
        return "";
      },
      "X");
}

}  // namespace weft
