// Column-aligned plain-text tables for the terminal views.
#pragma once

#include <string>
#include <vector>

namespace weft {

class TextTable {
 public:
  enum class Align { Left, Right };

  // One alignment per column; rows may not be longer than this.
  explicit TextTable(std::vector<Align> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  // Each row on its own line, prefixed by `indent`, columns two spaces apart.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<Align> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace weft
