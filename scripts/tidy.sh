#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy (every finding is an error) over orchestrator/
# source files, in parallel, reading the compile flags from a CMake compile database.
#   scripts/tidy.sh                 build/compile_commands.json; the files a change touches (below)
#   scripts/tidy.sh BUILD_DIR       another build directory (any configured one will do)
#   scripts/tidy.sh BUILD_DIR FILE  only these files (paths from the repository root)
#   TIDY_FULL=1 scripts/tidy.sh     every orchestrator/ source file (CI's scheduled full pass)
#   TIDY_RECORD=1                   with TIDY_FULL=1: when the pass finds nothing in a checkout
#                                   with no uncommitted change to orchestrator/, .clang-tidy or
#                                   CMakeLists.txt, writes HEAD into scripts/tidy-base (commit it)
#   TIDY_JOBS=1 scripts/tidy.sh     fewer parallel clang-tidy processes (default: nproc)
#   TIDY_CACHE_DIR=DIR              where passing files are remembered (default
#                                   ~/.cache/isolab/tidy; TIDY_CACHE_DIR= turns the cache off)
# Headers are checked through the files that include them (HeaderFilterRegex: orchestrator/).
#
# Which files, when none are named: scripts/tidy-base records a commit whose full pass found
# nothing, and the clang-tidy version that ran it. Against it, a change touches every .cc file
# under orchestrator/ that differs from that commit (committed, staged, in the work tree, or new
# and untracked) and every one that includes a header that differs (ninja's record of BUILD_DIR's
# headers). The pass is full instead when the base is not in this clone (a shallow one), when
# .clang-tidy differs from it, when clang-tidy's version is another, or when a header differs
# and BUILD_DIR has not been built yet (no ninja record of headers). What this leaves out (a
# change of compile flags in CMakeLists.txt, of a system header) the scheduled full pass sees.
#
# Most of clang-tidy's time goes into matching its checks over the system headers each file
# includes (the standard library, nlohmann/json, Boost), so a file that passed is not checked
# again while nothing it compiles from has changed: when BUILD_DIR has been built, ninja knows
# every header of each object, and the key of a file is the SHA-256 of clang-tidy's version,
# .clang-tidy, the build's compile options and the content of the file and all its headers.
# A precompiled header in the compile database (CMake's -include .../cmake_pch.hxx, GCC's format)
# is left out of clang-tidy's commands: clang parses each file with its own includes alone.
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
cache="${TIDY_CACHE_DIR-${XDG_CACHE_HOME:-$HOME/.cache}/isolab/tidy}"
if [ "${TIDY_RECORD:-0}" = 1 ] && { [ "${TIDY_FULL:-0}" != 1 ] || (($#)); }; then
  echo "tidy: TIDY_RECORD=1 records only a full pass (TIDY_FULL=1, no files named)" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
root="$(pwd)"
base_file=scripts/tidy-base
tidy_version="$(clang-tidy --version | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1)"

# "<object>\t<header>" per dependency of every object built from orchestrator/ (absolute paths;
# empty before BUILD_DIR's first build).
: >"$work/deps"
if [ -f "$build/.ninja_deps" ]; then
  ninja -C "$build" -t deps 2>/dev/null | awk -v root="$root" -v b="$build" '
    /^[^ ].*: #deps / { obj = $1; sub(/:$/, "", obj); keep = obj ~ /\/orchestrator\/.*\.cc\.o$/; next }
    keep && NF        { d = $1; if (d !~ /^\//) d = root "/" b "/" d; print obj "\t" d }' >"$work/deps"
fi
# An awk function: the source file an object of the deps was compiled from, relative to the
# repository root.
src_of='function src_of(o, n, part) { n = split(o, part, "/orchestrator/"); o = "orchestrator/" part[n]; sub(/\.o$/, "", o); return o }'

# touched_files: prints the .cc files a change touches since the recorded base, or nothing and
# a reason on stderr (exit 1) when the pass must be full.
touched_files() {
  local base version
  [ -f "$base_file" ] || { echo "no $base_file" >&2; return 1; }
  base="$(awk '!/^#/ && NF { print $1; exit }' "$base_file")"
  version="$(awk '!/^#/ && NF { print $2; exit }' "$base_file")"
  git cat-file -e "$base^{commit}" 2>/dev/null || { echo "base $base is not in this clone" >&2; return 1; }
  [ "$version" = "$tidy_version" ] || { echo "base ran clang-tidy $version, this is $tidy_version" >&2; return 1; }
  { git diff --name-only "$base" --; git ls-files --others --exclude-standard; } | sort -u >"$work/changed"
  if grep -qx '\.clang-tidy' "$work/changed"; then
    echo ".clang-tidy changed since $base" >&2
    return 1
  fi
  grep -E '^orchestrator/.*\.h$' "$work/changed" >"$work/changed-headers" || true
  if [ -s "$work/changed-headers" ] && [ ! -s "$work/deps" ]; then
    echo "a header changed since $base and $build has no record of headers yet" >&2
    return 1
  fi
  grep -E '^orchestrator/.*\.cc$' "$work/changed" | while read -r f; do [ -f "$f" ] && echo "$f"; done
  # ninja records a header as the compiler named it (BUILD_DIR/../orchestrator/x.h): each
  # "dir/../" collapses before the lookup.
  sed "s|^|$root/|" "$work/changed-headers" | awk -F'\t' "$src_of"'
    FNR == NR { h[$1]; next }
              { d = $2; while (sub(/\/[^\/]+\/\.\.\//, "/", d)) {} }
    d in h    { print src_of($1) }' - "$work/deps"
}

if (($#)); then
  files=("$@")
  scope="the files named"
else
  mapfile -t files < <(git ls-files 'orchestrator/*.cc')
  scope="every file (TIDY_FULL=1)"
  if [ "${TIDY_FULL:-0}" != 1 ]; then
    if touched="$(touched_files 2>"$work/why")"; then
      mapfile -t files < <(printf '%s\n' "$touched" | grep . | sort -u)
      scope="the files touched since the base in $base_file"
    else
      scope="every file: $(cat "$work/why")"
    fi
  fi
fi

# keys: "<file> <key>" for every file whose headers ninja knows (none before the first build).
: >"$work/keys"
if [ -n "$cache" ] && [ -s "$work/deps" ]; then
  mkdir -p "$cache"
  salt="$({ clang-tidy --version; cat .clang-tidy; grep -E '^(CMAKE_BUILD_TYPE|CMAKE_CXX_FLAGS|ISOLAB_)[A-Z_]*:' "$build/CMakeCache.txt"; cat CMakeLists.txt; } | sha256sum | cut -c1-64)"
  cut -f2 "$work/deps" | sort -u | xargs -r sha256sum >"$work/hashes" 2>/dev/null || true
  # Paths inside the repository count by their name relative to it, so that another clone of
  # the same commit hits the cache too.
  awk -v root="$root/" -v salt="$salt" "$src_of"'
    FNR == NR { h = $1; p = $2; sub(root, "", p); hash[$2] = h " " p; next }
              { s = src_of($1); line[s] = line[s] "|" hash[$2] }
    END       { for (s in line) print s, line[s] "|" salt }' "$work/hashes" "$work/deps" |
    while read -r src list; do
      printf '%s %s\n' "$src" "$(printf '%s' "$list" | tr '|' '\n' | sort | sha256sum | cut -c1-64)"
    done >"$work/keys"
fi

# The compile database without a precompiled header (GCC's .gch, which clang cannot read).
mkdir -p "$work/db"
sed -E 's# -Winvalid-pch##g; s# -include [^ ]*/cmake_pch\.hxx##g' "$db" >"$work/db/compile_commands.json"

todo=()
cached=0
for f in "${files[@]}"; do
  key="$(awk -v f="$f" '$1 == f { print $2; exit }' "$work/keys")"
  if [ -n "$key" ] && [ -f "$cache/$key" ]; then
    cached=$((cached + 1))
  else
    todo+=("$f")
  fi
done
echo "tidy: $scope"
echo "tidy: ${#files[@]} files ($cached unchanged since they passed), $jobs at a time, flags from $db"

# One clang-tidy per file; a file that passes is remembered under its key. The compile database
# is GCC's: -Wno-unknown-warning-option lets clang-tidy's clang skip GCC-only flags such as
# -Wno-error=maybe-uninitialized instead of failing on them.
check_one() {
  local f="$1" log key
  log="$work/$(printf '%s' "$f" | tr '/' '_').log"
  if clang-tidy --quiet -p "$work/db" --extra-arg=-Wno-unknown-warning-option "$f" >"$log" 2>&1; then
    key="$(awk -v f="$f" '$1 == f { print $2; exit }' "$work/keys")"
    [ -n "$key" ] && [ -n "$cache" ] && : >"$cache/$key"
    return 0
  fi
  return 1
}
export -f check_one
export build work cache
rc=0
if ((${#todo[@]})); then
  # xargs exits 123 when any clang-tidy exits non-zero (a finding, with WarningsAsErrors '*').
  # shellcheck disable=SC2016 # $1 is check_one's argument, expanded by the inner bash
  printf '%s\n' "${todo[@]}" | xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} || rc=$?
fi
# clang-tidy's own chatter ("N warnings generated.", "Suppressed N warnings") is left out.
cat "$work"/*.log 2>/dev/null |
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter' || true
findings="$(cat "$work"/*.log 2>/dev/null | grep -cE ': (error|warning): ' || true)"
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
  echo "tidy: FAILED, $findings findings in $((SECONDS - start)) s (clang-tidy exit status $rc)" >&2
  exit 1
fi
echo "tidy: no findings in ${#files[@]} files ($((SECONDS - start)) s)"

# The record of a clean full pass: only of a commit, with nothing that could change a finding
# left uncommitted.
if [ "${TIDY_RECORD:-0}" = 1 ]; then
  if [ -n "$(git status --porcelain -- orchestrator .clang-tidy CMakeLists.txt)" ]; then
    echo "tidy: not recorded: orchestrator/, .clang-tidy or CMakeLists.txt differ from HEAD" >&2
    exit 2
  fi
  {
    echo "# The commit whose full clang-tidy pass (TIDY_FULL=1 scripts/tidy.sh) found nothing, and the"
    echo "# clang-tidy version that ran it: scripts/tidy.sh checks only what changed since (see there)."
    echo "# Written by TIDY_RECORD=1 TIDY_FULL=1 scripts/tidy.sh on $(date -u +%Y-%m-%d)."
    echo "$(git rev-parse HEAD) $tidy_version"
  } >"$base_file"
  echo "tidy: recorded $(git rev-parse --short HEAD) in $base_file (commit that file)"
fi
