#!/usr/bin/env bash
# Sets up, builds, runs each libFuzzer target for a bounded time (FUZZ_SECONDS, default 15 s
# each), then every test tier (unit, process, vm) with ctest, then lists every skipped test with
# its reason (a skip is allowed only for a missing hardware feature such as KVM).
# Extra arguments go to ctest and skip the fuzzers, e.g. `scripts/test.sh -L unit`.
# No libvirt daemon is needed: the libvirt tests start isolab's private (embedded) driver.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
fuzz_rc=0
if [ $# -eq 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh || fuzz_rc=$?
fi
ctest_rc=0
(cd build && ctest --output-on-failure --timeout 3000 "$@") || ctest_rc=$?
./scripts/test-skips.sh build/Testing/Temporary/LastTest.log
if [ "$fuzz_rc" -ne 0 ]; then
  echo "test.sh: a fuzzer failed (exit $fuzz_rc); see its output above" >&2
  exit "$fuzz_rc"
fi
exit "$ctest_rc"
