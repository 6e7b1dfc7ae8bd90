// The per-access and per-block entry points of the ThreadSanitizer and
// coverage ABIs. They are built into libweft-hooks.a, which the compiler
// wrappers link statically (hidden) into every instrumented executable and
// shared library: the program then calls them directly instead of through
// the PLT (an indirect jump per access; measured at 2.6x the cost of the
// direct call on the stencil example), and a private re-read or re-write is
// decided here, inline, from the thread's own state and one shadow word.
// Anything else goes to libweft-rt.so (weft_access_read/write, weft_block),
// which feeds every analyzer.
//
// Only inline code of the analyzers is used here: all state lives in the
// runtime; this file owns only the module's recording flag.
#include <cstddef>
#include <cstdint>

#include "sources/capture/capture_session.h"
#include "sources/compile/access_entry.h"

namespace {

using weft::CommunicationAnalyzer;
using weft::ImbalanceCounts;
using weft::ThreadContext;

// Whether this process is recorded: this module's copy, set by
// weft_module_init. Every hook tests it first (dormant: nothing else runs).
bool g_module_recording = false;

__attribute__((always_inline)) inline bool dormant() {
  return __builtin_expect(!g_module_recording, 0);
}

// With communication the only per-access analysis, its state alone decides
// a private access (weft_comm_only_state). Otherwise the communication
// analyzer's fast path comes first (what it does not decide goes out of
// line whole, to weft_access_read/write), then every other part's
// (CaptureSession::feed_access_fast): only what those leave goes out of
// line, to weft_access_remaining.
template <bool kIsWrite>
__attribute__((always_inline)) inline bool communication_fast(CommunicationAnalyzer::ThreadState& s,
                                                              uint64_t pc, uintptr_t addr,
                                                              size_t n) {
  return kIsWrite ? CommunicationAnalyzer::is_local_write(s, addr, n)
                  : CommunicationAnalyzer::read_fast(s, pc, addr, n);
}

// The other parts of an access the communication analyzer decided.
template <bool kIsWrite>
__attribute__((always_inline)) inline void feed_decided(ThreadContext& t, uint64_t pc,
                                                        const volatile void* a, size_t n) {
  const uint32_t remaining = t.session->feed_access_fast(t, pc, reinterpret_cast<uintptr_t>(a),
                                                         static_cast<uint32_t>(n), kIsWrite);
  if (__builtin_expect(remaining != 0, 0)) weft_access_remaining(pc, a, n, kIsWrite, remaining);
}

// A read the communication memo decides by an alternation (with CRD):
// its own function, so that the composed path calls it in a tail position.
__attribute__((noinline)) void composed_alternation(ThreadContext& t,
                                                    CommunicationAnalyzer::ThreadState& c,
                                                    unsigned entry, uint64_t pc,
                                                    const volatile void* a, size_t n) {
  if (CommunicationAnalyzer::alternate(c, entry))
    feed_decided<false>(t, pc, a, n);
  else
    weft_access_read(pc, a, n);
}

// The composed path, out of the hooks themselves (one direct call, inside
// the module) so that the dormant and communication-only paths above keep
// a prologue without register saves. Its own calls are tail calls: its
// fast path saves no registers either.
template <bool kIsWrite>
__attribute__((noinline)) void composed_access(ThreadContext& t, uint64_t pc,
                                               const volatile void* a, size_t n) {
  const auto addr = reinterpret_cast<uintptr_t>(a);
  CommunicationAnalyzer::ThreadState* c = t.comm.load(std::memory_order_relaxed);
  if (__builtin_expect(c == nullptr, 0)) return;  // saved, or beyond max_threads
  if constexpr (kIsWrite) {
    if (__builtin_expect(CommunicationAnalyzer::is_local_write(*c, addr, n), 1))
      return feed_decided<true>(t, pc, a, n);
    return weft_access_write(pc, a, n);
  } else {
    const int decided = CommunicationAnalyzer::read_fast_or_alternation(*c, pc, addr, n);
    if (__builtin_expect(decided == CommunicationAnalyzer::kReadDecided, 1))
      return feed_decided<false>(t, pc, a, n);
    if (decided == CommunicationAnalyzer::kReadNotDecided) return weft_access_read(pc, a, n);
    return composed_alternation(t, *c, static_cast<unsigned>(decided), pc, a, n);
  }
}

template <bool kIsWrite>
__attribute__((always_inline)) inline void hook_access(uint64_t pc, const volatile void* a,
                                                       size_t n) {
  if (dormant()) return;
  if (CommunicationAnalyzer::ThreadState* s = weft_comm_only_state) {
    if (__builtin_expect(communication_fast<kIsWrite>(*s, pc, reinterpret_cast<uintptr_t>(a), n),
                         1))
      return;
  } else if (ThreadContext* t = weft_thread_context) {
    composed_access<kIsWrite>(*t, pc, a, n);
    return;
  }
  if (kIsWrite)
    weft_access_write(pc, a, n);
  else
    weft_access_read(pc, a, n);
}

__attribute__((always_inline)) inline void hook_read(uint64_t pc, const volatile void* a,
                                                     size_t n) {
  hook_access<false>(pc, a, n);
}

__attribute__((always_inline)) inline void hook_write(uint64_t pc, const volatile void* a,
                                                      size_t n) {
  hook_access<true>(pc, a, n);
}

}  // namespace

#define WEFT_HOOK extern "C" __attribute__((visibility("hidden")))

// Each instrumented module's constructor calls this first.
WEFT_HOOK void __tsan_init() {
  weft_module_init(__builtin_return_address(0), &g_module_recording,
                   weft::inline_layout_fingerprint());
}

// Plain, unaligned, volatile and compound accesses.
#define WEFT_ACCESS_HOOKS(N)                                                                       \
  WEFT_HOOK void __tsan_read##N(void* a) { hook_read(WEFT_CALLER_PC, a, N); }                      \
  WEFT_HOOK void __tsan_write##N(void* a) { hook_write(WEFT_CALLER_PC, a, N); }                    \
  WEFT_HOOK void __tsan_read##N##_pc(void* a, void* pc) {                                          \
    hook_read(reinterpret_cast<uint64_t>(pc), a, N);                                               \
  }                                                                                                \
  WEFT_HOOK void __tsan_write##N##_pc(void* a, void* pc) {                                         \
    hook_write(reinterpret_cast<uint64_t>(pc), a, N);                                              \
  }                                                                                                \
  WEFT_HOOK void __tsan_unaligned_read##N(const void* a) { hook_read(WEFT_CALLER_PC, a, N); }      \
  WEFT_HOOK void __tsan_unaligned_write##N(void* a) { hook_write(WEFT_CALLER_PC, a, N); }          \
  WEFT_HOOK void __tsan_volatile_read##N(void* a) { hook_read(WEFT_CALLER_PC, a, N); }             \
  WEFT_HOOK void __tsan_volatile_write##N(void* a) { hook_write(WEFT_CALLER_PC, a, N); }           \
  WEFT_HOOK void __tsan_unaligned_volatile_read##N(void* a) { hook_read(WEFT_CALLER_PC, a, N); }   \
  WEFT_HOOK void __tsan_unaligned_volatile_write##N(void* a) { hook_write(WEFT_CALLER_PC, a, N); } \
  WEFT_HOOK void __tsan_read_write##N(void* a) {                                                   \
    hook_read(WEFT_CALLER_PC, a, N);                                                               \
    hook_write(WEFT_CALLER_PC, a, N);                                                              \
  }                                                                                                \
  WEFT_HOOK void __tsan_unaligned_read_write##N(void* a) {                                         \
    hook_read(WEFT_CALLER_PC, a, N);                                                               \
    hook_write(WEFT_CALLER_PC, a, N);                                                              \
  }

WEFT_ACCESS_HOOKS(1)
WEFT_ACCESS_HOOKS(2)
WEFT_ACCESS_HOOKS(4)
WEFT_ACCESS_HOOKS(8)
WEFT_ACCESS_HOOKS(16)

WEFT_HOOK void __tsan_read_range(void* a, unsigned long size) {
  if (size) hook_read(WEFT_CALLER_PC, a, size);
}
WEFT_HOOK void __tsan_write_range(void* a, unsigned long size) {
  if (size) hook_write(WEFT_CALLER_PC, a, size);
}
WEFT_HOOK void __tsan_read_range_pc(void* a, unsigned long size, void* pc) {
  if (size) hook_read(reinterpret_cast<uint64_t>(pc), a, size);
}
WEFT_HOOK void __tsan_write_range_pc(void* a, unsigned long size, void* pc) {
  if (size) hook_write(reinterpret_cast<uint64_t>(pc), a, size);
}

// C++ virtual table pointers: an update is a write of the object's vptr.
WEFT_HOOK void __tsan_vptr_update(void** vptr_p, void* new_val) {
  if (*vptr_p != new_val) hook_write(WEFT_CALLER_PC, vptr_p, sizeof(void*));
}
WEFT_HOOK void __tsan_vptr_read(void** vptr_p) { hook_read(WEFT_CALLER_PC, vptr_p, sizeof(void*)); }

// Function entry/exit: the imbalance analysis keeps each call frame's last
// block, so that control-flow edges never cross a call (ImbalanceCounts).
WEFT_HOOK void __tsan_func_entry(void*) {
  if (dormant()) return;
  ThreadContext* t = weft_thread_context;
  if (__builtin_expect(t == nullptr, 0)) return;
  if (auto* s = t->call_frames.load(std::memory_order_relaxed)) ImbalanceCounts::enter_function(*s);
}
WEFT_HOOK void __tsan_func_exit() {
  if (dormant()) return;
  ThreadContext* t = weft_thread_context;
  if (__builtin_expect(t == nullptr, 0)) return;
  if (auto* s = t->call_frames.load(std::memory_order_relaxed)) ImbalanceCounts::exit_function(*s);
}

// Control flow: one call per basic block (-fsanitize-coverage=trace-pc).
// Counted in the thread's own context; the block goes to the runtime only
// when the imbalance analysis runs.
WEFT_HOOK void __sanitizer_cov_trace_pc() {
  if (dormant()) return;
  ThreadContext* t = weft_thread_context;
  if (__builtin_expect(t == nullptr, 0)) return;
  ++t->basic_blocks;
  if (auto* s = t->imbalance.load(std::memory_order_relaxed))
    if (__builtin_expect(!ImbalanceCounts::block_fast(*s, WEFT_CALLER_PC), 0))
      weft_block(WEFT_CALLER_PC);
}
