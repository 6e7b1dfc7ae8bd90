#!/usr/bin/env bash
# Behaviour check for changes that must not alter what weft concludes.
#
#   scripts/view-snapshot.sh record BUILD_DIR PROFILE_DIR
#       records every example (the gcc -O2 build, default arguments,
#       address-space randomisation off) into PROFILE_DIR/NAME.db;
#   scripts/view-snapshot.sh render BUILD_DIR PROFILE_DIR OUT_DIR
#       writes the JSON of every view of each profile into OUT_DIR, with the
#       fields that change from run to run (times, durations, host) removed.
#
# Before the change: record and render with the old build; after it: render
# the same profiles with the new build (migrated first if the schema
# changed, docs/profile-format.md) and `diff -r` the two OUT_DIRs.
set -euo pipefail
usage="usage: view-snapshot.sh record BUILD_DIR PROFILE_DIR | render BUILD_DIR PROFILE_DIR OUT_DIR"
mode=${1:?$usage}
build=${2:?$usage}
profiles=${3:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
weft="$build/bin/weft"

case $mode in
  record)
    mkdir -p "$profiles"
    for exe in "$build"/examples/*.gcc.O2; do
      name=$(basename "$exe" .gcc.O2)
      args=()
      [[ $name == false_sharing_pthreads ]] && args=(packed)
      setarch "$(uname -m)" -R "$weft" record -o "$profiles/$name.db" -- "$exe" "${args[@]}" \
        > /dev/null 2>&1 || true
    done
    echo "view-snapshot: $(ls "$profiles"/*.db | wc -l) profiles in $profiles"
    ;;
  render)
    out=${4:?$usage}
    mkdir -p "$out"
    views=("report" "comm --kind raw" "comm --kind rar" "comm --kind inval" "comm --kind crr"
           "crd" "imbalance" "falseshare" "trace")
    for db in "$profiles"/*.db; do
      name=$(basename "$db" .db)
      for view in "${views[@]}"; do
        read -r -a words <<< "$view"
        file="$out/$name.${view// /_}.json"
        "$weft" "${words[@]}" "$db" --format json > "$file.raw" 2> "$file.err" || true
        python3 "$here/view-snapshot-normalize.py" < "$file.raw" > "$file"
        rm -f "$file.raw"
      done
    done
    echo "view-snapshot: $(ls "$out"/*.json | wc -l) views in $out"
    ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
