#!/usr/bin/env bash
# Prints every skipped GoogleTest test of a ctest run with its reason, from ctest's full log
# (build/Testing/Temporary/LastTest.log). GoogleTest writes a skip as
#   <file>:<line>: Skipped
#   <reason lines>
#   [  SKIPPED ] Suite.Test (N ms)
# Usage: scripts/test-skips.sh [LOG]
set -euo pipefail
log="${1:-build/Testing/Temporary/LastTest.log}"
[ -f "$log" ] || { echo "test-skips: no ctest log at $log" >&2; exit 2; }
awk '
  / Skipped$/            { grab = 1; reason = ""; next }
  /^\[  SKIPPED \] /     { if (grab) { n++; printf "  %s: %s\n", $4, (reason == "" ? "(no reason given)" : reason) }
                           grab = 0; next }
  grab                   { reason = (reason == "" ? $0 : reason " " $0) }
  END                    { printf "skipped tests: %d\n", n }
' "$log"
