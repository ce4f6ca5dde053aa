#!/usr/bin/env bash
# Sets up, builds and runs every test tier (unit, process, vm) with ctest.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# The libvirt backend's tests need the daemons; start them as plain daemons if not running.
pgrep -x virtlogd >/dev/null || virtlogd -d || true
pgrep -x libvirtd >/dev/null || libvirtd -d || true
cd build
ctest --output-on-failure --timeout 3000 "$@"
