#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy (every finding is an error) over every
# orchestrator/ source file, in parallel, reading the compile flags from a CMake compile database.
#   scripts/tidy.sh                 build/compile_commands.json, one clang-tidy per core
#   scripts/tidy.sh BUILD_DIR       another build directory (any configured one will do)
#   scripts/tidy.sh BUILD_DIR FILE  only these files (paths from the repository root)
#   TIDY_JOBS=1 scripts/tidy.sh     fewer parallel clang-tidy processes (default: nproc)
#   TIDY_CACHE_DIR=DIR              where passing files are remembered (default
#                                   ~/.cache/isolab/tidy; TIDY_CACHE_DIR= turns the cache off)
# Headers are checked through the files that include them (HeaderFilterRegex: orchestrator/).
# Most of clang-tidy's time goes into matching its checks over the system headers each file
# includes (the standard library, nlohmann/json, Boost), so a file that passed is not checked
# again while nothing it compiles from has changed: when BUILD_DIR has been built, ninja knows
# every header of each object, and the key of a file is the SHA-256 of clang-tidy's version,
# .clang-tidy, the build's compile options and the content of the file and all its headers.
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

if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'orchestrator/*.cc')
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

# keys: "<file> <key>" for every file whose headers ninja knows (none before the first build).
: >"$work/keys"
if [ -n "$cache" ] && [ -f "$build/.ninja_deps" ]; then
  mkdir -p "$cache"
  root="$(pwd)"
  salt="$({ clang-tidy --version; cat .clang-tidy; grep -E '^(CMAKE_BUILD_TYPE|CMAKE_CXX_FLAGS|ISOLAB_)[A-Z_]*:' "$build/CMakeCache.txt"; cat CMakeLists.txt; } | sha256sum | cut -c1-64)"
  # "<object>\t<header>" per dependency of every object built from orchestrator/.
  ninja -C "$build" -t deps 2>/dev/null | awk -v root="$root" -v b="$build" '
    /^[^ ].*: #deps / { obj = $1; sub(/:$/, "", obj); keep = obj ~ /\/orchestrator\/.*\.cc\.o$/; next }
    keep && NF        { d = $1; if (d !~ /^\//) d = root "/" b "/" d; print obj "\t" d }' >"$work/deps"
  cut -f2 "$work/deps" | sort -u | xargs -r sha256sum >"$work/hashes" 2>/dev/null || true
  # Paths inside the repository count by their name relative to it, so that another clone of
  # the same commit hits the cache too.
  awk -v root="$root/" -v salt="$salt" '
    FNR == NR { h = $1; p = $2; sub(root, "", p); hash[$2] = h " " p; next }
    { obj = $1; n = split(obj, part, "/orchestrator/"); src = "orchestrator/" part[n]; sub(/\.o$/, "", src)
      line[src] = line[src] "|" hash[$2] }
    END { for (s in line) print s, line[s] "|" salt }' "$work/hashes" "$work/deps" |
    while read -r src list; do
      printf '%s %s\n' "$src" "$(printf '%s' "$list" | tr '|' '\n' | sort | sha256sum | cut -c1-64)"
    done >"$work/keys"
fi

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
echo "tidy: ${#files[@]} files ($cached unchanged since they passed), $jobs at a time, flags from $db"

# One clang-tidy per file; a file that passes is remembered under its key. The compile database
# is GCC's: -Wno-unknown-warning-option lets clang-tidy's clang skip GCC-only flags such as
# -Wno-error=maybe-uninitialized instead of failing on them.
check_one() {
  local f="$1" log key
  log="$work/$(printf '%s' "$f" | tr '/' '_').log"
  if clang-tidy --quiet -p "$build" --extra-arg=-Wno-unknown-warning-option "$f" >"$log" 2>&1; then
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
