#!/usr/bin/env bash
# The shape of orchestrator/, checked from the code (step "layers" of scripts/check-fast.sh):
#   - layering: a file of an area includes headers of its own area and of the areas before it
#     in CMakeLists.txt's isolab_area() order (the README's code map lists them in that order),
#     never of an area after it; the one declared exception is spec -> workload (spec/ reads
#     each workload tool's fields through the registry, CMakeLists.txt says why);
#   - size: no program source file (orchestrator/, tcg-plugin/, guest-tools/) over 800 lines:
#     a file that grows that far does two jobs.
# Usage: scripts/check-layers.sh   (from anywhere in the repository)
# Exits 0 when both hold, else 1 after printing every include and every file that breaks them.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t areas < <(sed -n 's/^isolab_area(\([a-z_]*\).*/\1/p' CMakeLists.txt)
declare -A rank
for i in "${!areas[@]}"; do rank[${areas[$i]}]=$i; done
allowed_up="spec->workload"

bad=0
for area in "${areas[@]}"; do
  while IFS=: read -r file target; do
    used=${target%%/*}
    [ -n "${rank[$used]:-}" ] || continue
    if ((rank[$used] > rank[$area])) && [ "$area->$used" != "$allowed_up" ]; then
      echo "check-layers: $file includes $target: area $used comes after $area in CMakeLists.txt" >&2
      bad=1
    fi
  done < <(grep -rHo '^#include "[a-z_]*/[^"]*"' "orchestrator/$area" | sed 's/#include "\(.*\)"/\1/')
done

while read -r lines file; do
  [ "$file" = total ] && continue
  if ((lines > 800)); then
    echo "check-layers: $file has $lines lines, more than 800: split it by concern" >&2
    bad=1
  fi
done < <(git ls-files 'orchestrator/*' 'tcg-plugin/*' 'guest-tools/*' | grep -E '\.(c|cc|h)$' |
  xargs wc -l)

if ((bad)); then exit 1; fi
echo "check-layers: ${#areas[@]} areas in order, no file over 800 lines"
