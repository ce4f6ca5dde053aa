#!/bin/sh
# Boot-plus-workload wall time with and without the instruction-counting TCG plugin, measured
# side by side: PAIRS times, one `isolab run` of tests/data/specs/bench-insn-plugin.json (one
# boot of the default guest and workloads, kernel from the cache) with the plugin, then one
# with --no-insn-count, alternating which goes first. Prints each pair's wall times and ratio
# (with / without) and the median ratio. The runs share the machine, so a drift in its load
# moves both members of a pair alike; the ratio is what to quote.
# Usage: bench/insn-plugin.sh [PAIRS] [BUILD_DIR]   (PAIRS default 3, BUILD_DIR default ./build)
# Needs TCG (the plugin is not loaded under KVM): run it with --accel tcg semantics, i.e. on a
# host where the probe falls back to TCG, or set ISOLAB_BENCH_ACCEL=tcg (the default).
set -eu
pairs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
out=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-insn.XXXXXX")
trap 'rm -rf "$out"' EXIT
spec="$root/tests/data/specs/bench-insn-plugin.json"

# One run; prints its wall seconds. $1: "with" or "without".
one_run() {
  flag=""
  [ "$1" = without ] && flag="--no-insn-count"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # $flag is empty or one word
  "$build/isolab" run "$spec" --accel "${ISOLAB_BENCH_ACCEL:-tcg}" --results-dir "$out" \
    --quiet $flag >"$out/stdout" 2>"$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
  }
  end=$(date +%s.%N)
  status=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"])' \
    "$(tail -n 1 "$out/stdout")/result.json")
  [ "$status" = complete ] || {
    echo "bench: a run $1 the plugin ended $status" >&2
    exit 1
  }
  echo "$end - $start" | bc
}

ratios=""
i=1
while [ "$i" -le "$pairs" ]; do
  if [ $((i % 2)) = 1 ]; then
    w=$(one_run with)
    wo=$(one_run without)
  else
    wo=$(one_run without)
    w=$(one_run with)
  fi
  r=$(echo "scale=4; $w / $wo" | bc)
  echo "pair $i: with plugin ${w} s, without ${wo} s, ratio ${r}"
  ratios="$ratios $r"
  i=$((i + 1))
done
median=$(echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {
  if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "median ratio (with / without the plugin) over $pairs pairs: $median"
