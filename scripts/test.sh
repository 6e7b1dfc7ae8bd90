#!/usr/bin/env bash
# Sets up what is missing, builds weft (warnings as errors) and runs the whole
# test suite through ctest; then builds weft's own code with AddressSanitizer
# and UndefinedBehaviorSanitizer and runs the unit tests under them; then
# builds the libFuzzer targets with clang and runs each for a short time
# (fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
JOBS=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_BUILD_TESTS=ON
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure -j"$JOBS" --timeout 600

# The sanitizer build covers weft's own code (analyzers, profile, views,
# cli); the in-program runtime is never sanitized (it runs inside the
# program, with its own constraints).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=ON -DWEFT_BUILD_TESTS=ON
cmake --build build-asan -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$JOBS" --timeout 900 -L unit

# The readers of weft's own files under libFuzzer (clang), each target for
# WEFT_FUZZ_SECONDS; the seeds and the inputs of every finding fixed are
# also run by the replayers of the suites above.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DWEFT_FUZZ=ON -DWEFT_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_C_FLAGS=-O1
cmake --build build-fuzz --target weft_fuzz_targets -j"$JOBS"
ctest --test-dir build-fuzz --output-on-failure -j"$JOBS" -L fuzz
