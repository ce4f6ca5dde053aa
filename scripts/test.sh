#!/usr/bin/env bash
# Sets up, builds, runs each libFuzzer target for a bounded time (FUZZ_SECONDS, default 15 s
# each), then every test tier (unit, process, vm) with ctest; ctest's summary is the last line.
# Extra arguments go to ctest and skip the fuzzers, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
fuzz_rc=0
if [ $# -eq 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh || fuzz_rc=$?
fi
# The libvirt backend's tests need the daemons; start them as plain daemons if not running.
pgrep -x virtlogd >/dev/null || virtlogd -d || true
pgrep -x libvirtd >/dev/null || libvirtd -d || true
(cd build && ctest --output-on-failure --timeout 3000 "$@")
if [ "$fuzz_rc" -ne 0 ]; then
  echo "test.sh: a fuzzer failed (exit $fuzz_rc); see its output above" >&2
  exit "$fuzz_rc"
fi
