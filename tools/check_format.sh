#!/usr/bin/env bash
# Checks the tree's format: C++ sources as .clang-format says (clang-format 14, Debian 12's), and
# every line of the sources and scripts at most 100 columns. Prints what is off and how to
# fix it; exit status 1 if anything is.
#   tools/check_format.sh         # check
#   tools/check_format.sh --fix   # rewrite the C++ files in place
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "check_format: clang-format is missing (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -t cpp < <(git ls-files -- '*.c' '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^tests/data/')
if [ "${1:-}" = "--fix" ]; then
  "$cf" -i "${cpp[@]}"
  exit 0
fi
status=0
if ! "$cf" --dry-run -Werror "${cpp[@]}" 2>/tmp/check_format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/check_format.$$ | sed -E 's/:[0-9]+:[0-9]+: .*//' |
    sort -u | head -40
  echo "check_format: the files above differ from .clang-format;" \
       "run tools/check_format.sh --fix" >&2
  status=1
fi
rm -f /tmp/check_format.$$
# Line length in characters (not bytes: comments hold arrows and dots) of the C++ sources,
# shaders, scripts and CMake files; docs are prose and tables, not checked.
long=$(git ls-files -- '*.c' '*.cpp' '*.h' '*.cu' '*.cuh' '*.comp' '*.glsl' '*.py' '*.sh' \
         '*.cmake' 'CMakeLists.txt' | grep -v '^tests/data/' | python3 -c '
import sys
for name in sys.stdin.read().split():
    for number, line in enumerate(open(name, encoding="utf-8"), 1):
        if len(line.rstrip("\n")) > 100:
            print(f"{name}:{number}: {len(line.rstrip())} columns")
' | head -40)
if [ -n "$long" ]; then
  echo "$long"
  echo "check_format: lines over 100 columns above; wrap them" >&2
  status=1
fi
exit $status
