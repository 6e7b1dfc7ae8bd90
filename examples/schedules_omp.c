/* schedules_omp.c - the same loop under four OpenMP schedules (C + OpenMP).
 *
 * Usage: schedules_omp [N [T]]          defaults: N=4096 T=4
 *   Four parallel loops write a[i] for i in [0, N), one 8-byte store per
 *   iteration, each with its own schedule clause:
 *     schedule(static)      -> "static"      (marked schedule-static)
 *     schedule(static, 4)   -> "static,4"    (schedule-static4)
 *     schedule(dynamic, 16) -> "dynamic,16"  (schedule-dynamic16)
 *     schedule(guided)      -> "guided,1"    (schedule-guided)
 *   gcc inlines the static schedules (no runtime call hands out their
 *   chunks: weft recovers them from the traces of the store); the others,
 *   and every schedule under clang's libomp, come from the runtime's chunks.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  if (n < 64 || n > (1 << 24) || T < 2 || T > 64) {
    fprintf(stderr, "usage: %s [N 64.. [T 2..64]]\n", argv[0]);
    return 2;
  }
  omp_set_num_threads(T);
  omp_set_dynamic(0);
  double *a = calloc((size_t)n, sizeof(double));
  if (!a) return 1;
#pragma omp parallel for schedule(static) /* weft:schedule-static */
  for (int i = 0; i < n; i++) a[i] = 2.0 * i;
#pragma omp parallel for schedule(static, 4) /* weft:schedule-static4 */
  for (int i = 0; i < n; i++) a[i] += 1.0 * i;
#pragma omp parallel for schedule(dynamic, 16) /* weft:schedule-dynamic16 */
  for (int i = 0; i < n; i++) a[i] += 3.0;
#pragma omp parallel for schedule(guided) /* weft:schedule-guided */
  for (int i = 0; i < n; i++) a[i] *= 0.5;
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[i];
  printf("schedules_omp N=%d T=%d sum=%.1f\n", n, T, sum);
  free(a);
  return 0;
}
