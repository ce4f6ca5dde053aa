#!/usr/bin/env bash
# The main job on its embedded default: set up, then build vanilla and patched 6.1 kernels,
# boot them under QEMU with the customer's isolation line, measure, and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the main job needs: its packages, isolab and the guest tools, in Release (the tests
# and their packages are test.sh's job; scripts/setup.sh says how to build with debug information).
./scripts/setup.sh --main-job isolab vmstat-overhead isolab-mark
run_dir=$(./build/isolab run examples/vmstat-nohz.json --results-dir results "$@" | tail -n 1)
echo "== isolab compare $run_dir"
./build/isolab compare "$run_dir" || test $? = 1
