// The error of an analysis that cannot conclude: the profile lacks the data
// (recorded without an analysis), an option names nothing in it, or a
// cache size is bad or unknown.
#pragma once

#include <stdexcept>

namespace weft {

// what() is one line.
class FindingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace weft
