/* water_forces_pthreads.c - short-range forces, all pairs or cell lists
 * (SPLASH-2 water-nsquared / water-spatial style, C + pthreads).
 *
 * Usage: water_forces_pthreads nsquared | spatial
 *
 * The water case of the CRD paper (Salehian et al., section 4.1.3):
 * water_nsquared computes the interactions of every pair of molecules,
 * water_spatial puts the molecules in a grid of cells and a molecule only
 * meets those of its own and the 26 neighbouring cells.
 *
 * M = 1024 molecules in a G x G x G = 8 x 8 x 8 grid of unit cells, 2 per
 * cell, stored cell by cell. P = 4 workers (weft threads 1..4; the main
 * thread, 0, creates and joins them) each own the molecules of two x-slabs
 * of cells (256 consecutive molecules) and, in each of STEPS = 3 steps:
 *   1. compute the force on each of their molecules from every molecule
 *      within the cutoff (distance < 1, so only neighbouring cells matter),
 *      reading the positions the other workers wrote in the previous step -
 *      the communication, marked below;
 *   2. barrier; move their molecules a little (each stays in its cell);
 *   3. barrier.
 * nsquared tests every molecule against all M molecules: the position of
 * molecule j is read again for the next molecule i, after all M positions
 * (about 3 x 256 words per writer between two reads of one word).
 * spatial tests every molecule against the 27 cells around it: position j is
 * read again for the next molecule of the same cell, after 27 cells of 2
 * molecules (about 3 x 2 x 9 words per neighbouring writer).
 * Both find the same pairs and forces (the printed checksum is equal), the
 * same true communication; the communication reuse distance of spatial is far
 * shorter: weft's median CRD must order spatial below nsquared, as the
 * paper's INTERF / POTENG.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { G = 8, PER_CELL = 2, M = G * G * G * PER_CELL, P = 4, STEPS = 3 };

struct molecule {
  double pos[3];
  double force[3];
};

static struct molecule molecules[M];
static int spatial;
static pthread_barrier_t barrier;

static int cell_of(int m) { return m / PER_CELL; }

/* The force of `other` on `m` when within the cutoff, added to f. */
static void interact(const struct molecule *m, const struct molecule *other, double f[3]) {
  double d[3], r2 = 0;
  for (int c = 0; c < 3; ++c) {
    d[c] = m->pos[c] - other->pos[c]; /* communication: other's position */
    r2 += d[c] * d[c];
  }
  if (r2 >= 1.0 || r2 == 0.0) return;
  const double s = (1.0 - r2) * (1.0 - r2);
  for (int c = 0; c < 3; ++c) f[c] += s * d[c];
}

static void forces_all_pairs(int first, int last) {
  for (int i = first; i < last; ++i) {
    double f[3] = {0, 0, 0};
    for (int j = 0; j < M; ++j) interact(&molecules[i], &molecules[j], f);
    memcpy(molecules[i].force, f, sizeof f);
  }
}

static void forces_cell_lists(int first, int last) {
  for (int i = first; i < last; ++i) {
    const int cell = cell_of(i);
    const int cx = cell / (G * G), cy = cell / G % G, cz = cell % G;
    double f[3] = {0, 0, 0};
    for (int x = cx - 1; x <= cx + 1; ++x)
      for (int y = cy - 1; y <= cy + 1; ++y)
        for (int z = cz - 1; z <= cz + 1; ++z) {
          if (x < 0 || y < 0 || z < 0 || x >= G || y >= G || z >= G) continue;
          const int neighbour = (x * G + y) * G + z;
          for (int j = neighbour * PER_CELL; j < (neighbour + 1) * PER_CELL; ++j)
            interact(&molecules[i], &molecules[j], f);
        }
    memcpy(molecules[i].force, f, sizeof f);
  }
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static void place(int m, int step) {
  const int cell = cell_of(m);
  const double corner[3] = {cell / (G * G), cell / G % G, cell % G};
  for (int c = 0; c < 3; ++c) {
    const double jitter = 0.2 + 0.6 * ((m * 37 + c * 11 + step * 5) % 13) / 12.0;
    molecules[m].pos[c] = corner[c] + jitter;
  }
}

static void move(int m) {
  const int cell = cell_of(m);
  const double corner[3] = {cell / (G * G), cell / G % G, cell % G};
  for (int c = 0; c < 3; ++c)
    molecules[m].pos[c] = clamp(molecules[m].pos[c] + 0.01 * molecules[m].force[c],
                                corner[c] + 0.05, corner[c] + 0.95);
}

static void *worker(void *arg) {
  const int me = (int)(size_t)arg;
  const int first = me * (M / P), last = first + M / P;
  for (int m = first; m < last; ++m) place(m, 0);
  pthread_barrier_wait(&barrier);
  for (int step = 0; step < STEPS; ++step) {
    if (spatial)
      forces_cell_lists(first, last);
    else
      forces_all_pairs(first, last);
    pthread_barrier_wait(&barrier);
    for (int m = first; m < last; ++m) move(m);
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "nsquared") && strcmp(argv[1], "spatial"))) {
    fprintf(stderr, "usage: %s nsquared | spatial\n", argv[0]);
    return 2;
  }
  spatial = strcmp(argv[1], "spatial") == 0;
  pthread_barrier_init(&barrier, NULL, P);
  pthread_t threads[P];
  for (int w = 0; w < P; ++w) pthread_create(&threads[w], NULL, worker, (void *)(size_t)w);
  for (int w = 0; w < P; ++w) pthread_join(threads[w], NULL);
  double checksum = 0;
  for (int m = 0; m < M; ++m)
    for (int c = 0; c < 3; ++c) checksum += molecules[m].pos[c] * (1 + (m + c) % 5);
  printf("water %s: checksum %.9f\n", argv[1], checksum);
  pthread_barrier_destroy(&barrier);
  return 0;
}
