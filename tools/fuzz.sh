#!/usr/bin/env bash
# Runs the libFuzzer targets:
#   tools/fuzz.sh SECONDS      builds them with clang at -O1 (libFuzzer's documented level) in
#                              build-fuzz/, then explores for SECONDS per target (random seed):
#                              for developers
#   tools/fuzz.sh --ci BUILD   runs the targets tools/test.sh built beside the tests with a fixed
#                              seed and a fixed number of runs, so CI is deterministic: a crash it
#                              finds is found on every machine, and new ones come from developers'
#                              longer runs (add each crash input under tests/data/fuzz/)
# Seeds come from the ONNX test data (models and .pb tensors), the committed examples and
# tests/data/images (the image decoders).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-60}
if [ "$mode" = "--ci" ]; then
  usage="usage: tools/fuzz.sh --ci BUILD_DIR "
  usage+="(a build with -DPOLYINFER_FUZZ=ON, as tools/test.sh makes)"
  build=${2:?"$usage"}
else
  build="$root/build-fuzz"
  # Only the fuzz targets (and the library under them), not the CLI and benchmarks. Line tables
  # only: reports keep file:line. Without the CUDA plugin: the fuzzers never reach it.
  targets=$(cd "$root/tests/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//' | tr '\n' ' ')
  CXX=clang++ POLYINFER_TARGETS="$targets" "$root/tools/build.sh" "$build" -DPOLYINFER_FUZZ=ON \
    -DPOLYINFER_TESTS=OFF -DPOLYINFER_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
fi

data=/usr/share/libonnx-testdata/data
corpus="$build/corpus"
rm -rf "$corpus"
mkdir -p "$corpus/model" "$corpus/tensor_pb" "$corpus/npy"
# Small seeds only: big models make each fuzz iteration slow. (No pipefail here: head closes
# the pipe early on purpose.)
set +o pipefail
find "$data/node" -name model.onnx -size -4k | sort | head -200 | while read -r f; do
  cp "$f" "$corpus/model/$(echo "$f" | md5sum | cut -c1-12)"; done
find "$data/node" -name 'input_0.pb' -size -2k | sort | head -200 | while read -r f; do
  cp "$f" "$corpus/tensor_pb/$(echo "$f" | md5sum | cut -c1-12)"; done
find "$root/examples" "$root/tests" -name '*.npy' -size -64k 2>/dev/null | while read -r f; do
  cp "$f" "$corpus/npy/$(basename "$f")"; done
cp "$root"/tests/data/fuzz/model_* "$corpus/model/" 2>/dev/null
mkdir -p "$corpus/infer_request"
cp "$root"/tests/data/fuzz/infer_request_* "$corpus/infer_request/"
mkdir -p "$corpus/grpc_request"
cp "$root"/tests/data/fuzz/grpc_request_* "$corpus/grpc_request/"
mkdir -p "$corpus/image"
cp "$root"/tests/data/images/*.{bmp,jpg,jp2,j2k,png,ppm,tif,webp} "$corpus/image/"
set -o pipefail

export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
status=0
# Every target in tests/fuzz must have been built: one missing fails, it is not skipped.
for src in "$root"/tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp); fuzzer="$build/tests/fuzz/$name"; seeds="$corpus/${name#fuzz_}"
  if [ ! -x "$fuzzer" ]; then
    echo "fuzz $name: FAILED (no $fuzzer: configure $build with -DPOLYINFER_FUZZ=ON and clang)"
    status=1; continue
  fi
  mkdir -p "$seeds"
  if [ "$mode" = "--ci" ]; then
    budget=(-seed=1 -runs=30000)
  else
    budget=(-max_total_time="$mode")
  fi
  if "$fuzzer" "${budget[@]}" -max_len=65536 -rss_limit_mb=4096 -timeout=10 \
       -print_final_stats=1 "$seeds" >"$build/$name.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
      "$build/$name.log" | grep -o '[0-9]*$') runs)"
  else
    echo "fuzz $name: FAILED"; tail -n 40 "$build/$name.log"; status=1
  fi
done
exit $status
