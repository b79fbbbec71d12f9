#!/usr/bin/env bash
# `polyinfer quantize`: the digits CNN calibrated on its test images writes a QDQ model that
# polyinfer runs close to float (compare: cosine, top-1), with the JSON summary's counts; bad
# calibration data (wrong dtype, wrong shape, NaN, an empty folder, fewer samples than asked)
# fails with one line naming the problem and writes nothing.
#   quantize_cli.sh POLYINFER DIGITS_FOLDER
set -u
pi=$1
model=$2/digits_cnn.onnx
data=$2/test_x.npy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

if "$pi" quantize "$model" -o "$tmp/q.onnx" --calibration "$data" --samples 64 --per-channel \
     --method entropy --json >"$tmp/q.json" 2>"$tmp/err"; then
  python3 - "$tmp/q.json" <<'PY' || fail "quantize json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 64 and d["method"] == "entropy" and d["per_channel"], d
# Conv, Conv, Gemm, Gemm; their activations: the input, two ReLU outputs, the Flatten, a ReLU.
assert (d["nodes"], d["weights"], d["biases"], d["activations"]) == (4, 4, 4, 5), d
assert d["quantized_bytes"] * 3.5 < d["float_bytes"], d
print("ok   quantize wrote a QDQ model")
PY
  "$pi" info "$tmp/q.onnx" >"$tmp/info" 2>&1 || fail "info on the QDQ model"
  grep -q "QuantizeLinear" "$tmp/info" && grep -q "DequantizeLinear" "$tmp/info" ||
    fail "no Q/DQ nodes in: $(cat "$tmp/info")"
  if "$pi" compare "$model" "$tmp/q.onnx" --data "$data" --json >"$tmp/c.json" 2>"$tmp/err"; then
    python3 - "$tmp/c.json" <<'PY' || fail "int8 against float"
import json, sys
(o,) = json.load(open(sys.argv[1]))["outputs"]
assert o["cosine"] >= 0.99 and o["top1"] >= 0.97, o
print("ok   int8 logits: cosine %.4f, top-1 agreement %.4f" % (o["cosine"], o["top1"]))
PY
  else
    fail "compare exited $?: $(cat "$tmp/err")"
  fi
  # The runtime turns the written Q/DQ pairs around both convolutions into int8 kernels.
  if "$pi" bench "$tmp/q.onnx" --iterations 1 --profile --json >"$tmp/b.json" 2>"$tmp/err"; then
    python3 - "$tmp/b.json" <<'PY' || fail "int8 kernels"
import json, sys
ops = {o["op"]: o for o in json.load(open(sys.argv[1]))["profile"]["ops"]}
conv = [o for name, o in ops.items() if name.endswith("QLinearConv")]
assert conv and sum(o["nodes"] for o in conv) == 2, sorted(ops)
assert "Conv" not in ops, sorted(ops)
print("ok   both convolutions run as", ", ".join(sorted(set(i for o in conv for i in o["impls"]))))
PY
  else
    fail "bench on the QDQ model: $(cat "$tmp/err")"
  fi
else
  fail "quantize exited $?: $(cat "$tmp/err")"
fi

# --target-accuracy: each step returns the layer adding the most error to float until the target
# holds; the steps' metrics are reported and the last meets the target. A target out of reach
# within --max-excluded exits 2 and still writes the best model.
if "$pi" quantize "$model" -o "$tmp/t.onnx" --calibration "$data" --samples 100 \
     --target-accuracy snr=45 --json >"$tmp/t.json" 2>"$tmp/err"; then
  python3 - "$tmp/t.json" <<'PY' || fail "target search"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["target"]
assert t["met"] and t["metric"] == "snr" and len(t["steps"]) >= 2, t
assert (t["steps"][0]["excluded"] == ""
        and t["steps"][0]["metric"] < 45 <= t["steps"][-1]["metric"]), t
excluded = [s["excluded"] for s in t["steps"][1:]]
assert (len(set(excluded)) == len(excluded)
        and all(s["op"] in ("Conv", "Gemm") for s in t["steps"][1:])), t
assert d["nodes"] == 4 - len(excluded), d
print("ok   target snr=45 met after keeping %d layer(s) in float" % len(excluded))
PY
else
  fail "quantize --target-accuracy exited $?: $(cat "$tmp/err")"
fi
"$pi" quantize "$model" -o "$tmp/t2.onnx" --calibration "$data" --samples 100 \
  --target-accuracy snr=80 --max-excluded 1 >"$tmp/o" 2>"$tmp/e"
rc=$?
if [[ $rc -eq 2 && -s "$tmp/t2.onnx" ]] && grep -q "not reached" "$tmp/e"; then
  echo "ok   unreachable target exits 2"
else
  fail "unreachable target: exit $rc, $(cat "$tmp/e")"
fi

# --dynamic (int8 weights, activations quantized at run time) and --fp16 need no data; both
# models stay close to float.
for mode in dynamic fp16; do
  if "$pi" quantize "$model" -o "$tmp/$mode.onnx" --$mode --json >"$tmp/$mode.json" 2>"$tmp/err" &&
     "$pi" compare "$model" "$tmp/$mode.onnx" --data "$data" --json >"$tmp/c$mode.json" \
       2>>"$tmp/err"; then
    python3 - "$tmp/$mode.json" "$tmp/c$mode.json" $mode <<'PY' || fail "--$mode"
import json, sys
q, (o,) = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["outputs"]
assert q["mode"] == sys.argv[3] and q["quantized_bytes"] < q["float_bytes"], q
assert o["cosine"] >= 0.999 and o["top1"] >= 0.99, o
print("ok   --%s: cosine %.6f" % (sys.argv[3], o["cosine"]))
PY
  else
    fail "--$mode: $(cat "$tmp/err")"
  fi
done

# Bad calibration data: exit 12 or 15, the named problem, and no output file.
python3 - "$tmp" <<'PY'
import struct, sys
def npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)
npy(sys.argv[1] + "/ints.npy", "<i8", "(2, 1, 8, 8)", b"\0" * 8 * 128)
npy(sys.argv[1] + "/wide.npy", "<f4", "(2, 1, 9, 9)", b"\0" * 4 * 162)
npy(sys.argv[1] + "/nan.npy", "<f4", "(1, 1, 8, 8)", struct.pack("<f", float("nan")) * 64)
import os
os.makedirs(sys.argv[1] + "/two")
for name in "ab":  # batched samples for a two-input model, one file per input
    npy(sys.argv[1] + "/two/%s.npy" % name, "<f4", "(5, 4)",
        struct.pack("<20f", *[(i * 7 % 11 - 5) / 3.0 for i in range(20)]))
PY
mkdir "$tmp/empty"
# A two-input model: a folder with one batched INPUT.npy per input; one missing is an error.
two=$(dirname "$0")/../data/two_inputs.onnx
two_check="import json,sys; d=json.load(open(sys.argv[1])); "
two_check+="assert d['samples'] == 5 and d['nodes'] == 1, d"
if "$pi" quantize "$two" -o "$tmp/two.onnx" --calibration "$tmp/two" --json >"$tmp/two.json" \
     2>"$tmp/err" &&
   python3 -c "$two_check" "$tmp/two.json"; then
  echo "ok   two inputs calibrated from a.npy and b.npy"
else
  fail "two-input calibration: $(cat "$tmp/err")"
fi
rm "$tmp/two/b.npy"
if "$pi" quantize "$two" -o "$tmp/two2.onnx" --calibration "$tmp/two" 2>"$tmp/err"; then
  fail "missing b.npy accepted"
else
  grep -q "b.npy' is missing (input 'b')" "$tmp/err" && echo "ok   missing b.npy named" ||
    fail "missing b.npy: $(cat "$tmp/err")"
fi

expect_error() {  # expect_error CODE PATTERN ARGS...
  local code=$1 pattern=$2
  shift 2
  rm -f "$tmp/out.onnx"
  "$pi" quantize "$model" -o "$tmp/out.onnx" "$@" >"$tmp/o" 2>"$tmp/e"
  local rc=$?
  if [[ $rc -ne $code ]] || ! grep -q -- "$pattern" "$tmp/e" || [[ -e "$tmp/out.onnx" ]]; then
    fail "quantize $* -> exit $rc, '$(cat "$tmp/e")' (wanted $code, '$pattern', no file)"
  else
    echo "ok   $pattern"
  fi
}
expect_error 12 "is int64" --calibration "$tmp/ints.npy"
expect_error 15 "takes float32\[batch,1,8,8\]" --calibration "$tmp/wide.npy"
expect_error 12 "holds nan at element 0" --calibration "$tmp/nan.npy"
expect_error 12 "holds no .npy files" --calibration "$tmp/empty"
expect_error 12 "holds only 450 samples" --calibration "$data" --samples 451
expect_error 12 "no node of that name" --calibration "$data" --exclude NoSuchNode
expect_error 12 "unknown calibration method" --calibration "$data" --method kl
expect_error 1 "exclude each other" --calibration "$data" --symmetric --asymmetric
expect_error 12 "write top1=F" --calibration "$data" --target-accuracy top1=2
expect_error 1 "needs calibration" --dynamic --method entropy
expect_error 1 "exclude each other" --dynamic --fp16

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "quantize_cli: all passed"
