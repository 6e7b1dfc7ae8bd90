// The trace encoding (src/common/loop_trace_format.h): the bytes of one
// compressed memory trace, as `memory_traces.encoding` holds them. A trace
// that decodes must encode back to a trace equal to it, and the views'
// uses of it (its length, depth, text form, a bounded expansion) must stay
// bounded whatever its loop counts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/loop_trace.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft_fuzz::expect_bounded([&] {
    const weft::LoopTrace trace = weft::decode_loop_trace(data, size);
    const std::vector<uint8_t> encoded = weft::encode_loop_trace(trace);
    if (!(weft::decode_loop_trace(encoded.data(), encoded.size()) == trace)) std::abort();
    weft::trace_length(trace);
    weft::trace_depth(trace);
    weft::format_loop_trace(trace, 40);
    weft::expand_loop_trace(trace, 4096);
  });
  return 0;
}
