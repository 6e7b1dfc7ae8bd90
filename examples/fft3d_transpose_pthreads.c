/* fft3d_transpose_pthreads.c - 3-D complex FFT of an N x N x (T N) array in
 * slabs of N x N x N per thread, with an all-to-all transpose through a
 * shared buffer (C + pthreads; the shape of NPB FT's slab version).
 *
 * Usage: fft3d_transpose_pthreads [N [T]]   defaults: N=8 T=4
 *   N  slab order per thread, a power of two (2..128);
 *   T  threads, a power of two (1..256) with T <= N * N. The main thread
 *      works as rank 0 and creates ranks 1..T-1 in order, so weft's thread
 *      id is the rank.
 *
 * The global array has T N planes (z) of N x N points (y, x). Thread t owns
 * the planes z = tN .. tN+N-1: its slab u, N^3 complex doubles (16 bytes),
 * which it allocates and initialises itself (first touch), like its work
 * slab, its pencils and its twiddles; the exchange buffer is one array of T
 * parts of N^3 that the main thread allocates without touching, part t
 * initialised (first-touched) by thread t. Each of S = 3 iterations:
 *   1. copies u into its work slab w and does radix-2 FFTs of length N along
 *      x (contiguous) and along y (stride N) in w: all local;
 *   2. packs w into its part of the shared exchange buffer, ordered by
 *      destination: the pencils (y, x) are dealt in P = N^2 / T consecutive
 *      pencil numbers p = y N + x per thread, and part t holds, for each p
 *      in order, the pencil's N values of t's planes (local writes); barrier;
 *   3. the transpose: thread d reads, from every thread's part in the order
 *      s = d (its own, local), d+1, .., d-1 (mod T), the P N values destined
 *      to it
 *      (contiguous, P N * 16 bytes = N^3 / T complex), into its pencils of
 *      length T N: all-to-all, every read remote except those from its own
 *      buffer (T - 1 remote chunks of N^3 / (4 T) 64-byte granules each);
 *   4. FFTs of length T N along z on its P pencils (local), adds their sum
 *      of |re| + |im| to its checksum; barrier (the send buffers are
 *      rewritten in the next iteration); then u evolves locally.
 * Every thread communicates with every other one, in the same way: no
 * corner/edge distinction (but the order of the sources, d+1 first, makes
 * the time at which d reads s depend on (s - d) mod T). A remote granule
 * (4 complex) is reused within its chunk (the next load of the same granule
 * comes one pencil granule later) and in the next iteration, after the
 * thread's whole iteration: u, w, its pencils, its part of the exchange
 * buffer and the chunks it received, about 5 N^3 / 4 granules.
 * Twiddle factors are computed by each thread (own sine/cosine series, no
 * libm): local.
 *
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
 *
 * Deterministic: the program prints the sum over threads (rank order) of
 * their checksums.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 256
#define ITERS 3

typedef struct {
  double re, im;
} cplx;

typedef struct {
  _Alignas(64) double v;
} slot_t;

/* What the main thread sets before it creates the threads; each thread
 * copies it once. */
typedef struct {
  int n, t, p; /* slab order, threads, pencils per thread */
  cplx *send;  /* the exchange buffer: T parts of N^3, thread s's part at s * N^3, [pencil][z] */
} params_t;

static params_t P;
static slot_t result[MAXT];
static pthread_barrier_t barrier;

static void *alloc_cplx(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(cplx)) != 0) {
    fprintf(stderr, "fft3d_transpose_pthreads: out of memory\n");
    exit(1);
  }
  return p;
}

/* cos and sin of x in [0, pi] by their Taylor series (no libm). */
static cplx unit(double x) {
  double c = 0.0, s = 0.0, term = 1.0;
  for (int n = 0; n < 40; n++) {
    /* term = x^n / n! */
    if (n % 4 == 0)
      c += term;
    else if (n % 4 == 1)
      s += term;
    else if (n % 4 == 2)
      c -= term;
    else
      s -= term;
    term *= x / (n + 1);
  }
  return (cplx){c, s};
}

/* The n/2 twiddles exp(-2 pi i k / n). */
static cplx *twiddles(int n) {
  const double pi = 3.14159265358979323846;
  cplx *w = alloc_cplx(n / 2 > 0 ? (size_t)n / 2 : 1);
  for (int k = 0; k < n / 2; k++) {
    cplx e = unit(2.0 * pi * k / n);
    w[k] = (cplx){e.re, -e.im};
  }
  return w;
}

/* In-place radix-2 FFT of the n values a[0], a[stride], ... */
static void fft(cplx *a, int n, size_t stride, const cplx *w) {
  for (int i = 1, j = 0; i < n; i++) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      cplx tmp = a[i * stride];
      a[i * stride] = a[j * stride];
      a[j * stride] = tmp;
    }
  }
  for (int len = 2; len <= n; len <<= 1) {
    int half = len / 2, step = n / len;
    for (int i = 0; i < n; i += len)
      for (int k = 0; k < half; k++) {
        cplx wk = w[k * step];
        cplx *x = &a[(i + k) * stride], *y = &a[(i + k + half) * stride];
        cplx t = {y->re * wk.re - y->im * wk.im, y->re * wk.im + y->im * wk.re};
        y->re = x->re - t.re;
        y->im = x->im - t.im;
        x->re += t.re;
        x->im += t.im;
      }
  }
}

static double absd(double x) { return x < 0 ? -x : x; }

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t prm = P;
  const int n = prm.n, T = prm.t, npen = prm.p;
  const size_t slab = (size_t)n * n * n, len = (size_t)T * n;
  cplx *u = alloc_cplx(slab), *w = alloc_cplx(slab), *pencils = alloc_cplx(slab);
  cplx *mine = prm.send + t * slab;
  cplx *wn = twiddles(n), *wz = twiddles((int)len);
  for (int z = 0; z < n; z++)
    for (int y = 0; y < n; y++)
      for (int x = 0; x < n; x++) {
        long gz = (long)t * n + z;
        size_t e = ((size_t)z * n + y) * n + x;
        u[e] = (cplx){(double)((gz * 5 + y * 3 + x) % 7) / 6.0 - 0.5,
                      (double)((gz + y * 7 + x * 3) % 5) / 4.0 - 0.5};
        w[e] = pencils[e] = mine[e] = (cplx){0.0, 0.0};
      }
  pthread_barrier_wait(&barrier);
  double check = 0.0;
  for (int it = 0; it < ITERS; it++) {
    /* 1. Local FFTs along x and y. */
    for (size_t e = 0; e < slab; e++) w[e] = u[e];
    for (int z = 0; z < n; z++)
      for (int y = 0; y < n; y++) fft(w + ((size_t)z * n + y) * n, n, 1, wn);
    for (int z = 0; z < n; z++)
      for (int x = 0; x < n; x++) fft(w + (size_t)z * n * n + x, n, (size_t)n, wn);
    /* 2. Pack by destination: mine[p][z] = w[z][y][x], p = y N + x. */
    for (int p = 0; p < n * n; p++)
      for (int z = 0; z < n; z++) mine[(size_t)p * n + z] = w[(size_t)z * n * n + p];
    pthread_barrier_wait(&barrier);
    /* 3. Transpose: my P pencils' values from every thread's buffer. */
    for (int r = 0; r < T; r++) {
      int s = (t + r) % T;
      const cplx *src = prm.send + s * slab + (size_t)t * npen * n;
      for (int pp = 0; pp < npen; pp++)
        for (int z = 0; z < n; z++)
          pencils[(size_t)pp * len + (size_t)s * n + z] = src[(size_t)pp * n + z];
    }
    /* 4. FFTs along z. */
    for (int pp = 0; pp < npen; pp++) {
      fft(pencils + (size_t)pp * len, (int)len, 1, wz);
      for (size_t z = 0; z < len; z++)
        check += absd(pencils[(size_t)pp * len + z].re) + absd(pencils[(size_t)pp * len + z].im);
    }
    pthread_barrier_wait(&barrier);
    for (size_t e = 0; e < slab; e++)
      u[e] = (cplx){0.75 * u[e].re - 0.25 * u[e].im, 0.25 * u[e].re + 0.75 * u[e].im};
  }
  result[t].v = check;
  free(u);
  free(w);
  free(pencils);
  free(wn);
  free(wz);
  return NULL;
}

static int power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3 || n < 2 || n > 128 || !power_of_two(n)) {
    fprintf(stderr, "usage: %s [N power of two 2..128 [T power of two 1..%d, <= N*N]]\n", argv[0],
            MAXT);
    return 2;
  }
  if (T > MAXT || !power_of_two(T) || T > n * n) {
    fprintf(stderr,
            "fft3d_transpose_pthreads: T=%d must be a power of two in 1..%d and <= N*N=%d\n", T,
            MAXT, n * n);
    return 2;
  }
  P = (params_t){n, T, n * n / T, alloc_cplx((size_t)T * n * n * n)};
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "fft3d_transpose_pthreads: pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int t = 1; t < T; t++) pthread_join(tid[t], NULL);
  double sum = 0.0;
  for (int t = 0; t < T; t++) sum += result[t].v;
  free(P.send);
  pthread_barrier_destroy(&barrier);
  printf("fft3d_transpose_pthreads N=%d T=%d checksum=%.6f\n", n, T, sum);
  return 0;
}
