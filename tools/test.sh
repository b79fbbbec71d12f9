#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs missing packages, builds with warnings as errors
# under AddressSanitizer + UndefinedBehaviorSanitizer, runs every ctest test (unit tests, the
# conformance floors, the end-to-end example), then the fuzzers for a bounded number of runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
# Each step's start in seconds since the script began: a slow CI run shows where its time went.
step() { echo "== $* [at ${SECONDS}s]"; }

# The tree's shape first: they take seconds and fail with the fix named.
step "format (.clang-format, 100 columns) and layering (docs/design.md)"
"$root/tools/check_format.sh"
python3 "$root/tools/check_layers.py"

# The Python package's extension is built in the same tree (its tests preload the sanitizer
# runtime into python): nanobind and pytest come from the pinned venv.
step "python venv (tools/requirements.txt)"
"$root/tools/pyenv.sh"
# `polyinfer serve`'s client tests run tritonclient from a venv of its own (its ml_dtypes pin).
POLYINFER_VENV="$root/.venv-serve" \
  POLYINFER_REQUIREMENTS="$root/tests/python/requirements-serve.txt" "$root/tools/pyenv.sh"
# The Ray Data example (examples/python/ray_classify.py) runs from a venv of its own too: Ray's
# pyarrow, pandas and protobuf are pinned by none of the others.
POLYINFER_VENV="$root/.venv-ray" \
  POLYINFER_REQUIREMENTS="$root/examples/python/requirements-ray.txt" "$root/tools/pyenv.sh"

# One clang build serves the tests and the fuzzers: the library carries libFuzzer's coverage
# instrumentation beside the sanitizers, so CI compiles it once instead of once per compiler.
# (Developers' own builds use g++, with -DPOLYINFER_WERROR=ON, so both compilers' warnings are
# seen.) The folder name changed with the compiler: CMake cannot switch one in place.
build="$root/build-check"
step "build (clang, warnings as errors, ASan + UBSan, fuzz targets): $build"
# CI machines have the CUDA toolkit (and no GPU): there the CUDA provider is required, not just
# on by default, so a toolkit that stops being found fails the build instead of dropping it.
cuda=()
if [ -x /usr/local/cuda/bin/nvcc ]; then cuda=(-DPOLYINFER_CUDA=ON); fi
# -O1 with line tables only: reports keep file:line, and the library compiles in about half the
# time of -O2 -g (the tests are built at -O0, tests/CMakeLists.txt). At -O1 clang's loop
# vectorizer does not run, so every `#pragma omp simd` loop would warn that it was not
# vectorized (-Wpass-failed): true of this build, and no news about the code.
CC=${CC:-clang} CXX=${CXX:-clang++} "$root/tools/build.sh" "$build" -DPOLYINFER_WERROR=ON \
  -DPOLYINFER_SANITIZE=ON -DPOLYINFER_FUZZ=ON "${cuda[@]}" \
  -DPOLYINFER_PYTHON=ON "-DPython_EXECUTABLE=$root/.venv/bin/python" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG -Wno-pass-failed"

step tests
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
# PoCL's compiler state, which it never frees (tools/lsan.supp says why).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tools/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j2 --timeout 1500

step "fuzzers (bounded)"
"$root/tools/fuzz.sh" --ci "$build"

step "done"
