#!/usr/bin/env bash
# The test command (what CI runs, through .ci/run). In order:
#   1. installs the packages (scripts/setup.sh --packages-only)
#   2. stage 1, scripts/check-fast.sh: the format check, shellcheck, the unit tier built with
#      ASan + UBSan and -Werror, the skip policy on it, and clang-tidy; a failure there stops
#      here, before the slow tiers
#   3. builds everything into ./build (scripts/setup.sh), runs each libFuzzer target for a
#      bounded time (FUZZ_SECONDS, default 15 s each), then every test tier (unit, process, vm)
#      with ctest, then lists every skipped test with its reason and fails on a skip that the
#      policy does not allow (only a missing hardware feature such as KVM; scripts/test-skips.sh)
# Extra arguments go to ctest and skip the fuzzers, e.g. `scripts/test.sh -L unit`;
# CHECK_FAST=0 leaves out stage 1 (for a local run of one tier; CI always runs it).
# No libvirt daemon is needed: the libvirt tests start isolab's private (embedded) driver.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --packages-only
if [ "${CHECK_FAST:-1}" != 0 ] || [ "${CI:-}" = true ]; then
  ./scripts/check-fast.sh
fi
./scripts/setup.sh
fuzz_rc=0
if [ $# -eq 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh || fuzz_rc=$?
fi
ctest_rc=0
(cd build && ctest --output-on-failure --timeout 3000 "$@") || ctest_rc=$?
skips_rc=0
./scripts/test-skips.sh build/Testing/Temporary/LastTest.log || skips_rc=$?
if [ "$fuzz_rc" -ne 0 ]; then
  echo "test.sh: a fuzzer failed (exit $fuzz_rc); see its output above" >&2
  exit "$fuzz_rc"
fi
if [ "$ctest_rc" -ne 0 ]; then
  exit "$ctest_rc"
fi
exit "$skips_rc"
