#include "cli/command.h"

#include <charconv>

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

}  // namespace weft
