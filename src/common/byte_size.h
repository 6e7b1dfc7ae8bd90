// Byte sizes as users write them on the command line (--cache-size,
// --cache, --trace-budget).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace weft {

// "4096", "64K", "64KiB", "32M", "32MiB", "1G", "1GiB" (powers of 1024);
// nullopt for anything else, including overflow.
std::optional<uint64_t> parse_byte_size(std::string_view text);

}  // namespace weft
