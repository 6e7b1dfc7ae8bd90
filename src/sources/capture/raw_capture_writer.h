// Writing a raw capture (raw_capture.h) without allocation, so that the
// in-program runtime can save from a signal handler: a buffered write(2)
// and a two-pass section writer.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "sources/capture/raw_capture.h"

namespace weft {

class RawWriter {
 public:
  explicit RawWriter(int fd) : fd_(fd) {}
  ~RawWriter() { flush(); }
  RawWriter(const RawWriter&) = delete;
  RawWriter& operator=(const RawWriter&) = delete;

  void bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const size_t room = sizeof buffer_ - used_;
      const size_t k = n < room ? n : room;
      memcpy(buffer_ + used_, c, k);
      used_ += k;
      c += k;
      n -= k;
      if (used_ == sizeof buffer_) flush();
    }
  }
  void text(const char* s) { bytes(s, strlen(s)); }
  void section(RawSection tag, uint32_t record_size, uint64_t count) {
    section(static_cast<uint32_t>(tag), record_size, count);
  }
  void section(uint32_t tag, uint32_t record_size, uint64_t count) {
    bytes(&tag, 4);
    bytes(&record_size, 4);
    bytes(&count, 8);
  }
  void flush() {
    size_t off = 0;
    while (off < used_) {
      const ssize_t w = ::write(fd_, buffer_ + off, used_ - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    used_ = 0;
  }

 private:
  int fd_;
  size_t used_ = 0;
  char buffer_[1 << 16];
};

// Writes an analysis' section (its NAME_records.h) of records produced by
// `produce(emit)`, which is run twice (count, then write). If the second
// pass yields a different number (an update raced with the save), the
// section is padded or cut to the announced count.
template <class Record, class Produce>
void write_records(RawWriter& out, RecordSection<Record> section, Produce produce) {
  const uint32_t tag = section.tag;
  uint64_t count = 0;
  produce([&](const Record&) { ++count; });
  out.section(tag, sizeof(Record), count);
  uint64_t written = 0;
  produce([&](const Record& r) {
    if (written++ < count) out.bytes(&r, sizeof r);
  });
  for (; written < count; ++written) {
    const Record empty{};
    out.bytes(&empty, sizeof empty);
  }
}

// Writes a byte section whose length is known only after `produce(write)`
// ran: the first pass counts, the second writes (padding with newlines if it
// yields less).
template <class Produce>
void write_text_section(RawWriter& out, uint32_t tag, Produce produce) {
  uint64_t total = 0;
  produce([&](const void*, size_t n) { total += n; });
  out.section(tag, 1, total);
  uint64_t written = 0;
  produce([&](const void* p, size_t n) {
    const uint64_t k = written + n > total ? total - written : n;
    out.bytes(p, k);
    written += k;
  });
  for (; written < total; ++written) out.bytes("\n", 1);
}

}  // namespace weft
