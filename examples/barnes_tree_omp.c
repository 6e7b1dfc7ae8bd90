/* barnes_tree_omp.c - load imbalance from walking an unbalanced tree (barnes-like,
 * C + OpenMP).
 *
 * Usage: barnes_tree_omp                (no arguments: everything is fixed)
 *
 * The barnes case of the LIME paper (Oh et al., ICSE 2011, section 5.5.3):
 * each thread walks its part of the tree recursively (walksub in grav.C),
 * and when the tree is skewed the threads with the bigger subtrees make
 * more recursive calls and arrive late at the barrier.
 *
 * Before the parallel region the main thread builds, with malloc, a binary
 * tree of N = 20000 nodes with a skewed split: a subtree of n nodes has
 * (n - 1) * 5 / 8 nodes on the left and the rest on the right. The 8
 * subtrees at depth 3, left to right, go to the threads 0..7
 * (omp_get_thread_num(), which is the weft thread id; thread 0 is the main
 * thread). Their sizes (nodes) and depths:
 *   thread   0     1     2     3     4     5     6     7
 *   nodes  4881  2929  2928  1758  2928  1757  1757  1055
 *   depth    17    16    16    14    16    14    14    13
 * (the 7 nodes above depth 3 are not walked). The build belongs to the main
 * thread's section that the start of the parallel region closes, not to the
 * sections inside the region.
 *
 * One parallel region of 8 threads (num_threads(8)); phase p = 0..5 (6
 * phases, each ended by a `#pragma omp barrier`, so 6 instances of one
 * parallel section): thread t computes walk(subtree[t]), where
 *     walk(node) = 0                        if node == NULL
 *                = mass + 0.5 * (walk(left) + walk(right))   otherwise.
 * A subtree of n nodes costs 2n + 1 calls of walk: n take the recursive
 * branch and n + 1 the base case. Calls per phase:
 *   thread   0     1     2     3     4     5     6     7
 *   calls  9763  5859  5857  3517  5857  3515  3515  2111
 * The walk is the only code that differs in amount between threads (the
 * result is a double, so neither compiler turns the recursion into a loop).
 *
 * Expected: in every phase the work of a thread is a linear function of the
 * outcome counts of the base-case test in walk, so the top cause of the
 * imbalance is the line marked with the top-cause comment below (the
 * branch that decides whether walk recurses; the paper reports the
 * recursion edge grav.C:116 -> 112 of walksub).
 * Each thread stores its sum and the team size in its own 64-byte slot (an
 * unconditional store: no thread-dependent branch outside walk); the main
 * thread reads the slots after the region and prints a checksum.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define P 8      /* threads */
#define N 20000  /* tree nodes */
#define PHASES 6 /* walks, one per parallel section */
#define SPLIT_NUM 5
#define SPLIT_DEN 8

typedef struct node {
  struct node *left, *right;
  double mass;
} node_t;

typedef struct {
  _Alignas(64) double v;
  int team;
} slot_t;

static node_t *tree;
static node_t *subtree[P];
static slot_t result[P];
static int next_id; /* used by the main thread only, while building */

static node_t *build(int n) {
  if (n == 0) return NULL;
  node_t *node = malloc(sizeof *node);
  if (node == NULL) {
    fprintf(stderr, "barnes_tree_omp: out of memory\n");
    exit(1);
  }
  const int id = next_id++;
  node->mass = (double)(id % 97) / 97.0;
  const int nl = (n - 1) * SPLIT_NUM / SPLIT_DEN;
  node->left = build(nl);
  node->right = build(n - 1 - nl);
  return node;
}

static void free_tree(node_t *node) {
  if (node == NULL) return;
  free_tree(node->left);
  free_tree(node->right);
  free(node);
}

/* The 2^depth subtrees at `depth` below `node`, left to right. */
static void collect(node_t *node, int depth, node_t **out, int *count) {
  if (depth == 0) {
    out[(*count)++] = node;
    return;
  }
  collect(node->left, depth - 1, out, count);
  collect(node->right, depth - 1, out, count);
}

/* noinline: one copy of the base-case test, as in the paper's walksub (gcc -O2
 * would otherwise inline the recursion into itself several levels deep). */
__attribute__((noinline)) static double walk(const node_t *node) {
  if (node == NULL) return 0.0; /* weft:top-cause */
  return node->mass + 0.5 * (walk(node->left) + walk(node->right));
}

int main(void) {
  tree = build(N);
  int count = 0;
  collect(tree, 3, subtree, &count);
#pragma omp parallel num_threads(P)
  {
    const int t = omp_get_thread_num();
    double check = 0.0;
    for (int p = 0; p < PHASES; p++) {
      check += walk(subtree[t]);
#pragma omp barrier
    }
    result[t].v = check;
    result[t].team = omp_get_num_threads();
  }
  for (int t = 0; t < P; t++) {
    if (result[t].team != P) {
      fprintf(stderr, "barnes_tree_omp: got %d threads instead of %d\n", result[t].team, P);
      return 1;
    }
  }
  double sum = 0.0;
  for (int t = 0; t < P; t++) sum += result[t].v;
  free_tree(tree);
  printf("barnes_tree_omp P=%d N=%d phases=%d checksum=%.6f\n", P, N, PHASES, sum);
  return 0;
}
