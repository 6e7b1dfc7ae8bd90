// The ends of the program's image that run no exit handler: `_exit`,
// `_Exit` and the exec family. The runtime marks them before they happen, so
// the keeper (keeper.h), which writes the capture once the image is gone,
// records the run as complete: every event of the program was counted.
// quick_exit runs the runtime's own handler (at_quick_exit, runtime.cpp).
#include <alloca.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sources/compile/runtime.h"

using weft::interpose::next_function;
using weft::rt::g_runtime;
using weft::rt::ImageEnd;

namespace {

// Only the recorded process itself: a vforked child shares its memory.
void mark_end(ImageEnd end) {
  if (weft::rt::in_recorded_process()) g_runtime->image_end.store(end);
}

// An exec that failed: the image goes on.
int exec_failed(int result) {
  const int saved_errno = errno;
  mark_end(ImageEnd::Unknown);
  errno = saved_errno;
  return result;
}

[[noreturn]] void exit_image(int status) {
  mark_end(ImageEnd::ExitCall);
  for (;;) syscall(SYS_exit_group, status);
}

template <class Fn, class... Args>
int exec_through(const char* name, Args... args) {
  mark_end(ImageEnd::Exec);
  static const Fn next = next_function<Fn>(name);
  return exec_failed(next(args...));
}

// The arguments of execl/execlp/execle up to their null terminator; `envp`
// receives execle's environment.
template <class Call>
int with_list_arguments(const char* first, va_list args, bool has_env, Call call) {
  va_list count_args;
  va_copy(count_args, args);
  size_t n = 1;
  while (va_arg(count_args, char*) != nullptr) ++n;
  va_end(count_args);
  auto** argv = static_cast<char**>(alloca((n + 1) * sizeof(char*)));
  argv[0] = const_cast<char*>(first);
  for (size_t i = 1; i <= n; ++i) argv[i] = va_arg(args, char*);
  char** envp = has_env ? va_arg(args, char**) : environ;
  return call(argv, envp);
}

}  // namespace

WEFT_EXPORT void _exit(int status) { exit_image(status); }

WEFT_EXPORT void _Exit(int status) { exit_image(status); }

WEFT_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_through<int (*)(const char*, char* const*, char* const*)>("execve", path, argv, envp);
}

WEFT_EXPORT int execv(const char* path, char* const argv[]) {
  return exec_through<int (*)(const char*, char* const*)>("execv", path, argv);
}

WEFT_EXPORT int execvp(const char* file, char* const argv[]) {
  return exec_through<int (*)(const char*, char* const*)>("execvp", file, argv);
}

WEFT_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_through<int (*)(const char*, char* const*, char* const*)>("execvpe", file, argv,
                                                                        envp);
}

WEFT_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  return exec_through<int (*)(int, char* const*, char* const*)>("fexecve", fd, argv, envp);
}

WEFT_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                         int flags) {
  return exec_through<int (*)(int, const char*, char* const*, char* const*, int)>(
      "execveat", dirfd, path, argv, envp, flags);
}

WEFT_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  const int result = with_list_arguments(
      arg, args, false, [&](char** argv, char** envp) { return execve(path, argv, envp); });
  va_end(args);
  return result;
}

WEFT_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  const int result = with_list_arguments(
      arg, args, true, [&](char** argv, char** envp) { return execve(path, argv, envp); });
  va_end(args);
  return result;
}

WEFT_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  const int result = with_list_arguments(
      arg, args, false, [&](char** argv, char** envp) { return execvpe(file, argv, envp); });
  va_end(args);
  return result;
}
