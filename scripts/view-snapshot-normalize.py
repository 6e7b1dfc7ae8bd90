"""Drops the fields of a view's JSON that differ between two recordings of
the same deterministic program (wall times, dates, host) and prints the rest
with sorted keys, for view-snapshot.sh."""
import json
import sys

VOLATILE = {"duration_s", "start_time", "hostname", "os_tid", "start_ns", "end_ns",
            "wall_ns", "cwd", "weft_version", "profile"}


def clean(value):
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()
                if k not in VOLATILE and "wall" not in k}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


text = sys.stdin.read()
try:
    print(json.dumps(clean(json.loads(text)), indent=1, sort_keys=True))
except ValueError:
    sys.stdout.write(text)
