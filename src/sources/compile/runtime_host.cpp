// The interposer host of the compile-time source: the shared interposers
// (sources/interpose) feed this process's CaptureSession directly.
#include <dlfcn.h>
#include <stdlib.h>

#include "sources/compile/runtime.h"

namespace weft::interpose {

using namespace weft::rt;

void initialize() { weft::rt::initialize(); }

bool active() { return g_runtime != nullptr; }

int64_t current_thread_id() {
  ThreadContext* t = current_thread();
  return t ? static_cast<int64_t>(t->tid) : -1;
}

uint32_t reserve_thread_id() { return g_runtime->session->reserve_thread_id(); }

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

void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    write_stderr("weft: cannot find the real ", name);
    abort();
  }
  return f;
}

void* next_versioned_symbol(const char* name, const char* version) {
  if (void* f = dlvsym(RTLD_NEXT, name, version)) return f;
  return next_symbol(name);
}

}  // namespace weft::interpose
