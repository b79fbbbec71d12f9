#!/usr/bin/env bash
# The OpenCL provider through the CLI: `providers` lists it (usable with its device and memory
# mode, or not usable with the probe's reason); the digits CNN runs every node on opencl, strict,
# in both memory modes; a model with an op opencl lacks fails strict with the reason and runs
# with `opencl,cpu`; the kernel cache: a first run writes program binaries, a second run reads
# them and compiles nothing (no file is rewritten); with no OpenCL driver (OCL_ICD_VENDORS
# pointing nowhere) `providers`, `run` and `doctor` give one reason.
# Args: polyinfer CLI, digits example folder.
set -u
pi=$1
digits=$2
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

line=$("$pi" providers 2>&1 | grep ' opencl ')
if [ -z "$line" ]; then
  echo "skip: the opencl provider is not in this build"; exit 0
fi
echo "providers: $line"
if [[ $line == "✓"* ]]; then
  [[ $line == *"(opencl:"* ]] || fail "providers: no device in '$line'"
  [[ $line == *"memory: "*"("* ]] || fail "providers: no memory mode in '$line'"
  forced=$(POLYINFER_OPENCL_MEMORY=device "$pi" providers 2>&1 | grep ' opencl ')
  [[ $forced == *"memory: device (forced by POLYINFER_OPENCL_MEMORY=device"* ]] ||
    fail "providers with POLYINFER_OPENCL_MEMORY=device: '$forced'"
  bad=$(POLYINFER_OPENCL_MEMORY=vram "$pi" providers 2>&1 | grep ' opencl ')
  [[ $bad == "✗"*"POLYINFER_OPENCL_MEMORY=vram is not one of auto, mapped, device"* ]] ||
    fail "providers with POLYINFER_OPENCL_MEMORY=vram: '$bad'"

  # The kernel cache, in a cache folder of its own.
  export XDG_CACHE_HOME=$tmp/cache
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"placement: opencl 6/6 nodes"* ]]; } ||
    fail "run digits --providers opencl: exit $rc: $out"
  n=$(find "$tmp/cache/polyinfer/opencl" -name '*.bin' 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || fail "the first run cached no program binary in $tmp/cache/polyinfer/opencl"
  touch "$tmp/marker"
  sleep 1
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl 2>&1); rc=$?
  [ $rc -eq 0 ] || fail "second run digits --providers opencl: exit $rc: $out"
  rewritten=$(find "$tmp/cache/polyinfer/opencl" -newer "$tmp/marker" | wc -l)
  [ "$rewritten" -eq 0 ] || fail "the second run compiled again: $rewritten cache files rewritten"
  [ "$(find "$tmp/cache/polyinfer/opencl" -name '*.bin' | wc -l)" -eq "$n" ] ||
    fail "the second run added cache files"
  # POLYINFER_OPENCL_CACHE=off: nothing is read or written.
  XDG_CACHE_HOME=$tmp/nocache POLYINFER_OPENCL_CACHE=off \
    "$pi" run "$digits/digits_cnn.onnx" --providers opencl >/dev/null 2>&1 ||
    fail "run with POLYINFER_OPENCL_CACHE=off"
  [ ! -e "$tmp/nocache/polyinfer/opencl" ] || fail "POLYINFER_OPENCL_CACHE=off wrote a cache"
  unset XDG_CACHE_HOME

  out=$(POLYINFER_OPENCL_MEMORY=device "$pi" run "$digits/digits_cnn.onnx" --providers opencl \
    2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"placement: opencl 6/6 nodes"* ]]; } ||
    fail "run digits --providers opencl with device memory: exit $rc: $out"
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl:0 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"placement: opencl:0 6/6 nodes"* ]]; } ||
    fail "run digits --providers opencl:0: exit $rc: $out"
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl:7,cpu 2>&1); rc=$?
  { [ $rc -ne 0 ] && [[ $out == *"opencl:7 names no device"*"opencl:0 "* ]]; } ||
    fail "run --providers opencl:7,cpu: exit $rc: $out"
  # --precision fp16: float16 kernels on every device (storage only), every node on opencl.
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl --precision fp16 --json 2>&1)
  rc=$?
  { [ $rc -eq 0 ] && [[ $out == *'"precision": "fp16"'* ]]; } ||
    fail "run digits --precision fp16 on opencl: exit $rc: $out"
  # A model written at level 3 has the CPU's channels-last operators: strict fails naming the
  # op, with cpu after it they fall back with the reason.
  "$pi" optimize "$digits/digits_cnn.onnx" -o "$tmp/d3.onnx" --level 3 >/dev/null 2>&1 ||
    fail "optimize --level 3"
  out=$("$pi" run "$tmp/d3.onnx" --providers opencl 2>&1); rc=$?
  { [ $rc -ne 0 ] && [[ $out == *"NhwcFusedConv"* ]]; } ||
    fail "run a level-3 model --providers opencl: exit $rc: $out"
  out=$("$pi" run "$tmp/d3.onnx" --providers opencl,cpu 2>&1); rc=$?
  no_kernel="(opencl: no opencl kernel for ai.polyinfer.NhwcFusedConv)"
  { [ $rc -eq 0 ] && [[ $out == *"NhwcFusedConv"*"$no_kernel"* ]]; } ||
    fail "run a level-3 model --providers opencl,cpu: exit $rc: $out"
else
  echo "opencl is not usable here; checking the reason only"
fi

# No driver: the same reason from providers, run and doctor.
export OCL_ICD_VENDORS=/nonexistent/polyinfer_vendors OCL_ICD_FILENAMES=
line=$("$pi" providers 2>&1 | grep ' opencl ')
reason=${line#*kernels): }
{ [[ $line == "✗"* ]] && [ -n "$reason" ]; } || fail "providers without a driver: '$line'"
out=$("$pi" run "$digits/digits_cnn.onnx" --providers opencl 2>&1); rc=$?
{ [ $rc -ne 0 ] && [[ $out == *"$reason"* ]]; } || fail "run without a driver: exit $rc: $out"
"$pi" doctor 2>&1 | grep -qF "$reason" || fail "doctor does not give the reason '$reason'"

[ $failures -eq 0 ] && echo "opencl_cli: all checks passed"
exit $((failures > 0))
