// Every view of weft on one profile, in every format, as `weft report`,
// `comm`, `crd`, `diff`, `imbalance`, `falseshare` and `trace` run them:
// opening, findings and rendering (the profile fuzz targets' pipeline).
#pragma once

#include <string>

namespace weft_fuzz {

void run_every_view(const std::string& profile_path);

}  // namespace weft_fuzz
