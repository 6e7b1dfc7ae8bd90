/* tile_tasks_pthreads.c - one short-lived thread per task (C + pthreads).
 *
 * Usage: tile_tasks_pthreads [T [TASKS [TILE]]]   (defaults 4 5000 32)
 *
 * A thread-per-request server in miniature: the main thread cuts a
 * TILE x (TASKS * TILE) image of doubles into TASKS square tiles and starts
 * one thread per tile, at most T at a time (it joins a wave of T before it
 * starts the next). Each task thread smooths its tile (each pixel becomes
 * the mean of itself and its left and right neighbours within the tile,
 * into the output image) and exits. So TASKS threads are created and exit,
 * T at most alive at once; what a profiler keeps per exited thread is what
 * its memory grows by (docs/performance.md, "Exited threads").
 *
 * Communication: the main thread writes every input tile before starting
 * its task, which reads it once (TILE * TILE * 8 bytes from the main
 * thread per task) and writes its output tile, which nobody reads again
 * but the main thread's final checksum (TILE * TILE * 8 bytes per task from
 * the task's thread to the main thread). Tasks share nothing.
 *
 * Prints "tile_tasks_pthreads T=... TASKS=... TILE=... checksum=..." (the
 * checksum does not depend on T).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  const double *in;
  double *out;
  int tile;
} task_t;

static void *smooth_tile(void *arg) {
  const task_t *t = arg;
  const int n = t->tile;
  for (int y = 0; y < n; y++) {
    const double *row = t->in + (size_t)y * n;
    double *out = t->out + (size_t)y * n;
    for (int x = 0; x < n; x++) {
      const double left = x > 0 ? row[x - 1] : row[x];
      const double right = x + 1 < n ? row[x + 1] : row[x];
      out[x] = (left + row[x] + right) / 3.0;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 4;
  const int tasks = argc > 2 ? atoi(argv[2]) : 5000;
  const int tile = argc > 3 ? atoi(argv[3]) : 32;
  if (threads < 1 || tasks < 1 || tile < 1) {
    fprintf(stderr, "usage: tile_tasks_pthreads [T [TASKS [TILE]]]\n");
    return 2;
  }
  const size_t pixels = (size_t)tile * tile;
  double *in = malloc(pixels * (size_t)tasks * sizeof(double));
  double *out = malloc(pixels * (size_t)tasks * sizeof(double));
  task_t *work = malloc((size_t)tasks * sizeof(task_t));
  pthread_t *running = malloc((size_t)threads * sizeof(pthread_t));
  if (!in || !out || !work || !running) return 1;
  for (int first = 0; first < tasks; first += threads) {
    const int wave = tasks - first < threads ? tasks - first : threads;
    for (int k = 0; k < wave; k++) {
      task_t *t = &work[first + k];
      t->in = in + pixels * (size_t)(first + k);
      t->out = out + pixels * (size_t)(first + k);
      t->tile = tile;
      double *tile_in = in + pixels * (size_t)(first + k);
      for (size_t i = 0; i < pixels; i++) tile_in[i] = (double)((first + k + i) % 17);
      if (pthread_create(&running[k], NULL, smooth_tile, t) != 0) return 1;
    }
    for (int k = 0; k < wave; k++) pthread_join(running[k], NULL);
  }
  double sum = 0;
  for (size_t i = 0; i < pixels * (size_t)tasks; i++) sum += out[i];
  printf("tile_tasks_pthreads T=%d TASKS=%d TILE=%d checksum=%.6e\n", threads, tasks, tile, sum);
  free(running);
  free(work);
  free(out);
  free(in);
  return 0;
}
