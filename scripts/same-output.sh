#!/usr/bin/env bash
# Runs every invocation of tests/cli/cases.txt with two isolab binaries and reports any case whose
# stdout, stderr, exit status or written files differ between them: the check that a change of
# structure left behaviour unchanged.
#
# Usage: scripts/same-output.sh BEFORE [AFTER]
#   BEFORE, AFTER: an isolab executable, or a git revision of this repository (built into a
#   scratch worktree). AFTER defaults to build/isolab.
# Exit status: 0 every case identical, 1 some differ (their names and a diff are printed),
# 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then sed -n '2,10p' "$0" >&2; exit 2; fi
work=$(mktemp -d)
trap 'git -C "$repo" worktree prune; rm -rf "$work"' EXIT

# binary SPEC SIDE: a path to an executable named isolab in $work/bin-SIDE.
binary() {
  local spec=$1 side=$2 exe launcher
  launcher=$(command -v ccache || true)
  if [ -f "$spec" ] && [ -x "$spec" ]; then
    exe=$(realpath "$spec")
  else
    git -C "$repo" rev-parse --verify --quiet "$spec^{commit}" >/dev/null ||
      { echo "same-output.sh: '$spec' is neither an executable nor a revision" >&2; exit 2; }
    git -C "$repo" worktree add --detach --quiet "$work/src-$side" "$spec"
    cmake -S "$work/src-$side" -B "$work/build-$side" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} >/dev/null
    cmake --build "$work/build-$side" --target isolab -j "$(nproc)" >/dev/null
    exe="$work/build-$side/isolab"
  fi
  mkdir -p "$work/bin-$side"
  ln -s "$exe" "$work/bin-$side/isolab"
}

binary "$1" before
binary "${2:-build/isolab}" after

# normalize DIR: the clock's part of written files masked (run ids, start and finish times), and
# the history database dumped as text with its hashes masked (one is of result.json, times and all).
normalize() {
  local f
  find "$1" -name isolab.db | while read -r f; do
    sqlite3 "$f" .dump | sed -E 's/[0-9a-f]{64}/<sha256>/g' >"$f.sql" && rm "$f"
  done
  find "$1" -type f \( -name '*.json' -o -name '*.sql' \) -exec sed -i -E \
    -e 's/[0-9]{8}T[0-9]{6}Z/<utc>/g' -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/<utc>/g' {} +
}

# run_cases SIDE: every case's output into $work/SIDE/NAME/{stdout,stderr,rc,files/}.
run_cases() {
  local side=$1 name args
  while read -r name args; do
    case "$name" in '' | '#'*) continue ;; esac
    local out="$work/out/$name" dest="$work/$side/$name"
    rm -rf "$out" && mkdir -p "$out" "$dest"
    local rc=0
    OUT="$out" PATH="$work/bin-$side:$PATH" TZ=UTC LC_ALL=C \
      eval "isolab $args" >"$dest/stdout" 2>"$dest/stderr" </dev/null || rc=$?
    echo "$rc" >"$dest/rc"
    normalize "$out"
    mv "$out" "$dest/files"
  done <"$repo/tests/cli/cases.txt"
}

run_cases before
run_cases after
count=$(find "$work/before" -mindepth 1 -maxdepth 1 -type d | wc -l)
if diff -r "$work/before" "$work/after" >"$work/diff"; then
  echo "same-output.sh: $count cases, all identical"
  exit 0
fi
sed "s#$work/##g" "$work/diff" >"$work/diff.shown"
head -n 200 "$work/diff.shown"
echo "same-output.sh: differing cases:" \
  "$(grep -oE "^(diff -r|Only in|Binary files) $work/before/[^/ :]+" "$work/diff" |
    sed "s#.*/before/##" | sort -u | tr '\n' ' ')" >&2
exit 1
