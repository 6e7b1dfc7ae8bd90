// Every view of weft on one profile, in every format, as `weft report`,
// `comm`, `crd`, `diff`, `imbalance`, `falseshare` and `trace` run them:
// opening, findings and rendering (the profile fuzz targets' pipeline).
#pragma once

#include <string>

namespace weft_fuzz {

void run_every_view(const std::string& profile_path);

// One of them, chosen by `choice` (an input's byte): the fuzzers run one
// view per input, some 40 times faster than all of them; the replayers
// (standalone_main.cpp, WEFT_FUZZ_REPLAY) run every view on each input.
void run_view(const std::string& profile_path, unsigned choice);

}  // namespace weft_fuzz
