#!/usr/bin/env bash
# Sets up, builds and runs every test tier (unit, process, vm) with ctest, then runs each
# libFuzzer target for a bounded time (FUZZ_SECONDS, default 15 s each).
# Extra arguments go to ctest and skip the fuzzers, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# The libvirt backend's tests need the daemons; start them as plain daemons if not running.
pgrep -x virtlogd >/dev/null || virtlogd -d || true
pgrep -x libvirtd >/dev/null || libvirtd -d || true
(cd build && ctest --output-on-failure --timeout 3000 "$@")
if [ $# -eq 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh
fi
