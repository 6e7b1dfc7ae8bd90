// The profile as a file: the input is the whole SQLite file (seeded with
// small recorded profiles, fuzz/corpus/profile), opened and read by every
// view (fuzz_views.h). libFuzzer's byte mutations mostly damage SQLite's
// pages, which must be refused in one line; fuzz_profile_rows changes the
// rows of a valid profile instead.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "fuzz_views.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static weft_fuzz::ScratchFile file("profile.weft");
  weft_fuzz::run_every_view(file.write(data, size));
  return 0;
}
