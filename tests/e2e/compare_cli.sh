#!/usr/bin/env bash
# `polyinfer compare`: a model against itself is exact (error 0, cosine 1, top-1 1) on the digits
# test split given as --data, in text and JSON; usage and input errors exit with their codes.
#   compare_cli.sh POLYINFER DIGITS_FOLDER
set -u
pi=$1
model=$2/digits_cnn.onnx
data=$2/test_x.npy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$pi" optimize "$model" -o "$tmp/opt.onnx" --level 1 >/dev/null || fail "optimize"
if "$pi" compare "$model" "$tmp/opt.onnx" --data "$data" --json >"$tmp/c.json" 2>"$tmp/err"; then
  python3 - "$tmp/c.json" <<'PY' || fail "compare json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 1, d  # one batched file, the model takes a dynamic batch
(o,) = d["outputs"]
assert o["name"] == "logits" and o["max_abs"] == 0 and o["cosine"] == 1, o
assert o["snr_db"] is None and o["top1"] == 1 and o["top5"] == 1 and o["non_finite"] == 0, o
print("ok   identical models compare exact")
PY
else
  fail "compare exited $?: $(cat "$tmp/err")"
fi
"$pi" compare "$model" "$model" --samples 3 >"$tmp/out" 2>"$tmp/err" &&
  grep -q "on 3 samples" "$tmp/out" && grep -q "^logits .* 1.000000 " "$tmp/out" ||
  fail "random samples: $(cat "$tmp/out" "$tmp/err")"
"$pi" compare "$model" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "one model should be a usage error"
"$pi" compare "$model" "$tmp/missing.onnx" >/dev/null 2>"$tmp/err"
[[ $? -eq 17 ]] && grep -q "missing.onnx" "$tmp/err" || fail "missing model: $(cat "$tmp/err")"
"$pi" compare "$model" "$model" --data "$tmp" >/dev/null 2>"$tmp/err"
[[ $? -eq 12 ]] && grep -q "holds no .npy files" "$tmp/err" || fail "empty data folder: $(cat "$tmp/err")"

[[ $failures -eq 0 ]] || { echo "compare_cli: $failures failed"; exit 1; }
echo "compare_cli: all passed"
