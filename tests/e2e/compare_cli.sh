#!/usr/bin/env bash
# `polyinfer compare`: a model against itself is exact (error 0, cosine 1, top-1 1) on the digits
# test split given as --data, in text and JSON; usage and input errors exit with their codes.
# --per-layer finds the one layer whose weights were rounded to 4-bit levels
# (tests/data/digits_conv2_4bit.onnx: features.2.weight only) and names it first.
#   compare_cli.sh POLYINFER DIGITS_FOLDER REPO
set -u
pi=$1
model=$2/digits_cnn.onnx
data=$2/test_x.npy
rounded=$3/tests/data/digits_conv2_4bit.onnx
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
if "$pi" compare "$model" "$rounded" --data "$data" --per-layer --json --html "$tmp/r.html" \
     >"$tmp/p.json" 2>"$tmp/err"; then
  python3 - "$tmp/r.html" "$tmp/p.json" <<'PY' || fail "html report"
import json, re, sys, xml.etree.ElementTree as ET
html, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
svg = ET.fromstring(re.search(r"<svg.*?</svg>", html, re.S).group(0))  # well-formed
rects = [e for e in svg.iter() if e.tag.endswith("rect")]
assert len(rects) == len(d["layers"]), (len(rects), len(d["layers"]))
red = [r for r in rects if r.get("fill") == "#c0392b"]
assert len(red) == len(d["keep_in_float"]) >= 1, red
assert "<script" not in html and not re.search(r'(src|href)="http', html), "must be self-contained"
print("ok   html report: one bar per layer,", len(red), "marked to keep in float")
PY
  python3 - "$tmp/p.json" <<'PY' || fail "per-layer"
import json, sys
d = json.load(open(sys.argv[1]))
(o,) = d["outputs"]
assert 0 < o["max_abs"] and 0.99 < o["cosine"] < 1 and 0.95 <= o["top1"] <= 1, o
assert d["keep_in_float"][0] == "/features/features.2/Conv", d["keep_in_float"]
layers = {l["node"]: l for l in d["layers"]}
assert layers["/features/features.0/Conv"]["relative_rms"] == 0, layers  # before the change
assert layers["/features/features.2/Conv"]["growth"] > 0.01, layers
print("ok   per-layer names the rounded layer:", d["keep_in_float"][0])
PY
else
  fail "per-layer exited $?: $(cat "$tmp/err")"
fi
"$pi" compare "$model" "$model" --samples 3 >"$tmp/out" 2>"$tmp/err" &&
  grep -q "on 3 samples" "$tmp/out" && grep -q "^logits .* 1.000000 " "$tmp/out" ||
  fail "random samples: $(cat "$tmp/out" "$tmp/err")"
if "$pi" compare "$model" "$model" --time --iterations 3 --threads 1 --json >"$tmp/t.json" \
    2>"$tmp/err"; then
  python3 -c "
import json, sys
l = json.load(open(sys.argv[1]))['latency_ms']
assert l['reference'] > 0 and l['compared'] > 0, l
print('ok   --time reports both latencies')" "$tmp/t.json" || fail "time"
else
  fail "--time exited $?: $(cat "$tmp/err")"
fi
"$pi" compare "$model" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "one model should be a usage error"
"$pi" compare "$model" "$tmp/missing.onnx" >/dev/null 2>"$tmp/err"
[[ $? -eq 17 ]] && grep -q "missing.onnx" "$tmp/err" || fail "missing model: $(cat "$tmp/err")"
"$pi" compare "$model" "$model" --data "$tmp" >/dev/null 2>"$tmp/err"
[[ $? -eq 12 ]] && grep -q "holds no .npy files" "$tmp/err" ||
  fail "empty data folder: $(cat "$tmp/err")"

[[ $failures -eq 0 ]] || { echo "compare_cli: $failures failed"; exit 1; }
echo "compare_cli: all passed"
