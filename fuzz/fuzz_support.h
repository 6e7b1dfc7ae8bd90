// What weft's fuzz targets share (fuzz/README.md): a scratch file for the
// readers that take a path, and the rule every target checks: a reader may
// refuse its input (any std::exception: the command line prints it as one
// line and exits 1), but never crash, hang or allocate without bound.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace weft_fuzz {

// A file of this process, rewritten with each input and removed at exit;
// in /dev/shm when it can be written (no disk traffic), else $TMPDIR.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
    path_ = dir + "/weft-fuzz-" + std::to_string(getpid()) + "-" + name;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) std::abort();
    if (size != 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `read`. Refusals are fine; running out of memory is a finding (an
// allocation sized by the input), so it aborts for the fuzzer to report.
template <class Read>
void expect_bounded(Read&& read) {
  try {
    read();
  } catch (const std::bad_alloc&) {
    std::abort();
  } catch (const std::length_error&) {
    std::abort();
  } catch (const std::exception&) {
  }
}

}  // namespace weft_fuzz
