// What libweft-rt.so exports for the hooks that libweft-hooks.a links into
// each instrumented module (access_hooks.cpp): the calling thread's context
// and the entry points of accesses and blocks the hooks do not decide inline.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analyzers/communication/communication_analyzer.h"
#include "sources/interpose/interpose_host.h"

namespace weft {
struct ThreadContext;
}

// The calling thread's context (null until the runtime attached the thread,
// and in a program not run under `weft record`). __thread, initial-exec: one
// load from the thread pointer, no TLS call.
extern "C" __attribute__((
    visibility("default"))) __thread weft::ThreadContext* weft_thread_context WEFT_INITIAL_EXEC;

// The calling thread's communication state while communication is the only
// per-access analysis (CaptureSession::communication_only), or while the
// thread runs a segment with communication alone (a long run's segment every
// sampled analysis skips, CaptureSession::choose_access_path), else null:
// the hooks then decide private accesses inline from it alone. Set by the
// thread itself; once the capture is saved the state is retired and decides
// nothing. With other analyses the hooks compose every analyzer's fast path
// from the thread's context instead (CaptureSession::feed_access_fast).
extern "C" __attribute__((visibility("default"))) __thread weft::CommunicationAnalyzer::ThreadState*
    weft_comm_only_state WEFT_INITIAL_EXEC;

// Called by each instrumented module's __tsan_init (from its constructor):
// starts the runtime if it has not started, remembers the module, and sets
// the module's own flag `*recording` (a hidden variable of its hooks: one
// PC-relative load) to whether this process is the one `weft record`
// records. A forked child clears every module's flag. Each hook tests it
// before anything else, so a weft-cc binary run on its own pays a load and
// a predictable branch per hook (docs/performance.md, "Dormant cost").
// `layout`: the hooks' inline_layout_fingerprint(); a module built against
// another runtime is refused with a one-line warning (its hooks stay
// dormant) instead of reading structures laid out differently.
WEFT_EXPORT void weft_module_init(const void* address_inside, bool* recording, uint64_t layout);

// An access of `size` bytes at `addr` by instruction `pc`, for every analyzer.
WEFT_EXPORT void weft_access_read(uint64_t pc, const volatile void* addr, size_t size);
WEFT_EXPORT void weft_access_write(uint64_t pc, const volatile void* addr, size_t size);
// The parts of an access the hooks' composed fast path left
// (CaptureSession::feed_access_fast's `remaining`, not 0); the
// communication analyzer has already taken the access.
WEFT_EXPORT void weft_access_remaining(uint64_t pc, const volatile void* addr, size_t size,
                                       bool is_write, uint32_t remaining);
// A basic block entered at `pc` (the imbalance analysis' control flow).
WEFT_EXPORT void weft_block(uint64_t pc);
