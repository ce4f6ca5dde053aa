#!/usr/bin/env bash
# The main job on its embedded default: set up, then build vanilla and patched 6.1 kernels,
# boot them under QEMU with the customer's isolation line, measure, and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the main job runs: isolab and the guest tool (the tests are test.sh's job).
./scripts/setup.sh isolab vmstat-overhead isolab-mark
run_dir=$(./build/isolab run examples/vmstat-nohz.json --results-dir results "$@" | tail -n 1)
echo "== isolab compare $run_dir"
./build/isolab compare "$run_dir" || test $? = 1
