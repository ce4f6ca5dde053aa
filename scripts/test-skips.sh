#!/usr/bin/env bash
# Lists every skipped GoogleTest test of a ctest run with its reason, from ctest's full log
# (build/Testing/Temporary/LastTest.log), and enforces the skip policy: a test may skip only
# because this host lacks a hardware feature, and then its reason starts with
# "missing hardware: " (e.g. GTEST_SKIP() << "missing hardware: no /dev/kvm"). Anything else
# missing (a tool, a file, a package) is a failure of the setup, not a skip.
# GoogleTest writes a skip as
#   <file>:<line>: Skipped
#   <reason lines>
#   [  SKIPPED ] Suite.Test (N ms)
# Usage: scripts/test-skips.sh [LOG]
# Exits 0 when every skip is allowed, 1 when one is not, 2 when there is no log.
set -euo pipefail
log="${1:-build/Testing/Temporary/LastTest.log}"
[ -f "$log" ] || { echo "test-skips: no ctest log at $log" >&2; exit 2; }
awk '
  / Skipped$/            { grab = 1; reason = ""; next }
  /^\[  SKIPPED \] /     { if (grab) {
                             n++
                             ok = reason ~ /^missing hardware: /
                             if (!ok) bad++
                             printf "  %s: %s%s\n", $4, (reason == "" ? "(no reason given)" : reason),
                                    (ok ? "" : "   <- NOT ALLOWED: not a missing hardware feature")
                           }
                           grab = 0; next }
  grab                   { reason = (reason == "" ? $0 : reason " " $0) }
  END                    { printf "skipped tests: %d\n", n
                           if (bad) {
                             printf "test-skips: %d skip(s) outside the policy (reason must start with \"missing hardware: \")\n", bad
                             exit 1
                           } }
' "$log"
