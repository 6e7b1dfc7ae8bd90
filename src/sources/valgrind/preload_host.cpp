// The interposer host of the binary source. Valgrind preloads this library
// (vgpreload_weft-amd64-linux.so, found beside the tool) into the program it
// runs, so the shared interposers (sources/interpose) see the same pthread,
// GOMP_* and OMPT entry points as under the compile-time runtime; here each
// event becomes a client request to weft's tool, which puts it into the
// event ring in order with the program's memory accesses.
//
// The tool answers WEFT_REQ_HELLO with 1; under any other tool, or natively,
// requests return 0 and every wrapper passes straight through.
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "sources/interpose/interpose_host.h"
#include "sources/valgrind/client_requests.h"

namespace weft::interpose {

static_assert(WEFT_NO_THREAD_ID == kNoThreadId);

namespace {

std::atomic<int> g_active{-1};  // -1: not asked yet

uint64_t request(unsigned code, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                 uint64_t a5 = 0) {
  return VALGRIND_DO_CLIENT_REQUEST_EXPR(0, code, a1, a2, a3, a4, a5);
}

}  // namespace

std::atomic<int> g_host_state{-1};

void initialize() {
  if (g_active.load(std::memory_order_relaxed) < 0)
    g_active.store(request(WEFT_REQ_HELLO) == 1 ? 1 : 0, std::memory_order_relaxed);
  g_host_state.store(g_active.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

bool active_slow() {
  int a = g_active.load(std::memory_order_relaxed);
  if (__builtin_expect(a < 0, 0)) {
    initialize();
    a = g_active.load(std::memory_order_relaxed);
  }
  return a == 1;
}

int64_t current_thread_id() {
  return active() ? static_cast<int64_t>(request(WEFT_REQ_CURRENT_THREAD)) : -1;
}

uint32_t reserve_thread_id() { return static_cast<uint32_t>(request(WEFT_REQ_RESERVE_THREAD)); }

void cancel_thread_id(uint32_t tid) { request(WEFT_REQ_CANCEL_THREAD, tid); }

uint32_t thread_count() {
  return active() ? static_cast<uint32_t>(request(WEFT_REQ_THREAD_COUNT)) : 0;
}

void start_thread(uint32_t tid, int32_t parent, uint64_t start_routine) {
  if (!active()) return;
  request(WEFT_REQ_THREAD_START, tid, static_cast<uint64_t>(static_cast<int64_t>(parent) + 1),
          start_routine, static_cast<uint64_t>(syscall(SYS_gettid)));
}

void record_sync(SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0, int64_t arg1) {
  if (!active()) return;
  request(WEFT_REQ_SYNC, static_cast<uint64_t>(kind), pc, object, static_cast<uint64_t>(arg0),
          static_cast<uint64_t>(arg1));
}

bool is_program_pc(uint64_t pc) { return active() && request(WEFT_REQ_IS_PROGRAM_PC, pc) == 1; }

void program_read(uint64_t pc, const volatile void* address, size_t size) {
  request(WEFT_REQ_ACCESS_RANGE, pc, reinterpret_cast<uint64_t>(address), size, 0);
}

void program_write(uint64_t pc, const volatile void* address, size_t size) {
  request(WEFT_REQ_ACCESS_RANGE, pc, reinterpret_cast<uint64_t>(address), size, 1);
}

void record_allocation(uint64_t pc, const void* address, size_t size) {
  request(WEFT_REQ_ALLOCATION, pc, reinterpret_cast<uint64_t>(address), size);
}

void declare_distribution(const DistributionDeclaration& d) {
  request(WEFT_REQ_DISTRIBUTION, d.base, d.element_size, d.count, d.block,
          uint64_t{d.kind} << 32 | d.threads);
}

void release_memory(const void* address, size_t size) {
  request(WEFT_REQ_RELEASE, reinterpret_cast<uint64_t>(address), size);
}

namespace {

// A weft-cc binary loads weft's compile-time runtime, dormant under
// Valgrind, with its own copy of every interposer: the definition after
// this library's is then the runtime's. Its wrappers only pass through, yet
// they ran on every call (and, while the tool counted the runtime's code as
// the program's, a new thread's first access, in the free of the thread
// trampoline, gave it an id of its own before its THREAD_START: each thread
// counted twice). The runtime is skipped: the definition that follows it,
// which only code inside it can ask for (RTLD_NEXT is relative to the
// caller of dlsym).
void* past_weft_runtime(void* f, const char* name, const char* version) {
  static std::atomic<uintptr_t> runtime_next{1};  // 1: not looked up yet
  uintptr_t helper = runtime_next.load(std::memory_order_relaxed);
  if (helper == 1) {
    helper = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "weft_runtime_next_symbol"));
    runtime_next.store(helper, std::memory_order_relaxed);
  }
  Dl_info found{}, runtime{};
  if (!f || !helper || !dladdr(f, &found) || !dladdr(reinterpret_cast<void*>(helper), &runtime) ||
      found.dli_fbase != runtime.dli_fbase)
    return f;
  return reinterpret_cast<void* (*)(const char*, const char*)>(helper)(name, version);
}

}  // namespace

void* next_symbol(const char* name) {
  void* f = past_weft_runtime(dlsym(RTLD_NEXT, name), name, nullptr);
  if (!f) {
    static const char prefix[] = "weft: cannot find the real ";
    (void)!write(2, prefix, sizeof prefix - 1);
    (void)!write(2, name, strlen(name));
    (void)!write(2, "\n", 1);
    abort();
  }
  return f;
}

void* next_versioned_symbol(const char* name, const char* version) {
  if (void* f = dlvsym(RTLD_NEXT, name, version)) return past_weft_runtime(f, name, version);
  return next_symbol(name);
}

}  // namespace weft::interpose
