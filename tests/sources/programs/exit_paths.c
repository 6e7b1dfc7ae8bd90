/* Two workers exchange blocks of 512 doubles between two barriers (at
 * granularity 8: raw[1][2] = raw[2][1] = 512, all else 0), then the program
 * ends by the path argv[1] names, none of which runs an exit handler:
 *   _exit       worker 1 calls _exit(9)
 *   _Exit       worker 1 calls _Exit(5)
 *   quick_exit  worker 1 calls quick_exit(6)
 *   exec        main, after the joins, replaces itself with sh -c 'exit 8'
 *   overflow    worker 1 recurses until its stack overflows (SIGSEGV)
 *   sigkill     worker 1 raises SIGKILL
 * Worker 2 waits in a third barrier that never completes (except for exec):
 * the process ends while a thread is still running. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Alignas(64) double block[2][512];
_Alignas(64) double sums[2][8];
static pthread_barrier_t barrier, never;
enum { kExit = 1, kUnderscoreExit, kQuickExit, kExec, kOverflow, kSigkill };

static int recurse(volatile char* previous) {
  volatile char frame[4096];
  frame[0] = previous ? previous[0] + 1 : 0;
  return recurse(frame) + frame[1];
}

static void end_here(int path) {
  if (path == kExit) _exit(9);
  if (path == kUnderscoreExit) _Exit(5);
  if (path == kQuickExit) quick_exit(6);
  if (path == kOverflow) recurse(0);
  if (path == kSigkill) raise(SIGKILL);
}

/* The path comes in the argument, not in a global main wrote: the workers
 * read nothing of main's. */
static void* worker(void* arg) {
  const int i = (int)(intptr_t)arg & 1, path = (int)(intptr_t)arg >> 1;
  for (int k = 0; k < 512; k++) block[i][k] = k + i;
  pthread_barrier_wait(&barrier);
  double s = 0;
  for (int k = 0; k < 512; k++) s += block[1 - i][k];
  sums[i][0] = s;
  pthread_barrier_wait(&barrier);
  if (path != kExec) {
    if (i == 0) end_here(path);
    pthread_barrier_wait(&never);
  }
  return 0;
}

int main(int argc, char** argv) {
  static const char* names[] = {"", "_exit", "_Exit", "quick_exit", "exec", "overflow", "sigkill"};
  int path = 0;
  for (int k = 1; k < 7; k++)
    if (argc > 1 && !strcmp(argv[1], names[k])) path = k;
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  pthread_barrier_init(&never, 0, 3);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)(i | path << 1));
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  execl("/bin/sh", "sh", "-c", "exit 8", (char*)0);
  return 1;
}
