#!/usr/bin/env bash
# Stage 1 of scripts/test.sh: the checks that need no VM and no kernel, run before the slow
# tiers so that a mistake they catch stops the test command early. In order, stopping at the
# first that fails:
#   1. format     clang-format --dry-run -Werror (the repository's .clang-format) on every
#                 tracked C and C++ file
#   2. shellcheck every script in scripts/ and .ci/
#      layers     scripts/check-layers.sh: every include goes to the area's own or an earlier
#                 area in CMakeLists.txt's order; no source file over 800 lines
#   3. sanitize   a build directory of its own (CHECK_FAST_BUILD_DIR, default build-sanitize)
#                 with ISOLAB_SANITIZE=ON (ASan + UBSan, no recovery) and ISOLAB_WERROR=ON
#                 (-Werror), at -O1 with line tables only; the unit tests only, then the unit
#                 tier there, each test program once (ISOLAB_UNIT_TEST_PROGRAMS: ctest test
#                 unit.<file stem>); a leak or any ASan/UBSan report fails its program
#   4. skips      the unit tier's skips against the policy (scripts/test-skips.sh)
#   5. tidy       scripts/tidy.sh on that build directory: clang-tidy with .clang-tidy, every
#                 finding an error, on the files a change touches since the commit recorded in
#                 scripts/tidy-base (TIDY_FULL=1: every file; CI's nightly sets it)
# Steps 3 and 5 are the slow ones cold (docs/measurements.md gives the times on a 2-core
# machine): the build goes through ccache when it is installed (scripts/ccache-env.sh) and
# tidy.sh skips a file that passed while nothing it compiles from has changed, so a later run
# rebuilds and re-checks only what changed.
# CHECK_SANITIZE=0 or CHECK_TIDY=0 leaves a step out (for a quick local run; CI runs both).
# Usage: scripts/check-fast.sh   (after scripts/setup.sh --packages-only)
# Exits 0 when all pass, else the failing step's exit status (its name is printed last).
set -euo pipefail
cd "$(dirname "$0")/.."

build="${CHECK_FAST_BUILD_DIR:-build-sanitize}"
jobs="$(nproc)"
t0=$SECONDS
step() { echo "check-fast: [$1] $2 ($((SECONDS - t0)) s so far)"; }
fail() { echo "check-fast: FAILED at step '$1' after $((SECONDS - t0)) s" >&2; exit "$2"; }

step format "clang-format --dry-run -Werror"
mapfile -t sources < <(git ls-files '*.c' '*.cc' '*.h' '*.cpp' '*.hpp')
clang-format --dry-run -Werror "${sources[@]}" || fail format $?

step shellcheck "scripts/ and .ci/"
mapfile -t scripts_ < <(git ls-files 'scripts/*.sh' '.ci/*')
shellcheck -x "${scripts_[@]}" || fail shellcheck $?

step layers "scripts/check-layers.sh"
./scripts/check-layers.sh || fail layers $?

# The sanitizer build: tidy reads its compile database and its ninja dependencies too.
configure() {
  # shellcheck source=scripts/ccache-env.sh
  . scripts/ccache-env.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DISOLAB_SANITIZE=ON -DISOLAB_WERROR=ON \
    -DISOLAB_UNIT_TEST_PROGRAMS=ON -DISOLAB_UNITY=OFF "${cmake_launcher[@]}" >/dev/null
}

build_unit_tests() {
  mapfile -t unit_targets < <(for f in tests/unit/*_test.cc; do basename "$f" .cc | sed 's/^/unit_/'; done)
  step sanitize "build ${#unit_targets[@]} unit test programs with ASan + UBSan, -Werror"
  ninja -C "$build" -j "$jobs" -k 0 "${unit_targets[@]}" >"$build/check-fast-build.log" 2>&1 || {
    local rc=$?
    grep -E 'error|FAILED' "$build/check-fast-build.log" | head -n 40 >&2
    return "$rc"
  }
}

step sanitize "configure $build"
configure || fail sanitize $?
build_unit_tests || fail sanitize $?

if [ "${CHECK_SANITIZE:-1}" != 0 ]; then
  step sanitize "unit tier under ASan + UBSan"
  # detect_leaks: a leak is a finding too; abort_on_error gives a core-less abort with a report.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    ctest --test-dir "$build" -L unit -j "$jobs" --output-on-failure --timeout 600 ||
    fail sanitize $?
  step skips "the unit tier's skips"
  ./scripts/test-skips.sh "$build/Testing/Temporary/LastTest.log" || fail skips $?
fi

if [ "${CHECK_TIDY:-1}" != 0 ]; then
  step tidy "scripts/tidy.sh $build"
  ./scripts/tidy.sh "$build" || fail tidy $?
fi

echo "check-fast: all passed in $((SECONDS - t0)) s"
