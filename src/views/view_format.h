// What every view shares: the output formats of `--format` and the error a
// view raises for options it cannot honour.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace weft {

enum class OutputFormat { Table, Csv, Json };

const char* output_format_name(OutputFormat format);  // "table", "csv", "json"

// One CSV field: quoted (with doubled quotes) when it holds a comma, a quote
// or a line break, as C++ region names often do ("f(int, int)").
std::string csv_field(std::string_view text);

// The bytes of a cache, for text: "32 MiB", "48 KiB", "1000 B".
std::string human_bytes(uint64_t bytes);

// A share as a percentage for text: one decimal from 1% up ("31.8%"), two
// significant digits below ("0.034%"), so that a small share is not "0.0%".
std::string share_text(double fraction);

// The lines a view prints when a run of several threads had no barrier weft
// recognises (ProfileFacts::no_barrier_recognised), each starting with
// `indent`.
std::string no_barrier_note(uint32_t threads, std::string_view indent);

// A request a view cannot serve (e.g. CSV for the report). what() is one line.
class ViewError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace weft
