#include "views/text_table.h"

#include <algorithm>

namespace weft {

std::string TextTable::render(const std::string& indent) const {
  std::vector<size_t> widths(columns_.size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string text;
  for (const auto& row : rows_) {
    std::string line = indent;
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      if (i > 0) line += "  ";
      std::string padding(widths[i] - row[i].size(), ' ');
      line += columns_[i] == Align::Right ? padding + row[i] : row[i] + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

}  // namespace weft
