#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs missing packages, builds with warnings as errors
# under AddressSanitizer + UndefinedBehaviorSanitizer, runs every ctest test (unit tests, the
# conformance floors, the end-to-end example), then the fuzzers for a bounded time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"

build="$root/build-test"
echo "== build (warnings as errors, ASan + UBSan): $build"
# CI machines have the CUDA toolkit (and no GPU): there the CUDA provider is required, not just
# on by default, so a toolkit that stops being found fails the build instead of dropping it.
cuda=()
if [ -x /usr/local/cuda/bin/nvcc ]; then cuda=(-DPOLYINFER_CUDA=ON); fi
# -O1 with line tables only (-g1): ASan's reports keep file:line, and the build compiles ~40%
# faster than at RelWithDebInfo's -O2 -g (measured per file, e.g. onnx/import.cpp 35 -> 19 s,
# plan/op_support.cpp 36 -> 20 s). The build is most of CI's time.
"$root/tools/build.sh" "$build" -DPOLYINFER_WERROR=ON -DPOLYINFER_SANITIZE=ON "${cuda[@]}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"

echo "== tests"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j2 --timeout 1500

echo "== fuzzers (bounded)"
"$root/tools/fuzz.sh" --ci

echo "== tracked figure: newer ONNX backend test data (no floor yet)"
"$root/tools/conformance_newer.sh" "$build/polyinfer"
