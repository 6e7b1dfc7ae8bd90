// What the interposers (pthread, GOMP_*, OMPT, memcpy/memset, the heap) need from the
// event source they run in. The same interposer files are linked into two
// hosts:
//   - the compile-time runtime (libweft-rt.so), where these calls feed the
//     analyzers in the program's own process (compile/runtime_host.cpp);
//   - the Valgrind preload library (vgpreload_weft-amd64-linux.so), where
//     they become client requests to weft's Valgrind tool
//     (valgrind/preload_host.cpp).
// So the knowledge of which entry points delimit sections, create threads or
// hand out OpenMP chunks lives in one place for both sources.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/run_capture.h"

#define WEFT_EXPORT extern "C" __attribute__((visibility("default")))
#define WEFT_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
// The program counter of a call into a hook or wrapper: the return address
// minus one lands inside the call instruction, which symbolizes to its line.
#define WEFT_CALLER_PC (reinterpret_cast<uint64_t>(__builtin_return_address(0)) - 1)

namespace weft::interpose {

// Starts the host if the program runs under `weft record` (idempotent).
void initialize();

// What the host knows of the recording: -1 until it started, then 0 (a
// dormant process: nothing is recorded) or 1. Each host defines and sets
// it; active() reads it before anything else, so that a dormant process's
// interposers cost one load and a branch before they call the next
// definition (docs/performance.md, "Dormant cost").
extern std::atomic<int> g_host_state;
// The host's own answer, while g_host_state is still -1.
bool active_slow();
// True once the host knows that nothing is recorded: an interposer's first
// test, before it saves a register (its recording path lies in a function
// of its own).
inline bool dormant() { return g_host_state.load(std::memory_order_relaxed) == 0; }
// True while events are being recorded.
inline bool active() {
  const int state = g_host_state.load(std::memory_order_relaxed);
  return state >= 0 ? state == 1 : active_slow();
}
// Weft id of the calling thread (attached now if weft had not seen it), or
// -1 when not recording.
int64_t current_thread_id();
// What reserve_thread_id returns when the host cannot run one more thread.
constexpr uint32_t kNoThreadId = ~uint32_t{0};
// A fresh weft id, in creation order; called by the creator before creating.
// kNoThreadId when one more thread would not fit the host (under Valgrind:
// its thread table is full): the creation must then fail.
uint32_t reserve_thread_id();
// The creation that reserved `tid` failed.
void cancel_thread_id(uint32_t tid);
// Number of ids handed out so far.
uint32_t thread_count();
// In a new thread, before its start routine: it is weft thread `tid`.
void start_thread(uint32_t tid, int32_t parent, uint64_t start_routine);
// A synchronization event of the calling thread.
void record_sync(SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0 = 0, int64_t arg1 = 0);
// Whether `pc` is in the program's own code (its synchronization and its
// memcpy calls count; libc's and libgomp's internal ones do not).
bool is_program_pc(uint64_t pc);
// Accesses made on the program's behalf by an uninstrumented function.
void program_read(uint64_t pc, const volatile void* address, size_t size);
void program_write(uint64_t pc, const volatile void* address, size_t size);

// A heap block the program allocated at `pc` (recorded for the analyses
// that name data by allocation site).
void record_allocation(uint64_t pc, const void* address, size_t size);
// Heap memory [address, address + size) is being released (free, the old
// block of a realloc that moved it, the tail of one that shrank it), by
// any code: the analyses forget the state they kept there
// (docs/metrics.md, "Freed memory").
void release_memory(const void* address, size_t size);
// The program declared who owns the elements of an array
// (include/weft/distribution.h).
void declare_distribution(const DistributionDeclaration& declaration);

// The next definition of an interposed function; aborts with a one-line
// cause if there is none.
void* next_symbol(const char* name);

// Likewise for a versioned symbol (glibc's pthread_cond_* exist as
// GLIBC_2.3.2 and as the old GLIBC_2.2.5 ABI); falls back to the default
// definition when that version does not exist.
void* next_versioned_symbol(const char* name, const char* version);

template <class Fn>
Fn next_function(const char* name) {
  return reinterpret_cast<Fn>(next_symbol(name));
}

template <class Fn>
Fn next_versioned_function(const char* name, const char* version) {
  return reinterpret_cast<Fn>(next_versioned_symbol(name, version));
}

}  // namespace weft::interpose
