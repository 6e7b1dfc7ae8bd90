// Heap memory released by one thread and reused by another, through each
// way a block goes back to the allocator (docs/metrics.md, "Freed memory"):
// operator delete[], a block realloc moved, the tail of one it shrank. One
// malloc arena, blocks larger than the per-thread cache (1,032 bytes), so
// that the allocator hands thread 2 exactly the memory thread 1 released;
// the program checks it did and prints reused=yes for each way.
// Threads 1 and 2 take turns (barriers); N = 512 doubles (4 KiB).
//   delete: thread 1 new[]s, writes and delete[]s a block; thread 2 new[]s
//           the same block and writes it (which, had weft kept thread 1's
//           state, would count invalidations of thread 1's copies).
//   move:   thread 1 mallocs block m (a guard block after it: realloc
//           cannot grow it in place) and writes it; thread 2 reallocs it to
//           4 N doubles: the copy reads thread 1's N doubles, as memcpy
//           would, and writes the new block; thread 2 reads the new block,
//           then callocs N doubles, gets m back and accumulates into it.
//   shrink: thread 1 mallocs 4 N doubles, writes them, reallocs the block
//           to N in place; thread 2 callocs 2 N doubles, gets the tail
//           thread 1 gave back, and accumulates into it.
// Thread 1 publishes its three block addresses (three pointers), which
// thread 2 reads once each. At --granularity 8 (every granule of a block
// lies inside it):
//   raw[1][2] = N + 3 (the move's copy, the addresses), raw[1][0] = 1 (the
//   result slot), raw[2][0] = 2 (the result slot, the reuse flags); every
//   other entry 0.
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

namespace {

constexpr long N = 512;

struct alignas(64) Slot {
  double sum = 0;
  long reused = 0;  // bit k: way k gave thread 2 thread 1's memory
};
Slot slot[3];
struct alignas(64) Published {
  double* block[3];
} published;
pthread_barrier_t turn;
double* guard;

void thread1() {
  double sum = 0;
  // delete
  double* a = new double[N];
  for (long i = 0; i < N; i++) a[i] = static_cast<double>(i & 7);
  for (long i = 0; i < N; i++) sum += a[i];
  published.block[0] = a;
  delete[] a;
  pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn);
  // move
  double* m = static_cast<double*>(malloc(N * sizeof(double)));
  guard = static_cast<double*>(malloc(64));
  for (long i = 0; i < N; i++) m[i] = static_cast<double>(i & 3);
  published.block[1] = m;
  pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn);
  // shrink
  double* s = static_cast<double*>(malloc(4 * N * sizeof(double)));
  for (long i = 0; i < 4 * N; i++) s[i] = static_cast<double>(i & 1);
  double* kept = static_cast<double*>(realloc(s, N * sizeof(double)));
  published.block[2] = kept == s ? s : nullptr;
  pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn);
  for (long i = 0; i < N; i++) sum += kept[i];
  free(kept);
  free(guard);
  slot[1].sum = sum;
}

void thread2() {
  double sum = 0;
  long reused = 0;
  pthread_barrier_wait(&turn);
  // delete
  double* b = new double[N];
  if (b == published.block[0]) reused |= 1;
  for (long i = 0; i < N; i++) b[i] = static_cast<double>(i & 15);
  for (long i = 0; i < N; i++) sum += b[i];
  delete[] b;
  pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn);
  // move
  double* m = published.block[1];
  double* moved = static_cast<double*>(realloc(m, 4 * N * sizeof(double)));
  for (long i = 0; i < N; i++) sum += moved[i];
  double* c = static_cast<double*>(calloc(N, sizeof(double)));
  if (moved != m && c == m) reused |= 2;
  for (long i = 0; i < N; i++) c[i] += static_cast<double>(i & 5);
  for (long i = 0; i < N; i++) sum += c[i];
  free(c);
  free(moved);
  pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn);
  // shrink: the tail's block starts a chunk header (16 bytes) past the kept part
  double* s = published.block[2];
  double* t = static_cast<double*>(calloc(2 * N, sizeof(double)));
  if (s && reinterpret_cast<char*>(t) == reinterpret_cast<char*>(s) + N * sizeof(double) + 16)
    reused |= 4;
  for (long i = 0; i < 2 * N; i++) t[i] += static_cast<double>(i & 6);
  for (long i = 0; i < 2 * N; i++) sum += t[i];
  free(t);
  pthread_barrier_wait(&turn);
  slot[2].sum = sum;
  slot[2].reused = reused;
}

void* run(void* arg) {
  // The allocator sets up a thread's cache at its first call: before the
  // turns, so that it takes none of their blocks.
  void* volatile first_call = malloc(1);
  free(first_call);
  pthread_barrier_wait(&turn);
  if (arg)
    thread2();
  else
    thread1();
  return nullptr;
}

}  // namespace

int main() {
  mallopt(M_ARENA_MAX, 1);
  pthread_barrier_init(&turn, nullptr, 2);
  pthread_t t[2];
  for (long k = 0; k < 2; k++) pthread_create(&t[k], nullptr, run, reinterpret_cast<void*>(k));
  for (auto& thread : t) pthread_join(thread, nullptr);
  const long reused = slot[2].reused;
  printf("heap_reuse reused=%s,%s,%s sum=%.1f\n", reused & 1 ? "yes" : "no",
         reused & 2 ? "yes" : "no", reused & 4 ? "yes" : "no", slot[1].sum + slot[2].sum);
  return 0;
}
