/* srad_steps_pthreads.c - speckle-reducing anisotropic diffusion over an
 * image whose per-pixel model the main thread loaded (Rodinia SRAD style,
 * C + pthreads).
 *
 * Usage: srad_steps_pthreads [ROWS COLS STEPS]   defaults: 96 5120 3
 *   P = 4 workers (weft threads 1..4; the main thread, 0, loads the input,
 *   creates and joins them and does none of the work). ROWS a multiple of
 *   4 (and >= 8), COLS a multiple of 8, STEPS >= 2.
 *
 * The SRAD case of the CRD paper (Salehian et al., Table 2: main.c, the two
 * main loops; high CRD, loop reordering; and thread mapping). The main
 * thread fills `model`, one 64-byte record per pixel (the observed
 * intensity, its noise variance, the diffusion gain, ...: read-only from
 * then on; marked "srad-alloc"). Worker w owns the rows w ROWS/4 ..
 * (w+1) ROWS/4 - 1 of the image J and of the work arrays, and:
 *   init   J = the observed intensity of its rows (reads the model);
 *   each step:
 *     stats   the mean and variance of its rows into its slot; barrier; every
 *             worker derives q0sqr from the four slots;
 *     loop 1  (diffusion coefficient, marked "srad-coeff") the four
 *             differences to the neighbours and the coefficient c of each of
 *             its pixels: its first row reads the last row of J of worker
 *             w - 1, its last row the first row of worker w + 1 (the only
 *             data of another worker it reads); barrier;
 *     loop 2  (update, marked "srad-update") J' = J + lambda/4 (the
 *             divergence of c grad J) x the model's gain + a pull back to the
 *             observed intensity: it reads the south neighbours' c (the
 *             first row of worker w + 1) and the model of each pixel, writes
 *             the other buffer J'; barrier; J and J' swap.
 * The neighbours are hand-written helpers (north, south, west, east), not
 * Rodinia's index arrays, so the model is the only data of the main thread
 * the steps read.
 *
 * What weft should conclude (64-byte lines, the recorded cache of 8 MiB,
 * 131072 lines; defaults):
 *   - loop 2: each worker reads ROWS/4 x COLS model records, one line each,
 *     122880 lines, in the same order every step: the first read of a record
 *     in step s + 1 comes after the other 122879 (the reads of its other
 *     fields re-read the line just read: distance 0). Its private data are the lines of J'
 *     it first writes (ROWS x COLS / 8 = 61440 lines, less the 6 boundary
 *     rows its neighbours read, 3840): min cutoff 131072 - 57600 = 73472.
 *     The line visits of steps 2.. are beyond it, and the median of the
 *     visits: data affinity at the update, the data read mostly the
 *     model's heap block. The main thread wrote nearly all the loop reads,
 *     but its lines moved to the workers in init (the loop's own true
 *     communications from thread 0 are under 1024): the broadcast is
 *     init's, and this loop gets no thread affinity.
 *   - loop 1: only the halo rows move, 2 x COLS reads per boundary a step,
 *     w - 1 -> w and w + 1 -> w: a chain 1 - 2 - 3 - 4. Grouping {1, 2} and
 *     {3, 4} leaves one of its three links between the caches against two
 *     for an even spread: thread affinity with those groups, 30720 events
 *     per neighbour pair (the loop holds 92160 events, 1.8% of the
 *     program's communication by default, over the 1% a suggestion needs:
 *     the halo grows with COLS, the model's reads with ROWS x COLS, so
 *     more rows lower that share).
 *   - init: the workers read the model the main thread wrote: a broadcast.
 * Deterministic: barriers, the same arithmetic on every worker, a checksum
 * of J printed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { P = 4 };

/* What the main thread knows of each pixel: 64 bytes. */
struct pixel_model {
  double observed; /* the speckled intensity */
  double variance; /* of its noise */
  double gain;     /* how strongly it may diffuse */
  double fidelity; /* pull back to the observation */
  double spare[4];
};

struct worker_args {
  int w;
};

static int rows, cols, steps;
static const struct pixel_model *model;
static double *image_a, *image_b; /* J and J', swapped each step */
static double *d_n, *d_s, *d_w, *d_e, *coeff;
static _Alignas(64) double partial[P][8]; /* per worker: sum, sum of squares */
static pthread_barrier_t barrier;

static int north(int i) { return i > 0 ? i - 1 : 0; }
static int south(int i) { return i < rows - 1 ? i + 1 : rows - 1; }
static int west(int j) { return j > 0 ? j - 1 : 0; }
static int east(int j) { return j < cols - 1 ? j + 1 : cols - 1; }

static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

static void coefficients(const double *J, int first, int last, double q0sqr) {
  for (int i = first; i < last; i++)
    for (int j = 0; j < cols; j++) {
      const long k = (long)i * cols + j;
      const double jc = J[k];
      const double dn = J[(long)north(i) * cols + j] - jc; /* weft:srad-coeff */
      const double ds = J[(long)south(i) * cols + j] - jc;
      const double dw = J[(long)i * cols + west(j)] - jc;
      const double de = J[(long)i * cols + east(j)] - jc;
      const double g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc);
      const double l = (dn + ds + dw + de) / jc;
      const double num = 0.5 * g2 - (1.0 / 16.0) * l * l;
      const double den = (1 + 0.25 * l) * (1 + 0.25 * l);
      const double qsqr = num / den;
      d_n[k] = dn;
      d_s[k] = ds;
      d_w[k] = dw;
      d_e[k] = de;
      coeff[k] = clamp01(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1 + q0sqr))));
    }
}

static void update(const double *J, double *next, int first, int last, double lambda) {
  for (int i = first; i < last; i++)
    for (int j = 0; j < cols; j++) {
      const long k = (long)i * cols + j;
      const double cn = coeff[k], cw = coeff[k];
      const double cs = coeff[(long)south(i) * cols + j];
      const double ce = coeff[(long)i * cols + east(j)];
      const double div = cn * d_n[k] + cs * d_s[k] + cw * d_w[k] + ce * d_e[k];
      const struct pixel_model *m = &model[k];
      const double gain = m->gain, pull = m->fidelity * (m->observed - J[k]); /* weft:srad-update */
      next[k] = J[k] + 0.25 * lambda * div * gain + pull;
    }
}

static void *worker(void *arg) {
  const int w = ((const struct worker_args *)arg)->w;
  const int first = rows / P * w, last = rows / P * (w + 1);
  double *J = image_a, *next = image_b;
  for (long k = (long)first * cols; k < (long)last * cols; k++) J[k] = model[k].observed;
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < steps; s++) {
    double sum = 0, sum2 = 0;
    for (long k = (long)first * cols; k < (long)last * cols; k++) {
      sum += J[k];
      sum2 += J[k] * J[k];
    }
    partial[w][0] = sum;
    partial[w][1] = sum2;
    pthread_barrier_wait(&barrier);
    double all = 0, all2 = 0;
    for (int v = 0; v < P; v++) {
      all += partial[v][0];
      all2 += partial[v][1];
    }
    const double n = (double)rows * cols, mean = all / n;
    const double q0sqr = (all2 / n - mean * mean) / (mean * mean);
    pthread_barrier_wait(&barrier); /* the slots are read before the next step writes them */
    coefficients(J, first, last, q0sqr);
    pthread_barrier_wait(&barrier);
    update(J, next, first, last, 0.5);
    pthread_barrier_wait(&barrier);
    double *swap = J;
    J = next;
    next = swap;
  }
  double sum = 0;
  for (long k = (long)first * cols; k < (long)last * cols; k++) sum += J[k] * (1 + k % 3);
  partial[w][2] = sum;
  return NULL;
}

static double *array(long n) {
  double *a = aligned_alloc(64, (size_t)n * sizeof(double));
  if (!a) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return a;
}

int main(int argc, char **argv) {
  rows = argc > 1 ? atoi(argv[1]) : 96;
  cols = argc > 2 ? atoi(argv[2]) : 5120;
  steps = argc > 3 ? atoi(argv[3]) : 3;
  if (rows < 2 * P || rows % P != 0 || cols < 8 || cols % 8 != 0 || steps < 2 || steps > 1000 ||
      (long)rows * cols > (1L << 26)) {
    fprintf(stderr, "usage: %s [ROWS (a multiple of 4) COLS (a multiple of 8) STEPS (>= 2)]\n",
            argv[0]);
    return 2;
  }
  const long n = (long)rows * cols;
  struct pixel_model *loaded = aligned_alloc(64, (size_t)n * sizeof *loaded); /* weft:srad-alloc */
  if (!loaded) return 1;
  for (long k = 0; k < n; k++) {
    const long i = k / cols, j = k % cols;
    const double speckle = (double)((k * 2654435761L) % 1000) / 1000.0;
    loaded[k].observed = 1.0 + 0.5 * (i * 7 % 13 == 0) + 0.3 * (j * 3 % 11 == 0) + 0.2 * speckle;
    loaded[k].variance = 0.04;
    loaded[k].gain = 1.0 - 0.25 * (j % 2);
    loaded[k].fidelity = 0.01;
    for (int e = 0; e < 4; e++) loaded[k].spare[e] = 0;
  }
  model = loaded;
  image_a = array(n);
  image_b = array(n);
  d_n = array(n);
  d_s = array(n);
  d_w = array(n);
  d_e = array(n);
  coeff = array(n);
  pthread_barrier_init(&barrier, NULL, P);
  pthread_t threads[P];
  struct worker_args args[P];
  for (int w = 0; w < P; w++) {
    args[w].w = w;
    pthread_create(&threads[w], NULL, worker, &args[w]);
  }
  for (int w = 0; w < P; w++) pthread_join(threads[w], NULL);
  double checksum = 0;
  for (int w = 0; w < P; w++) checksum += partial[w][2];
  printf("srad_steps_pthreads %dx%d STEPS=%d checksum %.6f\n", rows, cols, steps, checksum);
  pthread_barrier_destroy(&barrier);
  free(loaded);
  free(image_a);
  free(image_b);
  free(d_n);
  free(d_s);
  free(d_w);
  free(d_e);
  free(coeff);
  return 0;
}
