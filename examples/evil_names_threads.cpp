// evil_names_threads.cpp - functions whose names hold markup characters.
//
// Usage: evil_names_threads [T [N]]        defaults: T=2 N=512
//   T threads (2..16) exchange a block of N doubles (multiple of 16, at most
//   4096) in functions whose symbols hold HTML's special characters, so
//   that reports must escape what the program names (weft report --html
//   renders them as text, tests/views/html_report_test.py).
//
// Thread t writes its block; barrier; thread t reads the block of its right
// neighbour u = (t+1) % T, the first half in a function named
//   - with clang, by an asm label: evil<script>&"' (GNU as rejects such a
//     label, so with gcc it is the template evil<script>(int&), which holds
//     < > and &),
// the second half in a user-defined literal operator, `operator"" _evil`
// (quotes), in both builds. Expected raw[u][t] = N / e (e doubles per
// granule), rar[u][t] = N - N / e, half of each in either function, plus
// the main thread's read of each thread's result slot after join:
// raw[t][0] += 1 for t = 1..T-1.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kMaxThreads = 16;
constexpr int kMaxN = 4096;

struct alignas(64) Slot {
  double value;
};

alignas(64) double blocks[kMaxThreads][kMaxN];
Slot results[kMaxThreads];
pthread_barrier_t barrier;
int threads = 2;
int n = 512;

}  // namespace

struct script {};

// The first half of the right neighbour's block, summed.
#ifdef __clang__
extern "C" double evil_first_half(int t) __asm__("evil<script>&\"'");
extern "C" __attribute__((noinline)) double evil_first_half(int t) {
  const int u = (t + 1) % threads;
  double sum = 0;
  for (int i = 0; i < n / 2; ++i) sum += blocks[u][i];
  return sum;
}
#define FIRST_HALF(t) evil_first_half(t)
#else
template <class T>
__attribute__((noinline)) double evil(int& t) {
  const int u = (t + 1) % threads;
  double sum = 0;
  for (int i = 0; i < n / 2; ++i) sum += blocks[u][i];
  return sum;
}
#define FIRST_HALF(t) evil<script>(t)
#endif

// The second half (the literal is the reading thread).
__attribute__((noinline)) double operator""_evil(unsigned long long t) {
  const int u = static_cast<int>((t + 1) % static_cast<unsigned long long>(threads));
  double sum = 0;
  for (int i = n / 2; i < n; ++i) sum += blocks[u][i];
  return sum;
}

namespace {

void* work(void* arg) {
  int t = static_cast<int>(reinterpret_cast<long>(arg));
  for (int i = 0; i < n; ++i) blocks[t][i] = t + i * 0.5;
  pthread_barrier_wait(&barrier);
  // A literal operator takes a literal; call it by name for a variable.
  results[t].value = FIRST_HALF(t) + operator""_evil(static_cast<unsigned long long>(t));
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) threads = std::atoi(argv[1]);
  if (argc > 2) n = std::atoi(argv[2]);
  if (threads < 2 || threads > kMaxThreads || n < 16 || n > kMaxN || n % 16 != 0) {
    std::fprintf(stderr, "usage: evil_names_threads [T (2..16) [N (16..4096, multiple of 16)]]\n");
    return 2;
  }
  pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(threads));
  pthread_t ids[kMaxThreads];
  for (long t = 1; t < threads; ++t)
    pthread_create(&ids[t], nullptr, work, reinterpret_cast<void*>(t));
  work(nullptr);
  double total = 0;
  for (int t = 1; t < threads; ++t) pthread_join(ids[t], nullptr);
  for (int t = 0; t < threads; ++t) total += results[t].value;
  pthread_barrier_destroy(&barrier);
  std::printf("evil_names_threads T=%d N=%d total=%.1f\n", threads, n, total);
  return 0;
}
