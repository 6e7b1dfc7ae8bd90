#include "common/byte_size.h"

#include <charconv>
#include <limits>

namespace weft {

std::optional<uint64_t> parse_byte_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  uint64_t number = 0;
  auto [ptr, error] = std::from_chars(text.data(), text.data() + digits, number);
  if (error != std::errc() || ptr != text.data() + digits) return std::nullopt;
  const std::string_view suffix = text.substr(digits);
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "k" || suffix == "KiB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MiB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GiB") {
    shift = 30;
  } else {
    return std::nullopt;
  }
  if (number > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return number << shift;
}

}  // namespace weft
