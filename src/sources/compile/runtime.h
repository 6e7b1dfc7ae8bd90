// The in-program side of the compile-time event source: state shared by the
// __tsan_* hooks, the interposed pthread/OpenMP/libc entry points and the
// capture writer. Everything here has hidden visibility (see CMakeLists);
// only the ABI entry points are exported.
#pragma once

#include <atomic>
#include <cstdint>

#include "analyzers/communication/communication_analyzer.h"
#include "common/run_capture.h"

#define WEFT_EXPORT extern "C" __attribute__((visibility("default")))
#define WEFT_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
// The program counter of the instrumented access: the hook's return address
// minus one lands inside the call instruction, which symbolizes to its line.
#define WEFT_CALLER_PC (reinterpret_cast<uint64_t>(__builtin_return_address(0)) - 1)

namespace weft::rt {

// Per-thread synchronization log, reserved once, filled without locks.
struct SyncLog {
  static constexpr uint64_t kCapacity = uint64_t{1} << 18;
  SyncRecord* records = nullptr;
  uint64_t size = 0;
  uint64_t dropped = 0;
};

struct ThreadContext {
  uint32_t tid = 0;
  // Null once the capture is saved (or for threads beyond max_threads, whose
  // loss the capture reports as incomplete): the hooks then ignore the
  // thread's accesses.
  std::atomic<CommunicationAnalyzer::ThreadState*> comm{nullptr};
  ThreadRecord* record = nullptr;
  SyncLog sync;
};

struct Runtime {
  CommunicationAnalyzer* communication = nullptr;
  CommunicationReuseDistance* distances = nullptr;  // null unless the crd analysis runs
  SharingFootprint* footprint = nullptr;            // ditto
  SectionAttribution* sections = nullptr;
  uint32_t max_threads = 0;
  std::atomic<uint32_t> next_tid{0};
  ThreadRecord* threads = nullptr;                  // [max_threads]
  std::atomic<ThreadContext*>* contexts = nullptr;  // [max_threads]
  std::atomic<bool> saved{false};                   // the capture was started (once)
  std::atomic<bool> finished{false};                // ... and is completely written
  char output_path[4096] = {};
};

// Null while the runtime is dormant (program not run under `weft record`).
extern Runtime* g_runtime;
// The analyzer, read once per access: kept apart from Runtime to save a load.
extern CommunicationAnalyzer* g_communication;
// __thread, not thread_local: no TLS wrapper call on the access path.
extern __thread ThreadContext* t_context WEFT_INITIAL_EXEC;

uint64_t now_ns();
// One line on stderr, without allocation.
void write_stderr(const char* a, const char* b = "");

// The calling thread's context: attaches a thread weft did not see created
// (the main thread before init, threads created by raw clone). Null when
// dormant or when the capture is already saved.
ThreadContext* attach_unknown_thread();

inline ThreadContext* current_thread() {
  ThreadContext* t = t_context;
  if (__builtin_expect(t == nullptr, 0)) t = attach_unknown_thread();
  return t;
}

// Thread lifecycle, used by the pthread_create interposer.
uint32_t reserve_thread_id();
ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine);
void finish_thread();

void record_sync(SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0 = 0, int64_t arg1 = 0);

// Accesses from code that is not the program's (the runtime, libc) are not
// counted; memcpy and friends ask whether their caller is instrumented.
void register_instrumented_module(const void* address_inside);
bool is_instrumented_pc(uint64_t pc);

// The events of one access, fed to the analyzers.
__attribute__((always_inline)) inline void on_read(uint64_t pc, const volatile void* addr,
                                                   size_t size) {
  ThreadContext* t = current_thread();
  if (__builtin_expect(t == nullptr, 0)) return;
  auto* state = t->comm.load(std::memory_order_relaxed);
  if (__builtin_expect(state == nullptr, 0)) return;
  g_communication->read(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
}

__attribute__((always_inline)) inline void on_write(uint64_t pc, const volatile void* addr,
                                                    size_t size) {
  ThreadContext* t = current_thread();
  if (__builtin_expect(t == nullptr, 0)) return;
  auto* state = t->comm.load(std::memory_order_relaxed);
  if (__builtin_expect(state == nullptr, 0)) return;
  g_communication->write(*state, pc, reinterpret_cast<uintptr_t>(addr), size);
}

// Resolves the next definition of an interposed libc/libgomp function.
void* next_symbol(const char* name);

template <class Fn>
Fn next_function(const char* name) {
  return reinterpret_cast<Fn>(next_symbol(name));
}

// Writes the raw capture once; later calls do nothing.
void save_capture(bool complete, const char* reason);

void initialize();

}  // namespace weft::rt
