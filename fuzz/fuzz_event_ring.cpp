// The event ring (src/sources/valgrind/event_ring.h): the records weft's
// Valgrind tool writes into shared memory, decoded by `weft record`
// (RingEventDecoder) into the calls the analyzers take. The input is one
// block's slots (16 bytes each); the decoder feeds a capture session of
// every analysis, then the session writes its raw capture, as at the end
// of a run.
//
// The session is made once per process (its memory is reserved for the
// whole run, as in `weft record`) and each input is decoded as a new run
// of threads into it, so a finding may depend on earlier inputs: libFuzzer
// prints the input that triggered it, and `-runs` over the corpus
// reproduces the sequence.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_support.h"
#include "sources/valgrind/event_ring_reader.h"

namespace {

weft::CaptureSession& session() {
  static weft::CaptureSession* s = [] {
    weft::CaptureConfig config;
    config.max_threads = 8;
    config.traces = {8, size_t{1} << 20};
    weft::CaptureSession* created = weft::CaptureSession::create(config);
    if (!created) std::abort();
    return created;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::vector<WeftRingSlot> slots(size / sizeof(WeftRingSlot));
  if (!slots.empty()) std::memcpy(slots.data(), data, slots.size() * sizeof(WeftRingSlot));
  weft_fuzz::expect_bounded([&] {
    weft::RingEventDecoder decoder(session());
    decoder.consume(slots.data(), slots.size());
    const std::string& maps = decoder.maps();
    session().write(null_fd, decoder.complete(), decoder.reason().c_str(), maps.data(),
                    maps.size());
  });
  return 0;
}
