#!/usr/bin/env bash
# Sets up what is missing, builds weft, builds the ring example with weft's
# compiler wrapper (and once more without it, for the static analysis of
# its hot loops: a weft-cc build's loops call the instrumentation), records
# it and prints the report; then writes the same report as one HTML page and
# prints its path last.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j"$(nproc)" --target weft weft_rt

mkdir -p build/quickstart
build/bin/weft-cc -O2 -pthread examples/ring_pthreads.c -o build/quickstart/ring
gcc -O2 -g -pthread examples/ring_pthreads.c -o build/quickstart/ring.plain
build/bin/weft record -o build/quickstart/ring.db -- build/quickstart/ring
build/bin/weft report build/quickstart/ring.db --binary build/quickstart/ring.plain
build/bin/weft report build/quickstart/ring.db --binary build/quickstart/ring.plain \
  --html build/quickstart/ring.html > /dev/null
echo "HTML report: $(pwd)/build/quickstart/ring.html"
