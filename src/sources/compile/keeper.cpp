#include "sources/compile/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analyzers/state/page_memory.h"
#include "sources/capture/raw_capture.h"

namespace weft::rt {

namespace {

// Seconds the keeper may take to write; a state torn by the kill that makes
// it loop must not keep `weft record` waiting for ever.
constexpr unsigned kKeeperSeconds = 120;

// The keeper's command line reads "weft-keeper", not the program's: a
// `pkill -f PROGRAM` (or a test's) must stop the program, not its keeper.
// The argument area is the keeper's own copy; /proc/PID/stat gives its
// bounds (fields 48 and 49).
void rename_command_line() {
  prctl(PR_SET_NAME, "weft-keeper");
  char stat[4096];
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = read(fd, stat, sizeof stat - 1);
  close(fd);
  if (n <= 0) return;
  stat[n] = '\0';
  const char* p = strrchr(stat, ')');  // after the command name, which may hold spaces
  if (!p) return;
  // Field 3 starts after ") "; fields 48 and 49 are 45 and 46 fields on.
  unsigned long arg_start = 0, arg_end = 0;
  int field = 2;
  for (++p; *p && field < 49; ++p) {
    if (*p != ' ') continue;
    ++field;
    if (field == 48) arg_start = strtoul(p + 1, nullptr, 10);
    if (field == 49) arg_end = strtoul(p + 1, nullptr, 10);
  }
  if (arg_start == 0 || arg_end <= arg_start) return;
  char* args = reinterpret_cast<char*>(arg_start);
  const size_t size = arg_end - arg_start;
  memset(args, 0, size);
  const char name[] = "weft-keeper";
  memcpy(args, name, size < sizeof name ? size - 1 : sizeof name - 1);
}

[[noreturn]] void keep(Runtime& rt, int pipe_read) {
  // No death signal: its parent may be a shell that ends before the
  // program; the keeper ends with the program anyway.
  rename_command_line();
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
    sigaction(sig, &ignore, nullptr);
  // Hold none of the program's files: a reader waiting for the end of the
  // program's output must not wait for the keeper.
  for (int fd = 0; fd < 3; ++fd)
    if (fd != pipe_read && fd != rt.capture_fd) close(fd);
  const int low = pipe_read < rt.capture_fd ? pipe_read : rt.capture_fd;
  const int high = pipe_read < rt.capture_fd ? rt.capture_fd : pipe_read;
  syscall(SYS_close_range, 3u, static_cast<unsigned>(low - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(low + 1), static_cast<unsigned>(high - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(high + 1), ~0u, 0u);

  // The program (every process holding the write end) is gone at EOF.
  char byte;
  for (;;) {
    const ssize_t n = read(pipe_read, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  alarm(kKeeperSeconds);
  if (!rt.finished.load()) {
    const ImageEnd end = rt.image_end.load();
    const bool on_purpose = end == ImageEnd::ExitCall || end == ImageEnd::Exec;
    rt.session->stop_counting(false);
    write_capture(rt, on_purpose, on_purpose ? "" : kKeeperReason, rt.maps.text, rt.maps.size);
  }
  _exit(0);
}

}  // namespace

bool start_keeper(Runtime& rt) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  // A raw clone: the program's fork handlers must not run for it.
  const long child = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (child == 0) {
    close(fds[1]);
    keep(rt, fds[0]);
  }
  close(fds[0]);
  rt.keeper_fd = fds[1];
  return true;
}

void leave_keeper(Runtime& rt) {
  if (rt.keeper_fd >= 0) close(rt.keeper_fd);
}

void copy_process_maps(Runtime& rt) {
  ProcessMapsCopy& maps = rt.maps;
  if (!maps.text) return;
  while (maps.busy.exchange(true, std::memory_order_acquire)) sched_yield();
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    size_t size = 0;
    ssize_t n;
    while (size < ProcessMapsCopy::kCapacity &&
           (n = read(fd, maps.text + size, ProcessMapsCopy::kCapacity - size)) > 0)
      size += static_cast<size_t>(n);
    close(fd);
    maps.size = size;
  }
  maps.busy.store(false, std::memory_order_release);
}

}  // namespace weft::rt
