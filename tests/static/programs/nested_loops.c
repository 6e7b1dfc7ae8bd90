// Loops with known shapes for the binary structure tests. The tests find the
// marked lines (the `LINE:` comments) in this file, so it can be edited freely.
// Stores go to volatile globals and bounds are volatile too (read at every
// test): compilers keep every iteration, cannot compute trip counts, and so
// neither vectorize, unroll nor version the loops: each source loop is one
// machine loop at -O2 with gcc and clang.
volatile int grid[64][64];
volatile int row[256];
volatile int sink;
volatile int rows = 8, columns = 8;

__attribute__((noinline)) void nested(void) {
  for (int i = 0; i < rows; i++) {       // LINE:outer_for
    for (int j = 0; j < columns; j++) {  // LINE:inner_for
      grid[i & 63][j & 63] = i * j;      // LINE:store
    }
    sink = i;  // LINE:outer_last
  }
}

__attribute__((noinline)) void single(void) {
  for (int i = 0; i < rows; i++) {  // LINE:single_for
    row[i & 255] = i;               // LINE:single_store
  }
}

__attribute__((noinline)) int straight(int a, int b) {
  int c = a * b + 3;
  return c > 10 ? c - a : c + b;
}

int main(void) {
  nested();
  single();
  sink = straight(rows, columns);
  return 0;
}
