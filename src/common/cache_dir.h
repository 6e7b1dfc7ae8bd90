// The user's cache directory of weft, shared by every cache weft keeps (the
// binary-structure cache of src/static, the machine calibration of
// src/calibration).
#pragma once

#include <string>

namespace weft {

// $WEFT_CACHE_DIR if set, else $XDG_CACHE_HOME/weft, else $HOME/.cache/weft;
// empty when none of them is set.
std::string weft_cache_dir();

}  // namespace weft
