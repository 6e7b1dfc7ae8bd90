// The interposer host of the compile-time source: the shared interposers
// (sources/interpose) feed this process's CaptureSession directly.
#include <dlfcn.h>
#include <stdlib.h>

#include "sources/compile/runtime.h"

// The definition of `name` (of `version`, else the default one) that
// follows this runtime in the lookup order. Also for the Valgrind preload,
// which must skip the dormant runtime of a weft-cc binary run under
// Valgrind (valgrind/preload_host.cpp): RTLD_NEXT is relative to the
// object whose code calls dlsym, so only this library can ask it.
WEFT_EXPORT void* weft_runtime_next_symbol(const char* name, const char* version) {
  void* f = version ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (!f) f = dlsym(RTLD_NEXT, name);
  // dlsym knows its caller by its return address: no tail call, which would
  // make the caller of this function ask instead.
  __asm__ volatile("" : "+r"(f));
  return f;
}

namespace weft::interpose {

using namespace weft::rt;

std::atomic<int> g_host_state{-1};

void initialize() { weft::rt::initialize(); }

bool active_slow() { return g_runtime != nullptr; }

int64_t current_thread_id() {
  ThreadContext* t = current_thread();
  return t ? static_cast<int64_t>(t->tid) : -1;
}

uint32_t reserve_thread_id() { return g_runtime->session->reserve_thread_id(); }

void cancel_thread_id(uint32_t) {}  // ids are not limited in the program's own process

uint32_t thread_count() { return g_runtime ? g_runtime->session->thread_count() : 0; }

void start_thread(uint32_t tid, int32_t parent, uint64_t start_routine) {
  weft::rt::start_thread(tid, parent, start_routine);
}

void record_sync(SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0, int64_t arg1) {
  Runtime* rt = g_runtime;
  if (!rt) return;
  if (ThreadContext* c = current_thread())
    rt->session->record_sync(*c, kind, now_ns(), pc, object, arg0, arg1);
}

bool is_program_pc(uint64_t pc) { return is_instrumented_pc(pc); }

void program_read(uint64_t pc, const volatile void* address, size_t size) {
  on_read(pc, address, size);
}

void program_write(uint64_t pc, const volatile void* address, size_t size) {
  on_write(pc, address, size);
}

void record_allocation(uint64_t pc, const void* address, size_t size) {
  Runtime* rt = g_runtime;
  if (!rt) return;
  if (ThreadContext* c = current_thread())
    rt->session->record_allocation(*c, pc, reinterpret_cast<uint64_t>(address), size);
}

void declare_distribution(const DistributionDeclaration& declaration) {
  if (Runtime* rt = g_runtime) rt->session->declare_distribution(declaration);
}

void release_memory(const void* address, size_t size) {
  Runtime* rt = g_runtime;
  if (!rt) return;
  if (ThreadContext* c = current_thread())
    rt->session->release_memory(*c, reinterpret_cast<uint64_t>(address), size);
}

void* next_versioned_symbol(const char* name, const char* version) {
  void* f = weft_runtime_next_symbol(name, version);
  if (!f) {
    write_stderr("weft: cannot find the real ", name);
    abort();
  }
  return f;
}

void* next_symbol(const char* name) { return next_versioned_symbol(name, nullptr); }

}  // namespace weft::interpose
