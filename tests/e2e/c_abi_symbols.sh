#!/usr/bin/env bash
# Every function include/polyinfer/c_api.h declares is exported by the library with its ELF
# symbol version (src/api/c_api.map), and nothing else is exported in that version.
# Usage: c_abi_symbols.sh LIBPOLYINFER.so C_API_H
set -euo pipefail
lib=$1 header=$2
declared=$(grep -oE '\bpi_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
exported=$(objdump -T "$lib" | awk '$NF ~ /^pi_/ && $(NF-1) == "POLYINFER_1" {print $NF}' | sort -u)
status=0
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
if [[ -n $missing ]]; then
  echo "declared in c_api.h but not exported as POLYINFER_1: $missing" >&2
  status=1
fi
if [[ -n $extra ]]; then
  echo "exported as POLYINFER_1 but not declared in c_api.h: $extra" >&2
  status=1
fi
n=$(echo "$declared" | wc -l)
((status == 0)) && echo "c_abi_symbols: all $n C API functions exported as POLYINFER_1"
exit $status
