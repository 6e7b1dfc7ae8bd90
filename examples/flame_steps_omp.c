/* flame_steps_omp.c - a time-stepped 1-D flame: operator-split
 * reaction-diffusion-advection whose four parallel loops, each with its own
 * explicit schedule, run every time step (C + OpenMP).
 *
 * Usage: flame_steps_omp [STEPS]        default: STEPS = 12 (1..1000)
 *
 * N = 4096 cells of a tube, temperature in two buffers (the step reads one
 * and writes the other, which the next step reads: the written array
 * alternates from step to step, as in most time-marching codes). Each time
 * step runs four `#pragma omp parallel for` loops over the N cells, with
 * T = 4 threads (num_threads(T), omp_set_dynamic(0)):
 *   1. diffusion, schedule(static)        (marked flame-diffusion)
 *      next[i] = cur[i] + NU (cur[i-1] - 2 cur[i] + cur[i+1]);
 *   2. advective fluxes, schedule(static, 8)  (flame-flux)
 *      flux[i] = the limited upwind value at the face right of cell i
 *      (minmod slope);
 *   3. chemistry, schedule(dynamic, 4)    (flame-chemistry)
 *      a stiff source term integrated with sub-steps: a cell of the flame
 *      zone (the first N / 8 cells, next to the burner) takes SUBSTEPS = 64
 *      sub-steps, every other cell one. The costs are unequal: a static
 *      schedule would give thread 0 the whole flame zone (33,280 sub-steps
 *      against 1,024 for each other thread); chunks of 4 handed out on
 *      demand balance it;
 *   4. conservative update, schedule(guided, 8)  (flame-update)
 *      next[i] -= C (flux[i] - flux[i-1]).
 * Every loop has N = 4096 iterations per step, so each of the four runs
 * STEPS times (STEPS executions; 12 with the default). gcc inlines the two
 * static schedules (no runtime call hands out their chunks: weft recovers
 * them from the traces of the loops' stores, per execution); the dynamic
 * and guided loops, and every loop under clang's libomp, come from the
 * runtime's chunks.
 *
 * Expected (weft report, "OpenMP loop schedules executed"): static,
 * static,8, dynamic,4 and guided,8, each in all STEPS executions, 4096
 * iterations, 4 threads for the static ones.
 * The main thread initialises the buffers and prints a checksum.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define T 4
#define FLAME (N / 8) /* cells of the flame zone */
#define SUBSTEPS 64   /* chemistry sub-steps of a flame-zone cell */
#define NU 0.2        /* diffusion number */
#define C 0.3         /* Courant number of the advection */
#define MAX_STEPS 1000

static double temperature[2][N + 2]; /* cells 1..N, ghosts 0 and N + 1 */
static double flux[N + 1];           /* flux[i]: the face right of cell i */

static double minmod(double a, double b) {
  if (a * b <= 0.0) return 0.0;
  return a > 0.0 ? (a < b ? a : b) : (a > b ? a : b);
}

/* The limited upwind value at the face right of cell i (the flow goes to
 * higher i). */
static double face_value(const double *t, int i) {
  return t[i] + 0.5 * minmod(t[i] - t[i - 1], t[i + 1] - t[i]);
}

/* The stiff source of one cell over a time step: `substeps` explicit
 * sub-steps of a relaxation towards the burnt temperature. */
static double react(double t, int substeps) {
  const double h = 1.0 / substeps;
  for (int s = 0; s < substeps; s++) t += h * 0.05 * (2.0 - t) * t;
  return t;
}

int main(int argc, char **argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 12;
  if (steps < 1 || steps > MAX_STEPS) {
    fprintf(stderr, "usage: %s [STEPS 1..%d]\n", argv[0], MAX_STEPS);
    return 2;
  }
  omp_set_dynamic(0);
  for (int i = 0; i < N + 2; i++) temperature[0][i] = i <= FLAME ? 1.0 : 0.1;

  for (int step = 0; step < steps; step++) {
    double *cur = temperature[step & 1], *next = temperature[(step + 1) & 1];
    cur[0] = 1.0; /* the burner */
    cur[N + 1] = cur[N];
#pragma omp parallel for num_threads(T) schedule(static) /* weft:flame-diffusion */
    for (int i = 1; i <= N; i++) next[i] = cur[i] + NU * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    next[0] = 1.0;
    next[N + 1] = next[N];
#pragma omp parallel for num_threads(T) schedule(static, 8) /* weft:flame-flux */
    for (int i = 1; i <= N; i++) flux[i] = face_value(next, i);
    flux[0] = next[0];
#pragma omp parallel for num_threads(T) schedule(dynamic, 4) /* weft:flame-chemistry */
    for (int i = 1; i <= N; i++) next[i] = react(next[i], i <= FLAME ? SUBSTEPS : 1);
#pragma omp parallel for num_threads(T) schedule(guided, 8) /* weft:flame-update */
    for (int i = 1; i <= N; i++) next[i] -= C * (flux[i] - flux[i - 1]);
  }

  const double *last = temperature[steps & 1];
  double sum = 0;
  for (int i = 1; i <= N; i++) sum += last[i];
  printf("flame_steps_omp N=%d T=%d steps=%d sum=%.6f\n", N, T, steps, sum);
  return 0;
}
