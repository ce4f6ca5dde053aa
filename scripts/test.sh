#!/usr/bin/env bash
# The test command (what CI runs, through .ci/run). In order:
#   1. installs the packages (scripts/setup.sh --packages-only)
#   2. stage 1, scripts/check-fast.sh: the format check, shellcheck, the unit tier built with
#      ASan + UBSan and -Werror, the skip policy on it, and clang-tidy; a failure there stops
#      here, before the slow tiers
#   3. builds into ./build (scripts/setup.sh), runs each libFuzzer target for a bounded time
#      (FUZZ_SECONDS, default 15 s each), then the test tiers with ctest, then lists every
#      skipped test with its reason and fails on a skip that the policy does not allow (only a
#      missing hardware feature such as KVM; scripts/test-skips.sh). The unit tier ran in stage 1,
#      under ASan + UBSan: ./build then builds and runs only the process and vm tiers (the unit
#      test programs are not built there). Without stage 1's unit run (CHECK_FAST=0 or
#      CHECK_SANITIZE=0), or with ctest arguments, ./build builds everything and ctest runs what
#      the arguments select (every tier without any).
#   4. prints how long each stage took
# Extra arguments go to ctest and skip the fuzzers, e.g. `scripts/test.sh -L unit`;
# CHECK_FAST=0 leaves out stage 1 (for a local run of one tier; CI always runs it).
# No libvirt daemon is needed: the libvirt tests start isolab's private (embedded) driver.
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
t=$SECONDS
took() { times+=("$1 $((SECONDS - t)) s"); t=$SECONDS; }

./scripts/setup.sh --packages-only
took packages
unit_ran=0
if [ "${CHECK_FAST:-1}" != 0 ] || [ "${CI:-}" = true ]; then
  ./scripts/check-fast.sh
  took "stage 1 (check-fast)"
  [ "${CHECK_SANITIZE:-1}" != 0 ] && unit_ran=1
fi
ctest_args=("$@")
if [ $# -eq 0 ] && ((unit_ran)); then
  ./scripts/setup.sh tests_process tests_vm
  ctest_args=(-L 'process|vm')
else
  ./scripts/setup.sh
fi
took "build ./build"
fuzz_rc=0
if [ $# -eq 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh || fuzz_rc=$?
  took fuzz
fi
ctest_rc=0
(cd build && ctest --output-on-failure --timeout 3000 "${ctest_args[@]}") || ctest_rc=$?
took "ctest ${ctest_args[*]}"
skips_rc=0
./scripts/test-skips.sh build/Testing/Temporary/LastTest.log || skips_rc=$?
echo "test.sh: stage times: $(printf '%s; ' "${times[@]}")total $SECONDS s"
if [ "$fuzz_rc" -ne 0 ]; then
  echo "test.sh: a fuzzer failed (exit $fuzz_rc); see its output above" >&2
  exit "$fuzz_rc"
fi
if [ "$ctest_rc" -ne 0 ]; then
  exit "$ctest_rc"
fi
exit "$skips_rc"
