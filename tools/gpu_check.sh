#!/usr/bin/env bash
# tools/gpu_check.sh — everything the CUDA provider needs checked on a real NVIDIA GPU, in one go
# (docs/cuda.md). Written for a session that gets an H200 for a few minutes: it builds, then
# runs the checks most valuable first, each under its own time limit, and writes every log and a
# summary under $OUT (default out/gpu-check), so a run cut short still leaves what it found.
#
#   tools/gpu_check.sh                   # about 6-8 minutes on 16 cores
#   OUT=/tmp/x GPU_CHECK_JOBS=8 tools/gpu_check.sh
#   POLYINFER_BENCH_MODELS=DIR tools/gpu_check.sh   # where resnet50/mobilenet_v2/bert_base.onnx are
#
# Steps (summary.txt has one line each: name, exit code, seconds):
#   env          nvidia-smi, nvcc, cmake versions
#   configure    Release build in build-gpu/ with the CUDA provider ON and -Werror
#   build        polyinfer CLI, the plugin and unit_tests only
#   providers    `providers` (+ --json): cuda must be ✓ with its device
#   doctor       `doctor` (+ --json)
#   monitor      `monitor --count 3`
#   unit_<suite> each Cuda* gtest suite in its own process (the oracle tests against cpu-ref),
#                JUnit XML; then the kernel suites under compute-sanitizer memcheck if present.
#                The cuDNN tuning cache is written to $OUT/cuda-conv-tuning.json
#   cuda_cli     tests/e2e/cuda_cli.sh (strict run fails naming an op; cuda,cpu runs)
#   conformance  ONNX node tests of the ops cuda has, --providers cuda,cpu, against the expected
#                failures; then the `simple` and `pytorch-operator` folders with their floors
#   models       each bench model present: `run --providers cuda,cpu` (placement line) at fp32,
#                fp16 and bf16 and, with python3+numpy, the largest difference from the cpu fp32
#                run's outputs; `bench` on cuda,cpu at the three precisions, with
#                --capture-graph (CUDA Graphs) at fp32 and fp16, at fp32 with --tf32, and
#                on cpu; and, when
#                the machine has the Vulkan headers and glslang and `providers` shows vulkan
#                usable (the NVIDIA driver's ICD), `bench --providers vulkan` at fp32 and at
#                --precision fp16 (issue 6's GPU benchmark); likewise `--providers opencl`
#                when `providers` shows opencl usable on a GPU (the NVIDIA driver's OpenCL ICD)
#   int8         resnet50 and mobilenet_v2 quantized (`quantize --per-channel`): run on
#                cuda,cpu against cpu, `bench` on cuda (and with --capture-graph) and on cpu
#   batch 32     NAME_b32.onnx when present (bench/export_models.py --batch 32): `bench` on
#                cuda,cpu at fp32 and fp16
# Exit status: the number of failed steps (0 = all passed).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${OUT:-$root/out/gpu-check}
mkdir -p "$out"
build=${GPU_CHECK_BUILD:-$root/build-gpu}
jobs=${GPU_CHECK_JOBS:-$(nproc)}
models=${POLYINFER_BENCH_MODELS:-$root/bench/models}
testdata=/usr/share/libonnx-testdata/data
pi=$build/polyinfer
summary=$out/summary.txt
: >"$summary"
failed=0
start_all=$(date +%s)

# step NAME TIMEOUT_S CMD...: runs CMD with its output in $out/NAME.log and one summary line.
step() {
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s)
  echo "== $name ($(date -u +%T), limit ${limit}s): $*" | tee -a "$out/steps.log"
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local secs=$(($(date +%s) - t0))
  [ $rc -ne 0 ] && failed=$((failed + 1))
  printf '%-24s rc=%-4s %4ss%s\n' "$name" "$rc" "$secs" "$([ $rc -eq 124 ] && echo ' TIMED OUT')" |
    tee -a "$summary"
  tail -n 5 "$out/$name.log" | sed 's/^/    /'
  return $rc
}

{
  echo "commit: $(git rev-parse HEAD 2>/dev/null)" \
    "$(git status --porcelain 2>/dev/null | wc -l) files changed"
  echo "date: $(date -u)"
  command -v nvidia-smi >/dev/null && nvidia-smi || echo "nvidia-smi: not found"
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -n 2
  cmake --version | head -n 1
  echo "cores: $(nproc)"
} >"$out/env.log" 2>&1
echo "env: see env.log" >>"$summary"

# Release: the bench numbers mean something; -Werror: the build must be as clean as CI's.
# GPU_CHECK_NO_CONFIGURE=1 uses $build as it is (a dry run of the script on a machine without
# a GPU: GPU_CHECK_BUILD=build GPU_CHECK_NO_CONFIGURE=1 tools/gpu_check.sh).
# The Vulkan provider too where it can be built (vulkan/vulkan.h and glslangValidator): the
# same GPU through the cross-vendor path, benchmarked beside cuda.
vulkan=OFF
if [ -f /usr/include/vulkan/vulkan.h ] && command -v glslangValidator >/dev/null; then vulkan=ON; fi
echo "vulkan provider in the build: $vulkan" | tee -a "$summary"
# The OpenCL provider where its headers are (it opens libOpenCL itself; NVIDIA's driver ships an
# OpenCL ICD, so the same GPU runs it too).
opencl=OFF
if [ -f /usr/include/CL/cl.h ]; then opencl=ON; fi
echo "opencl provider in the build: $opencl" | tee -a "$summary"
[ "${GPU_CHECK_NO_CONFIGURE:-0}" = 1 ] ||
  step configure 180 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPOLYINFER_WERROR=ON -DPOLYINFER_CUDA=ON -DPOLYINFER_BENCH=OFF -DPOLYINFER_VULKAN=$vulkan \
    -DPOLYINFER_OPENCL=$opencl ||
  { echo "configure failed: see $out/configure.log"; exit 1; }
step build 330 ninja -C "$build" -j"$jobs" polyinfer_cli polyinfer_cuda unit_tests ||
  { echo "build failed: see $out/build.log"; exit 1; }

step providers 60 bash -c "'$pi' providers && '$pi' providers --json >'$out/providers.json'"
grep -q '✓ cuda' "$out/providers.log" ||
  echo "    (cuda is NOT usable: every later GPU check will skip)"
step doctor 60 bash -c "'$pi' doctor && '$pi' doctor --json >'$out/doctor.json'"
step monitor 30 "$pi" monitor --count 3 --interval 500

# One process per suite: a kernel that crashes the process loses only its own suite's results.
# The convolution tuning cache goes to its own file under $OUT (kept: it shows what was timed);
# TuningCache is its no-GPU bookkeeping.
export POLYINFER_CUDA_TUNING_CACHE="$out/cuda-conv-tuning.json"
for suite in CudaLoader CudaPlugin CudaBlockCache TuningCache CudaProvider CudaElementwise \
             CudaSoftmax CudaMatMul CudaGemm CudaConv CudaPool CudaLayerNorm CudaBatchNorm \
             CudaLayout CudaReduce CudaResize CudaPrecision CudaCapture GraphCapture CudaWhere \
             CudaPad CudaInt8; do
  step "unit_$suite" 120 "$build/tests/unit_tests" --gtest_filter="$suite.*" \
    --gtest_output="xml:$out/unit_$suite.xml"
done
# The parameterized int8 suites (Shapes/CudaInt8Conv.*, Shapes/CudaInt8MatMul.*).
step unit_CudaInt8Shapes 120 "$build/tests/unit_tests" --gtest_filter='Shapes/CudaInt8*' \
  --gtest_output="xml:$out/unit_CudaInt8Shapes.xml"
# On a GPU only the two no-GPU tests may skip; any other skip is a check that did not happen.
skips=$(cat "$out"/unit_Cuda*.log | grep -c '^\[  SKIPPED \] Cuda.*ms)' || true)
echo "unit tests skipped: $skips (on a GPU expect 2: the two tests for machines without one)" |
  tee -a "$summary"
# Out-of-bounds and race checks of the kernels, when the toolkit has compute-sanitizer.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$sanitizer" ]; then
  memcheck_filter='CudaElementwise.*:CudaSoftmax.*:CudaMatMul.*:CudaGemm.*:CudaProvider.Tensor*:'
  memcheck_filter+='CudaPool.*:CudaLayerNorm.*:CudaBatchNorm.*:CudaLayout.*:CudaReduce.*:'
  memcheck_filter+='CudaResize.*:CudaPrecision.*:CudaCapture.*:CudaWhere.*:CudaPad.*:CudaInt8.*:'
  memcheck_filter+='Shapes/CudaInt8*'
  step unit_memcheck 200 "$sanitizer" --tool memcheck --error-exitcode 1 \
    "$build/tests/unit_tests" --gtest_filter="$memcheck_filter"
  # cuDNN's own kernels are slow under memcheck: the convolutions get a suite of their own.
  step unit_memcheck_conv 200 "$sanitizer" --tool memcheck --error-exitcode 1 \
    "$build/tests/unit_tests" --gtest_filter='CudaConv.*'
else
  echo "unit_memcheck: no compute-sanitizer in this toolkit (skipped)" | tee -a "$summary"
fi
step cuda_cli 90 tests/e2e/cuda_cli.sh "$pi" "$root/examples/digits"

# Each model: placement and outputs on cuda,cpu against cpu, then latency on both.
compare_py='
import sys, glob, os, numpy as np
a, b = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(os.path.join(a, "*.npy"))):
    x = np.load(f).astype(np.float64)
    y = np.load(os.path.join(b, os.path.basename(f))).astype(np.float64)
    d = np.abs(x - y).max() if x.size else 0.0
    print(f"{os.path.basename(f)}: shape {x.shape}, max |cuda - cpu| {d:.3g}, "
          f"max |cpu| {np.abs(x).max():.3g}")
'
# One worker process runs the tests (one CUDA context for the run), and a crash costs only the
# test that caused it: a new worker takes the rest.
ops='cast|add|sub|mul|div|pow|max|min|relu|leakyrelu|sigmoid|tanh|exp|log|neg|abs|sqrt|'
ops+='reciprocal|erf|hardsigmoid|hardswish|gelu|softmax|logsoftmax|matmul|gemm|conv|maxpool|'
ops+='averagepool|globalaveragepool|globalmaxpool|batchnorm|layer_normalization|transpose|concat|'
ops+='slice|split|gather|reshape|flatten|squeeze|unsqueeze|identity|reduce_sum|reduce_mean|'
ops+='reduce_max|reduce_min|resize|expand|pad|where|quantizelinear|dequantizelinear|qlinearconv|'
ops+='qlinearmatmul'
if [ -d "$testdata/node" ]; then
  step conformance_node_cuda_ops 150 "$pi" conformance "$testdata/node" --providers cuda,cpu \
    --filter "^test_($ops)(_|\$)" --expect tests/conformance/expected_failures.txt --json
  step conformance_simple_cuda 90 "$pi" conformance "$testdata/simple" --providers cuda,cpu \
    --expect tests/conformance/expected_failures.txt --min-passed 21 --quiet
  step conformance_pytorch_operator_cuda 90 "$pi" conformance "$testdata/pytorch-operator" \
    --providers cuda,cpu --expect tests/conformance/expected_failures.txt \
    --min-passed 35 --quiet
else
  echo "conformance: $testdata not installed (skipped)" | tee -a "$summary"
fi

for m in resnet50 mobilenet_v2 bert_base; do
  f=$models/$m.onnx
  if [ ! -f "$f" ]; then
    echo "model_$m: not present in $models (skipped)" | tee -a "$summary"
    continue
  fi
  # Inputs not given are seeded random data, the same in every run. MobileNetV2's random-weight
  # logits (~1e-9) underflow float16: read its fp16 difference as that.
  step "model_${m}_cpu" 120 "$pi" run "$f" --providers cpu -o "$out/$m.cpu"
  step "model_${m}_cuda" 120 "$pi" run "$f" --providers cuda,cpu -o "$out/$m.cuda"
  if python3 -c 'import numpy' 2>/dev/null; then
    python3 -c "$compare_py" "$out/$m.cpu" "$out/$m.cuda" >"$out/model_${m}_diff.log" 2>&1
    sed "s/^/model_${m}_diff: /" "$out/model_${m}_diff.log" | tee -a "$summary"
  fi
  for p in fp16 bf16; do
    step "model_${m}_cuda_$p" 120 "$pi" run "$f" --providers cuda,cpu --precision $p \
      -o "$out/$m.cuda_$p"
    if python3 -c 'import numpy' 2>/dev/null; then
      python3 -c "$compare_py" "$out/$m.cpu" "$out/$m.cuda_$p" >"$out/model_${m}_diff_$p.log" 2>&1
      sed "s/^/model_${m}_diff_$p: /" "$out/model_${m}_diff_$p.log" | tee -a "$summary"
    fi
  done
  step "bench_${m}_cuda" 90 "$pi" bench "$f" --providers cuda,cpu --duration 5 --json
  step "bench_${m}_cuda_fp16" 90 "$pi" bench "$f" --providers cuda,cpu --precision fp16 \
    --duration 5 --json
  # CUDA Graphs: strict --providers cuda (capture needs every node there); the JSON's
  # placement.graph_capture says whether it replayed, or why not.
  step "bench_${m}_cuda_graph" 90 "$pi" bench "$f" --providers cuda --capture-graph \
    --duration 5 --json
  step "bench_${m}_cuda_graph_fp16" 90 "$pi" bench "$f" --providers cuda --capture-graph \
    --precision fp16 --duration 5 --json
  # TF32 (--tf32): float32 storage, Tensor Core products; what ORT's CUDA provider does by default.
  step "bench_${m}_cuda_tf32" 90 "$pi" bench "$f" --providers cuda,cpu --tf32 --duration 5 --json
  step "bench_${m}_cuda_bf16" 90 "$pi" bench "$f" --providers cuda,cpu --precision bf16 \
    --duration 5 --json
  step "bench_${m}_cpu" 90 "$pi" bench "$f" --providers cpu --duration 5 --json
  if grep -q '✓ vulkan' "$out/providers.log"; then
    step "bench_${m}_vulkan" 120 "$pi" bench "$f" --providers vulkan --duration 5 --json
    step "bench_${m}_vulkan_fp16" 120 "$pi" bench "$f" --providers vulkan --precision fp16 \
      --duration 5 --json
  fi
  if grep -q '✓ opencl.*(gpu)' "$out/providers.log"; then
    step "bench_${m}_opencl" 120 "$pi" bench "$f" --providers opencl --duration 5 --json
    step "bench_${m}_opencl_fp16" 120 "$pi" bench "$f" --providers opencl --precision fp16 \
      --duration 5 --json
  fi
done

# Int8 (QDQ, per-channel weights) on cuda: `polyinfer quantize` calibrates on the model's input
# (runs on the CPU), then the placement on cuda,cpu and the largest difference from the cpu
# int8 run, and `bench` on cuda (fuse-qdq's QLinearConv/QLinearMatMul: cuBLASLt int8) and cpu.
for m in resnet50 mobilenet_v2; do
  f=$models/$m.onnx
  if [ ! -f "$f" ] || [ ! -f "$models/$m.input.npy" ]; then
    echo "int8_$m: $m.onnx or $m.input.npy not present in $models (skipped)" | tee -a "$summary"
    continue
  fi
  q=$out/${m}_int8.onnx
  step "int8_${m}_quantize" 180 "$pi" quantize "$f" -o "$q" --calibration "$models/$m.input.npy" \
    --per-channel || continue
  step "int8_${m}_cpu" 120 "$pi" run "$q" -i "input=$models/$m.input.npy" --providers cpu \
    -o "$out/${m}_int8.cpu"
  step "int8_${m}_cuda" 120 "$pi" run "$q" -i "input=$models/$m.input.npy" --providers cuda,cpu \
    -o "$out/${m}_int8.cuda"
  if python3 -c 'import numpy' 2>/dev/null; then
    python3 -c "$compare_py" "$out/${m}_int8.cpu" "$out/${m}_int8.cuda" \
      >"$out/int8_${m}_diff.log" 2>&1
    sed "s/^/int8_${m}_diff: /" "$out/int8_${m}_diff.log" | tee -a "$summary"
  fi
  step "bench_${m}_int8_cuda" 90 "$pi" bench "$q" --providers cuda,cpu --duration 5 --json
  step "bench_${m}_int8_cuda_graph" 90 "$pi" bench "$q" --providers cuda --capture-graph \
    --duration 5 --json
  step "bench_${m}_int8_cpu" 90 "$pi" bench "$q" --providers cpu --duration 5 --json
done

# Batch 32 (bench/export_models.py --batch 32 writes NAME_b32.onnx): throughput on cuda at fp32
# and fp16, last because it matters least if time runs out.
for m in resnet50_b32 mobilenet_v2_b32 bert_base_b32; do
  f=$models/$m.onnx
  if [ ! -f "$f" ]; then
    echo "bench_$m: not present in $models (skipped)" | tee -a "$summary"
    continue
  fi
  step "bench_${m}_cuda" 90 "$pi" bench "$f" --providers cuda,cpu --duration 3 --json
  step "bench_${m}_cuda_fp16" 90 "$pi" bench "$f" --providers cuda,cpu --precision fp16 \
    --duration 3 --json
done

echo "total: $(($(date +%s) - start_all))s, failed steps: $failed" | tee -a "$summary"
exit $failed
