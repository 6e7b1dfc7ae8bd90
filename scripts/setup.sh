#!/usr/bin/env bash
# Installs the Debian packages weft needs to build, test and run, if missing.
# Idempotent: a second run installs nothing. Debian packages only.
set -euo pipefail

PACKAGES=(
  cmake make g++ gcc clang llvm-19-dev libomp-14-dev gfortran  # toolchains; LLVM 19: docs/loops.md
  libclang-rt-14-dev                                            # libFuzzer, clang's sanitizers (fuzz/)
  libcli11-dev libfmt-dev nlohmann-json3-dev                    # CLI, output
  libsqlite3-dev sqlite3                                        # the profile
  libhwloc-dev hwloc                                            # topology
  libzstd-dev libeigen3-dev libboost-math-dev                   # later analyses
  libgtest-dev libgmock-dev libbenchmark-dev                    # tests, bench
  valgrind                                                      # binary source
  procps make time                                              # pkill, make (tests); /usr/bin/time (bench)
  python3                                                       # scripts/check-includes.py, view snapshots
  chromium                                                      # the HTML report's test renders it headless
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
