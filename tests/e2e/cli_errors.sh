#!/usr/bin/env bash
# Every kind of bad input gives one clear error line on stderr and an exit status of 1..127
# (never a signal, never a sanitizer report): polyinfer CLI, digits example folder.
set -u
pi=$1
digits=$2
data=$(cd "$(dirname "$0")/../data" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 3000 "$digits/digits_cnn.onnx" >"$tmp/truncated.onnx"
head -c 4096 /dev/urandom >"$tmp/random.onnx"
printf 'not a numpy file' >"$tmp/bad.npy"
failures=0

expect_error() {  # NAME PATTERN COMMAND...
  local name=$1 pattern=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines; lines=$(grep -c . "$tmp/err")
  if [ "$rc" -lt 1 ] || [ "$rc" -gt 127 ] || [ "$lines" -ne 1 ] ||
     ! grep -q "^error: .*$pattern" "$tmp/err"; then
    echo "FAIL $name: exit $rc, stderr:"; cat "$tmp/err"; failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc: $(cat "$tmp/err")"
  fi
}

expect_error truncated-model "not a valid ONNX" "$pi" run "$tmp/truncated.onnx"
expect_error random-bytes "not a valid ONNX" "$pi" run "$tmp/random.onnx"
expect_error missing-file "does not exist" "$pi" run "$tmp/nope.onnx"
expect_error unknown-op "FrobnicateX 'frob'" "$pi" run "$data/unknown_op.onnx"
expect_error external-escape "leaves the model's folder" "$pi" run "$data/external_escape.onnx"
expect_error wrong-shape "has shape \[1,1,8,9\] but the model expects float32\[batch,1,8,8\]" \
  "$pi" run "$digits/digits_cnn.onnx" --shape pixels=1x1x8x9
expect_error wrong-dtype "dtype int64" "$pi" run "$digits/digits_cnn.onnx" \
  -i pixels="$digits/test_y.npy"
expect_error missing-input-file "cannot" "$pi" run "$digits/digits_cnn.onnx" \
  -i pixels="$tmp/none.npy"
expect_error bad-npy "bad.npy" "$pi" run "$digits/digits_cnn.onnx" -i pixels="$tmp/bad.npy"
expect_error unknown-input "no input named 'foo'" "$pi" run "$digits/digits_cnn.onnx" \
  -i foo="$digits/test_x.npy"
expect_error unknown-provider "unknown provider 'tpu'" "$pi" run "$digits/digits_cnn.onnx" \
  --providers tpu
expect_error unknown-option "unknown option '--frob'" "$pi" run "$digits/digits_cnn.onnx" --frob

echo "$((12 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
