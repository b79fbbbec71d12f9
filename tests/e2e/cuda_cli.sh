#!/usr/bin/env bash
# The CUDA provider through the CLI. Without a usable GPU (CI, most dev machines): `providers`
# lists cuda as unusable with a reason, `doctor` gives the same reason, and `run --providers cuda`
# and `--providers cuda,cpu` both fail with it (placement rule 3: a listed provider that cannot
# run is an error, never a silent CPU run) while `--allow-missing` runs on cpu and says it skipped
# cuda. With a GPU: strict `--providers cuda` fails naming an op it lacks, and `cuda,cpu` runs.
# Args: polyinfer CLI, digits example folder.
set -u
pi=$1
digits=$2
model=$digits/digits_cnn.onnx
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

line=$("$pi" providers 2>&1 | grep ' cuda ')
if [ -z "$line" ]; then
  echo "skip: the cuda provider is not in this build"; exit 0
fi
echo "providers: $line"
if [[ $line == "✓"* ]]; then
  [[ $line == *"cuda:0"* ]] || fail "providers: no device in '$line'"
  out=$("$pi" run "$model" --providers cuda 2>&1); rc=$?
  { [ $rc -ne 0 ] && [[ $out == *"no provider can run"*"cuda: no cuda kernel for"* ]]; } ||
    fail "run --providers cuda: exit $rc: $out"
  out=$("$pi" run "$model" --providers cuda,cpu 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"fallback:"*"(cuda: no cuda kernel for"* ]]; } ||
    fail "run --providers cuda,cpu: exit $rc: $out"
else
  reason=${line#*kernels): }
  { [ -n "$reason" ] && [ "$reason" != "$line" ]; } || fail "providers gives no reason: '$line'"
  json=$("$pi" providers --json 2>&1)
  [[ $json == *'"name": "cuda"'*'"usable": false'* ]] || fail "providers --json: $json"
  "$pi" doctor 2>&1 | grep -qF "$reason" || fail "doctor does not give the reason '$reason'"
  for list in cuda cuda,cpu; do
    out=$("$pi" run "$model" --providers $list 2>&1); rc=$?
    { [ $rc -ne 0 ] && [[ $out == *"provider 'cuda' is not usable here: $reason"* ]]; } ||
      fail "run --providers $list: exit $rc: $out"
  done
  out=$("$pi" run "$model" --providers cuda,cpu --allow-missing 2>&1); rc=$?
  { [ $rc -eq 0 ] && [[ $out == *"cuda"*"$reason"* ]]; } ||
    fail "run --providers cuda,cpu --allow-missing: exit $rc: $out"
fi

[ $failures -eq 0 ] && echo "cuda_cli: all checks passed"
exit $((failures > 0))
