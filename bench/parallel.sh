#!/bin/sh
# Times `isolab run --parallel N` on tests/data/specs/bench-parallel.json (2 variants x 2
# repetitions of 1-vCPU guests, kernels from the cache) and prints the run's wall time and its
# wall time per cell. Compare two settings by running this script under a timing harness, e.g.
#   /usr/bin/time -v bench/parallel.sh 2   against   /usr/bin/time -v bench/parallel.sh 1
# Usage: bench/parallel.sh N [BUILD_DIR]   (N: 1, 2, ... or auto; BUILD_DIR default ./build)
set -eu
n=${1:?usage: bench/parallel.sh N [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
out=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-parallel.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s.%N)
"$build/isolab" run "$root/tests/data/specs/bench-parallel.json" --parallel "$n" \
  --results-dir "$out" --no-trace >"$out/stdout" 2>"$out/stderr" || {
  cat "$out/stderr" >&2
  exit 1
}
end=$(date +%s.%N)
run_dir=$(tail -n 1 "$out/stdout")
# Cells that did not end "ok" are named with their reason (the run directory is removed).
cells=$(python3 - "$run_dir/result.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cells"]:
    if c.get("status") != "ok":
        print("cell %s: %s %s: %s" % (c["id"], c.get("status"), c.get("failure_class"),
                                    c.get("reason", "")[:300]), file=sys.stderr)
print(len([c for c in d["cells"] if c.get("status") == "ok"]), len(d["cells"]))
PY
)
echo "parallel=$n cells_ok/cells=$cells wall_s=$(echo "$end - $start" | bc) per_cell_s=$(echo "($end - $start) / ${cells#* }" | bc -l | cut -c1-6)"
