// ring_threads.cpp - neighbour exchange on a ring (C++ std::thread).
//
// Usage: ring_threads [T [N [R]]]        defaults: T=4 N=1024 R=4
//   Same program as ring_pthreads.c, with std::thread for the workers (the
//   phases are still separated by a pthread barrier: std::barrier is a header
//   template, so its internal atomics would be instrumented and would add
//   timing-dependent communication).
//   T threads (2..16); the main thread works as thread 0 and creates threads
//   1..T-1. N doubles per block (multiple of 8, at most 8192), R rounds.
//
// Each thread owns a 64-byte-aligned block of N doubles. One round:
//   1. thread t writes its block;                                 barrier
//   2. thread t reads the block of its right neighbour u = (t+1) % T twice:
//      a sum (mean), then a sum of squared deviations (variance);  barrier
// At the end thread t stores its result in its own 64-byte slot, which the
// main thread reads after join.
//
// One difference with the pthreads version: std::thread(f, arg) stores the
// callable and a copy of its argument in a heap object (_State_impl) that the
// main thread writes (in the std::thread constructor, instrumented because it
// is a template compiled into this program) and the new thread reads (in
// _State_impl::_M_run, also instrumented). The callable is a capture-less
// lambda (empty); the argument is an alignas(64) struct, so the heap object is
// allocated 64-byte aligned and the argument copy fills a 64-byte line of its
// own (no other thread's state shares its line): the thread reads it once,
// one granule at both granularities. The object's vtable pointer is in
// another line: the main thread writes it in the constructor; g++ also emits a
// store of it (__tsan_vptr_update, same value) in ~_State_impl, which the
// thread runs when it exits; clang++ does not.
//
// Expected matrices, writer row, reader column. e = doubles per granule:
// e = 1 at --granularity 8, e = 8 at --granularity 64. For every t in 0..T-1,
// u = (t+1) % T:
//
//   raw[u][t]   = R * N / e
//   rar[u][t]   = R * (2N - N / e)
//   inval[u][t] = (R - 1) * N / e
//   raw[t][0]  += 1  for t = 1..T-1   (main reads the result slots)
//   raw[0][t]  += 1  for t = 1..T-1   (the thread reads its std::thread argument)
//   inval[t][0] += 1 for t = 1..T-1, g++ builds only (the destructor's vtable
//                    pointer store hits a granule the main thread wrote last)
//   every other entry is 0.
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr int kMaxT = 16;
constexpr long kMaxN = 8192;

struct alignas(64) Slot {
  double v;
};

alignas(64) double block[kMaxT][kMaxN];
Slot result[kMaxT];
pthread_barrier_t barrier;

// The worker's parameters, copied by std::thread into its heap state.
struct alignas(64) Args {
  std::uint64_t packed;
};

Args pack(int t, int T, int R, long N) {
  return Args{std::uint64_t(t) | std::uint64_t(T) << 8 | std::uint64_t(R) << 16 |
              std::uint64_t(N) << 32};
}

void worker(std::uint64_t a) {
  const int t = int(a & 0xff), T = int(a >> 8 & 0xff), R = int(a >> 16 & 0xffff);
  const long N = long(a >> 32);
  const int u = (t + 1) % T;
  double acc = 0.0;
  for (int r = 0; r < R; r++) {
    for (long i = 0; i < N; i++) block[t][i] = double((i * 13 + t * 7 + r) & 15);
    pthread_barrier_wait(&barrier);
    double s = 0.0;
    for (long i = 0; i < N; i++) s += block[u][i];
    const double m = s / double(N);
    double v = 0.0;
    for (long i = 0; i < N; i++) {
      const double d = block[u][i] - m;
      v += d * d;
    }
    acc += m + v / double(N);
    pthread_barrier_wait(&barrier);
  }
  result[t].v = acc;
}

}  // namespace

int main(int argc, char** argv) {
  const int T = argc > 1 ? std::atoi(argv[1]) : 4;
  const long N = argc > 2 ? std::atol(argv[2]) : 1024;
  const int R = argc > 3 ? std::atoi(argv[3]) : 4;
  if (T < 2 || T > kMaxT || N < 8 || N > kMaxN || N % 8 != 0 || R < 1 || R > 65535) {
    std::fprintf(stderr, "usage: %s [T 2..%d [N multiple of 8, <= %ld [R 1..65535]]]\n", argv[0],
                 kMaxT, kMaxN);
    return 2;
  }
  pthread_barrier_init(&barrier, nullptr, unsigned(T));
  std::thread threads[kMaxT];
  for (int i = 1; i < T; i++)
    threads[i] = std::thread([](const Args& a) { worker(a.packed); }, pack(i, T, R, N));
  worker(pack(0, T, R, N).packed);
  for (int i = 1; i < T; i++) threads[i].join();
  double total = 0.0;
  for (int i = 0; i < T; i++) total += result[i].v;
  pthread_barrier_destroy(&barrier);
  std::printf("ring_threads T=%d N=%ld R=%d checksum=%.6f\n", T, N, R, total);
  return 0;
}
