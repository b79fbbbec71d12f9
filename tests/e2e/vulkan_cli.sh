#!/usr/bin/env bash
# The Vulkan provider through the CLI: `providers` lists it (usable with its device name, or not
# usable with the probe's reason); `run --providers vulkan` on a model with ops it lacks fails
# with the reason (strict, no silent CPU run) and `--providers vulkan,cpu` runs; with no working
# Vulkan driver (VK_ICD_FILENAMES pointing nowhere) both `providers` and `run` give doctor's text.
# The digits CNN runs entirely on vulkan (every one of its operators has a Vulkan kernel); the
# tiny decoder (float16 layers: its float16 ReduceMean and Softmax have no float16 Vulkan kernels)
# is the model vulkan cannot run alone.
# Args: polyinfer CLI, digits example folder, the tiny decoder model.
set -u
pi=$1
digits=$2
decoder=$3
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

line=$("$pi" providers 2>&1 | grep ' vulkan ')
if [ -z "$line" ]; then
  echo "skip: the vulkan provider is not in this build"; exit 0
fi
echo "providers: $line"
if [[ $line == "✓"* ]]; then
  [[ $line == *"vulkan:0"* ]] || fail "providers: no device in '$line'"
  # The memory mode and why; POLYINFER_VULKAN_MEMORY forces one, another value is the reason.
  [[ $line == *"memory: "*"("* ]] || fail "providers: no memory mode in '$line'"
  forced=$(POLYINFER_VULKAN_MEMORY=device "$pi" providers 2>&1 | grep ' vulkan ')
  [[ $forced == *"memory: device (forced by POLYINFER_VULKAN_MEMORY=device"* ]] ||
    fail "providers with POLYINFER_VULKAN_MEMORY=device: '$forced'"
  out=$(POLYINFER_VULKAN_MEMORY=device "$pi" run "$digits/digits_cnn.onnx" --providers vulkan 2>&1)
  rc=$?
  [ $rc -eq 0 ] || fail "run digits --providers vulkan with device memory: exit $rc: $out"
  bad=$(POLYINFER_VULKAN_MEMORY=vram "$pi" providers 2>&1 | grep ' vulkan ')
  [[ $bad == "✗"*"POLYINFER_VULKAN_MEMORY=vram is not one of auto, mapped, device"* ]] ||
    fail "providers with POLYINFER_VULKAN_MEMORY=vram: '$bad'"
  out=$("$pi" run "$decoder" --providers vulkan 2>&1); rc=$?
  f16_reason="dtype float16 (the Vulkan "
  f32_only=" kernels are float32 only)"
  { [ $rc -ne 0 ] &&
    [[ $out == *"no provider can run"*"vulkan: "*"$f16_reason"*"$f32_only"* ]]; } ||
    fail "run --providers vulkan: exit $rc: $out"
  out=$("$pi" run "$decoder" --providers vulkan,cpu 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"fallback:"*"(vulkan: "*"dtype float16"* ]]; } ||
    fail "run --providers vulkan,cpu: exit $rc: $out"
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"placement: vulkan 6/6 nodes"* ]]; } ||
    fail "run digits --providers vulkan: exit $rc: $out"
  # --precision fp16: float16 kernels where the device has 16-bit storage, every node on vulkan
  # (the border Casts too); where it has none, the float16 nodes fall back with the reason.
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan,cpu --precision fp16 --json \
    2>&1); rc=$?
  if [[ $line == *"16-bit storage"* ]]; then
    { [ $rc -eq 0 ] && [[ $out == *'"precision": "fp16"'* ]] &&
      [[ $out == *'"fallbacks": []'* ]]; } ||
      fail "run digits --precision fp16 on vulkan: exit $rc: $out"
  else
    { [ $rc -eq 0 ] && [[ $out == *'"precision": "fp16"'* ]]; } ||
      fail "run digits --precision fp16 without 16-bit storage: exit $rc: $out"
  fi
  # --precision bf16: the Vulkan kernels have no bfloat16 variants, so they refuse the bfloat16
  # nodes at creation and those run on cpu, with the reason.
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan,cpu --precision bf16 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"fallback:"*"(vulkan: "*"bfloat16"* ]]; } ||
    fail "run digits --precision bf16 on vulkan,cpu: exit $rc: $out"
  # vulkan:N names device N as doctor numbers them; an index out of range lists the devices.
  "$pi" doctor 2>&1 | grep -q ' vulkan:0 ' || fail "doctor does not number the Vulkan devices"
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan:0 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"placement: vulkan:0 6/6 nodes"* ]]; } ||
    fail "run digits --providers vulkan:0: exit $rc: $out"
  out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan:5,cpu 2>&1); rc=$?
  { [ $rc -ne 0 ] && [[ $out == *"vulkan:5 names no device"*"vulkan:0 "* ]]; } ||
    fail "run --providers vulkan:5,cpu: exit $rc: $out"
  # A model written at level 3 has the CPU's channels-last operators, which vulkan has no kernels
  # for: they fall back with the reason (a session with vulkan first never makes them itself).
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$pi" optimize "$digits/digits_cnn.onnx" -o "$tmp/d3.onnx" --level 3 >/dev/null 2>&1 ||
    fail "optimize --level 3"
  out=$("$pi" run "$tmp/d3.onnx" --providers vulkan,cpu 2>&1); rc=$?
  no_kernel="(vulkan: no vulkan kernel for ai.polyinfer.NhwcFusedConv)"
  { [ $rc -eq 0 ] && [[ $out == *"NhwcFusedConv"*"$no_kernel"* ]]; } ||
    fail "run a level-3 model --providers vulkan,cpu: exit $rc: $out"
else
  echo "vulkan is not usable here; checking the reason only"
fi

# No working driver: the same reason from providers, run and doctor.
export VK_ICD_FILENAMES=/nonexistent/polyinfer_icd.json \
  VK_DRIVER_FILES=/nonexistent/polyinfer_icd.json
line=$("$pi" providers 2>&1 | grep ' vulkan ')
reason=${line#*kernels): }
{ [[ $line == "✗"* ]] && [ -n "$reason" ]; } || fail "providers without a driver: '$line'"
out=$("$pi" run "$digits/digits_cnn.onnx" --providers vulkan 2>&1); rc=$?
{ [ $rc -ne 0 ] && [[ $out == *"$reason"* ]]; } || fail "run without a driver: exit $rc: $out"
"$pi" doctor 2>&1 | grep -qF "$reason" || fail "doctor does not give the reason '$reason'"

[ $failures -eq 0 ] && echo "vulkan_cli: all checks passed"
exit $((failures > 0))
