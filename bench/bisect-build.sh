#!/bin/sh
# Runs `isolab bisect` on examples/planted-series.json from a cold kernel cache (a fresh
# --cache-dir, and ccache off, so that nothing of an earlier build is reused) and prints, side by
# side from that one run, the cold build of A's kernel against the incremental build of each
# step's prefix in the build directory the variants share: make's wall time of each kernel
# (result.json variants.<v>.build_seconds), and their ratio. Then the bisection's own figures:
# the culprit it named, steps, boots and wall time.
# Usage: bench/bisect-build.sh [BUILD_DIR] [SPEC]   (BUILD_DIR default ./build; SPEC default
# examples/planted-series.json). Needs about 6 minutes for the cold build on 2 cores, plus the
# boots. Keeps its bisect directory and cache under $TMPDIR (printed) for a look afterwards.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
spec=${2:-$root/examples/planted-series.json}
out=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-bisect.XXXXXX")
echo "bench directory: $out" >&2
start=$(date +%s.%N)
rc=0
CCACHE_DISABLE=1 "$build/isolab" bisect "$spec" --cache-dir "$out/cache" \
  --results-dir "$out/results" --progress json >"$out/stdout" 2>"$out/stderr" || rc=$?
end=$(date +%s.%N)
cat "$out/stdout"
if [ "$rc" -gt 1 ]; then
  tail -n 20 "$out/stderr" >&2
  exit "$rc"
fi
python3 - "$(tail -n 1 "$out/stdout")" "$(echo "$end - $start" | bc)" <<'PY'
import glob, json, os, sys
bisect_dir, wall = sys.argv[1], float(sys.argv[2])
record = json.load(open(os.path.join(bisect_dir, "bisect.json")))
builds = []  # (variant, seconds, from_cache), in step order
for step in record["steps"]:
    run = json.load(open(os.path.join(step["run_dir"], "result.json")))
    for name in run["variant_order"]:
        v = run["variants"][name]
        if not v.get("from_cache"):
            builds.append((name, v.get("build_seconds", 0.0)))
cold = [s for n, s in builds if n == record["variant_a"]]
steps = [(n, s) for n, s in builds if n != record["variant_a"]]
print("builds (make bzImage wall time, s):")
for n, s in builds:
    print("  %-24s %7.1f" % (n, s))
if cold and steps:
    mean_step = sum(s for _, s in steps) / len(steps)
    print("cold build of %s: %.1f s; incremental step build: mean %.1f s over %d; cold/step = %.1f"
          % (record["variant_a"], cold[0], mean_step, len(steps), cold[0] / mean_step))
culprit = record["culprit"]
print("culprit: %s" % ("patch %d: %s" % (culprit["number"], culprit["subject"]) if culprit
                       else "none (%s)" % record["conclusion"]))
print("steps %d, boots %d, bisect wall %.0f s, script wall %.0f s"
      % (len(record["steps"]), record["cells"], record["wall_s"], wall))
PY
