#!/bin/sh
# Boot-plus-workload wall time with and without the instruction-counting TCG plugin, measured
# side by side: ROUNDS times, one `isolab run` of tests/data/specs/bench-insn-plugin.json (one
# boot of the default guest and workloads, kernel from the cache) in each of three arms:
#   exact    the plugin isolab loads (libisolab-insn-count.so: a callback per translation block)
#   inline   its floor-cost build (libisolab-insn-count-inline.so: a TCG inline add per block,
#            no callback; counts inexact across vCPUs, loaded through ISOLAB_INSN_PLUGIN)
#   without  --no-insn-count
# The arms' order rotates from round to round, so that a drift of the host's load moves every
# arm alike. Prints each round's wall times and ratios (exact / without, inline / without) and
# the median ratios; the ratios are what to quote.
# Usage: bench/insn-plugin.sh [ROUNDS] [BUILD_DIR]   (ROUNDS default 3, BUILD_DIR default ./build)
# Needs TCG (the plugin is not loaded under KVM); the runs ask for it with --accel
# "${ISOLAB_BENCH_ACCEL:-tcg}".
set -eu
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
out=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-insn.XXXXXX")
trap 'rm -rf "$out"' EXIT
spec="$root/tests/data/specs/bench-insn-plugin.json"

# One run; prints its wall seconds. $1: the arm (exact, inline or without).
one_run() {
  flag=""
  plugin="$build/libisolab-insn-count.so"
  [ "$1" = without ] && flag="--no-insn-count"
  [ "$1" = inline ] && plugin="$build/libisolab-insn-count-inline.so"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # $flag is empty or one word
  ISOLAB_INSN_PLUGIN="$plugin" "$build/isolab" run "$spec" \
    --accel "${ISOLAB_BENCH_ACCEL:-tcg}" --results-dir "$out" --quiet $flag \
    >"$out/stdout" 2>"$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
  }
  end=$(date +%s.%N)
  status=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"])' \
    "$(tail -n 1 "$out/stdout")/result.json")
  [ "$status" = complete ] || {
    echo "bench: a run of arm $1 ended $status" >&2
    exit 1
  }
  echo "$end - $start" | bc
}

# The median of the numbers on stdin, one per line.
median() {
  grep . | sort -n | awk '{v[NR]=$1} END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

exact_ratios=""
inline_ratios=""
i=1
while [ "$i" -le "$rounds" ]; do
  case $((i % 3)) in
    1) order="exact inline without" ;;
    2) order="inline without exact" ;;
    *) order="without exact inline" ;;
  esac
  t_exact="" t_inline="" t_without=""
  for arm in $order; do
    t=$(one_run "$arm")
    case $arm in
      exact) t_exact=$t ;;
      inline) t_inline=$t ;;
      *) t_without=$t ;;
    esac
  done
  re=$(echo "scale=4; $t_exact / $t_without" | bc)
  ri=$(echo "scale=4; $t_inline / $t_without" | bc)
  echo "round $i ($order): exact ${t_exact} s, inline ${t_inline} s, without ${t_without} s;" \
    "ratio exact ${re}, inline ${ri}"
  exact_ratios="$exact_ratios $re"
  inline_ratios="$inline_ratios $ri"
  i=$((i + 1))
done
echo "median ratio over $rounds rounds (with / without the plugin):" \
  "exact $(echo "$exact_ratios" | tr ' ' '\n' | median)," \
  "inline $(echo "$inline_ratios" | tr ' ' '\n' | median)"
