// The raw capture (src/sources/capture/raw_capture.h): the file the
// compile-time runtime writes at the program's end, read by `weft record`
// (read_raw_capture). The input is the whole file; what the reader returns
// is then grouped into section instances, as the profile builder does.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "profile/section_instances.h"
#include "sources/capture/raw_capture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static weft_fuzz::ScratchFile file("capture");
  const std::string& path = file.write(data, size);
  weft_fuzz::expect_bounded([&] {
    const weft::RunCapture capture = weft::read_raw_capture(path);
    weft::find_section_instances(capture.sync);
  });
  return 0;
}
