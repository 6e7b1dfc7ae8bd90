// The in-program side of the compile-time event source: state shared by the
// __tsan_* hooks, the interposer host (runtime_host.cpp) and the capture
// writer. Everything here has hidden visibility (see CMakeLists); only the
// ABI entry points are exported. The analyzers, thread table and sync logs
// live in a CaptureSession (sources/capture), shared with the Valgrind
// backend.
#pragma once

#include <atomic>
#include <cstdint>

#include "sources/capture/capture_session.h"
#include "sources/compile/access_entry.h"
#include "sources/interpose/interpose_host.h"

namespace weft::rt {

using weft::ThreadContext;

// How the program's image ended, when weft saw it end on purpose without an
// exit handler (the keeper then writes the capture as complete).
enum class ImageEnd : int { Unknown = 0, ExitCall = 1, Exec = 2 };

// The program's memory map as of its last module load: the keeper writes
// it into the capture, since the program it describes no longer exists.
struct ProcessMapsCopy {
  static constexpr size_t kCapacity = size_t{4} << 20;
  char* text = nullptr;  // kCapacity bytes of arena memory
  size_t size = 0;
  std::atomic<bool> busy{false};
};

// Lives in arena memory (analyzers/state/page_memory.h): the keeper reads
// it after the program died.
struct Runtime {
  CaptureSession* session = nullptr;
  std::atomic<bool> saved{false};     // the capture was started (once)
  std::atomic<bool> finished{false};  // ... and is completely written
  std::atomic<ImageEnd> image_end{ImageEnd::Unknown};
  int pid = 0;          // the recorded process (not a forked child)
  int keeper_fd = -1;   // the write end of the keeper's pipe (keeper.h)
  int capture_fd = -1;  // the claimed capture file
  ProcessMapsCopy maps;
  char output_path[4096] = {};
};

// Null while the runtime is dormant (program not run under `weft record`).
extern Runtime* g_runtime;
// The analyzer, read once per access: kept apart from Runtime to save a load.
extern CommunicationAnalyzer* g_communication;
// The session's analyzers (a copy: one load less per access); an analysis
// that does not run has a null pointer there.
extern CaptureAnalyzers g_analyzers;
// The session itself, for the spin-wait recognition of each access.
extern CaptureSession* g_session;

uint64_t now_ns();
// One line on stderr, without allocation.
void write_stderr(const char* a, const char* b = "");

// Makes the calling thread weft thread `tid` (pthread_create's trampoline).
ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine);

// The calling thread's context: attaches a thread weft did not see created
// (the main thread before init, threads created by raw clone). Null when
// dormant or when the capture is already saved.
ThreadContext* attach_unknown_thread();

// True in the process weft record records (the runtime's own copy of the
// modules' flags).
extern bool g_recording;

inline ThreadContext* current_thread() {
  ThreadContext* t = weft_thread_context;
  if (__builtin_expect(t == nullptr, 0) && g_recording) t = attach_unknown_thread();
  return t;
}

// Accesses from code that is not the program's (the runtime, libc) are not
// counted; memcpy and friends ask whether their caller is instrumented.
// `recording`: the module's hooks' flag, set now and cleared in a forked
// child (weft_module_init).
void register_instrumented_module(const void* address_inside, bool* recording);
bool is_instrumented_pc(uint64_t pc);

// The events of one access, fed to the analyzers.
__attribute__((always_inline)) inline void on_read(uint64_t pc, const volatile void* addr,
                                                   size_t size) {
  ThreadContext* t = current_thread();
  if (__builtin_expect(t == nullptr, 0)) return;
  auto* state = t->comm.load(std::memory_order_relaxed);
  if (__builtin_expect(state == nullptr, 0)) return;
  // A segment run with communication alone (CaptureSession::choose_access_path).
  if (t->communication_alone)
    return g_communication->read(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
  g_session->watch_access(*t, pc, reinterpret_cast<uintptr_t>(addr), false);
  g_communication->read(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
  CaptureSession::feed_access(*t, g_analyzers, pc, reinterpret_cast<uintptr_t>(addr),
                              static_cast<uint32_t>(size), false);
}

// `atomic`: an atomic operation's write (tsan_abi.cpp).
__attribute__((always_inline)) inline void on_write(uint64_t pc, const volatile void* addr,
                                                    size_t size, bool atomic = false) {
  ThreadContext* t = current_thread();
  if (__builtin_expect(t == nullptr, 0)) return;
  auto* state = t->comm.load(std::memory_order_relaxed);
  if (__builtin_expect(state == nullptr, 0)) return;
  if (t->communication_alone)
    return g_communication->write(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
  g_session->watch_access(*t, pc, reinterpret_cast<uintptr_t>(addr), true);
  g_communication->write(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
  CaptureSession::feed_access(*t, g_analyzers, pc, reinterpret_cast<uintptr_t>(addr),
                              static_cast<uint32_t>(size), true, atomic);
}

// Writes the raw capture once; later calls do nothing (nor in a process
// other than the recorded one: a forked or vforked child).
void save_capture(bool complete, const char* reason);

// Writes the raw capture to the claimed file, whoever runs it: the program
// (save_capture) or its keeper. `maps`: the memory map to store, or null
// for the caller's own.
void write_capture(Runtime& rt, bool complete, const char* reason, const char* maps,
                   size_t maps_size);

// Whether the caller is the recorded process itself.
bool in_recorded_process();

void initialize();

}  // namespace weft::rt
