/* A worker fills a ROWS x COLS matrix; after the join the main thread sums it
 * in a doubly nested loop (sum_rows). Every read of the sum communicates
 * (raw[1][0] = ROWS*COLS at --granularity 8), and each read's pc lies in the
 * inner loop. The bounds are volatile so that no compiler versions, unrolls
 * or peels the loops: one machine loop per source loop. The test knows the
 * line numbers below; keep them.
 */
#include <pthread.h>
#include <stdio.h>

#define ROWS 16
#define COLS 64
static double data[ROWS][COLS];
static volatile int rows = ROWS, cols = COLS;

static void *fill(void *arg) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) data[i][j] = (double)(i + j);
  return arg;
}

__attribute__((noinline)) static double sum_rows(void) {
  double s = 0.0;
  for (int i = 0; i < rows; i++)       /* line 24: outer loop */
    for (int j = 0; j < cols; j++)     /* line 25: inner loop */
      s += data[i][j];                 /* line 26: the communicating read */
  return s;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, fill, NULL);
  pthread_join(t, NULL);
  printf("sum=%.1f\n", sum_rows());
  return 0;
}
