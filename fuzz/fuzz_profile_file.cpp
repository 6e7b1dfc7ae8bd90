// The profile as a file: the input is the whole SQLite file (seeded with
// small recorded profiles, fuzz/corpus/profile_file), opened and read by
// one view in one format per input (fuzz_views.h). libFuzzer's byte mutations mostly damage
// SQLite's pages, which must be refused in one line; fuzz_profile_rows changes the rows of a valid
// profile instead.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "fuzz_views.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static weft_fuzz::ScratchFile file("profile.weft");
  // The view: from the last byte, which SQLite's header and pages leave
  // to the mutations' reach as much as any.
  weft_fuzz::run_view(file.write(data, size), size ? data[size - 1] : 0);
  return 0;
}
