#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy (every finding is an error) over every
# orchestrator/ source file, in parallel, reading the compile flags from a CMake compile database.
#   scripts/tidy.sh                 build/compile_commands.json, one clang-tidy per core
#   scripts/tidy.sh BUILD_DIR       another build directory (any configured one will do)
#   scripts/tidy.sh BUILD_DIR FILE  only these files (paths from the repository root)
#   TIDY_JOBS=1 scripts/tidy.sh     fewer parallel clang-tidy processes (default: nproc)
# Headers are checked through the files that include them (HeaderFilterRegex: orchestrator/).
# Exits 0 when clang-tidy finds nothing, 1 on any finding, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

build="${1:-build}"
(($#)) && shift
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "tidy: no $db (configure first: cmake -S . -B $build -G Ninja)" >&2; exit 2; }
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy not found (run scripts/setup.sh)" >&2; exit 2; }
jobs="${TIDY_JOBS:-$(nproc)}"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "tidy: TIDY_JOBS must be a positive number" >&2; exit 2; }

if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'orchestrator/*.cc')
fi
echo "tidy: ${#files[@]} files, $jobs at a time, flags from $db"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
start=$SECONDS
# xargs exits 123 when any clang-tidy exits non-zero (a finding, with WarningsAsErrors '*').
rc=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 1 clang-tidy --quiet -p "$build" >"$out" 2>&1 || rc=$?
# clang-tidy's own chatter ("N warnings generated.", "Error while processing") is left out.
grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings' "$out" || true
findings="$(grep -cE ': (error|warning): ' "$out" || true)"
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
  echo "tidy: FAILED, $findings findings in $((SECONDS - start)) s (clang-tidy exit status $rc)" >&2
  exit 1
fi
echo "tidy: no findings in ${#files[@]} files ($((SECONDS - start)) s)"
