#!/usr/bin/env bash
# `polyinfer plan`: the seeds' sizing arithmetic from a real decoder graph (int4 weights with their
# block scales, the KV cache at --context, bandwidth / bytes per token), the activation arena
# equal to what a session plans, op-support rejections with their reasons, usage errors.
#   plan_cli.sh POLYINFER REPO
set -u
pi=$1
repo=$2
decoder=$repo/tests/data/decoder_tiny/decoder.onnx
digits=$repo/examples/digits/digits_cnn.onnx
node=/usr/share/libonnx-testdata/data/node
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The tiny decoder (tools/make_decoder.py --layers 2 --hidden 64 --heads 4 --ffn 172 --vocab 100):
# 111,936 float16 parameters; KV inputs [1, 4, past, 16] per layer, keys and values.
for prec in int4 fp16; do
  if "$pi" plan "$decoder" --precision $prec --context 64 --target h100-sxm --json \
      >"$tmp/dec_$prec.json" 2>"$tmp/err"; then
    python3 - "$tmp/dec_$prec.json" $prec <<'PY' || fail "decoder arithmetic at $prec"
import json, sys
d, prec = json.load(open(sys.argv[1])), sys.argv[2]
assert d["parameters"] == 111939, d["parameters"]  # 111,936 weights + 3 float scalars
per_weight = {"int4": 0.5 + 2 / 32, "fp16": 2}[prec]
# + 56 B: two int64 shape constants (7 values), stored as they are.
assert abs(d["weight_bytes"] - (111939 * per_weight + 56)) < 1e-6, d["weight_bytes"]
# KV cache = 2 (keys, values) x layers x heads x head_dim x bytes x context (fp16 activations).
assert d["kv_cache_bytes"] == 2 * 2 * 4 * 16 * 2 * 64, d["kv_cache_bytes"]
t = d["targets"][0]
assert t["id"] == "h100-sxm" and t["fits"] is True, t
assert t["bound"] == "memory", t["bound"]
tps = t["bandwidth_used"] / (d["weight_bytes"] + d["kv_cache_bytes"])
assert abs(t["tokens_per_s_weights_and_cache"] - tps) < 1e-6 * tps, t
assert abs(t["tokens_per_s"] * t["seconds"] - 1) < 1e-9, t
print(f"ok   decoder at {prec}: weights {d['weight_bytes']:.0f} B, KV {d['kv_cache_bytes']:.0f} B")
PY
  else
    fail "decoder plan at $prec exited $?: $(cat "$tmp/err")"
  fi
done

# A dynamic dimension nothing fixes is a usage error that names it and the option.
"$pi" plan "$decoder" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "past_key_0.*(past).*--context N" "$tmp/err"; then
  fail "unfixed dimension: exit $rc: $(cat "$tmp/err")"
else
  echo "ok   unfixed dimension is a usage error"
fi

# The predicted arena is the one a session plans (bench reports it in MiB).
if "$pi" plan "$digits" --quick-measure --threads 1 --json >"$tmp/digits_plan.json" 2>"$tmp/err" &&
   "$pi" bench "$digits" --threads 1 --iterations 5 --warmup 1 --json \
     >"$tmp/digits_bench.json" 2>>"$tmp/err"; then
  python3 - "$tmp/digits_plan.json" "$tmp/digits_bench.json" <<'PY' || fail "arena prediction"
import json, sys
p, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
predicted, actual = p["activation_arena_bytes"], b["memory_arena_mb"] * 1048576
assert predicted > 0 and abs(predicted - actual) <= 0.01 * 1048576, (predicted, actual)
t = p["targets"][0]
assert t["id"] == "this" and t["seconds"] > 0 and t["unsupported"] == [], t
print(f"ok   predicted arena {predicted} B = session's {actual:.0f} B")
PY
else
  fail "digits plan/bench: $(cat "$tmp/err")"
fi

# Op support: nodes a toolchain would not run are named with the reason.
check_rejects() {  # model target op
  if "$pi" plan "$1" --target "$2" --json >"$tmp/os.json" 2>"$tmp/err"; then
    python3 - "$tmp/os.json" "$3" <<'PY' || fail "$2 rejects $3"
import json, sys
d, op = json.load(open(sys.argv[1])), sys.argv[2]
u = d["targets"][0]["unsupported"]
assert any(r["op"] == op and r["certain"] and "not supported" in r["reason"] for r in u), u
print(f"ok   {d['targets'][0]['id']} rejects {op}: {u[0]['reason']}")
PY
  else
    fail "plan --target $2: $(cat "$tmp/err")"
  fi
}
if [[ -d $node ]]; then
  check_rejects "$node/test_top_k/model.onnx" rk3588 TopK
  check_rejects "$node/test_nonmaxsuppression_center_point_box_format/model.onnx" rk3588 \
    NonMaxSuppression
  check_rejects "$node/test_qlinearconv/model.onnx" tensorrt QLinearConv
else
  echo "skip op-support checks: $node (libonnx-testdata) is not installed"
fi

# The catalog lists its targets; a target that does not exist is a usage error naming the known.
if "$pi" plan --list-targets --json >"$tmp/list.json"; then
  python3 -c "
import json, sys
ts = json.load(open(sys.argv[1]))
ids = [t['id'] for t in ts]
assert 'h100-sxm' in ids and 'rk3588' in ids and len(ids) >= 20, ids
print('ok   --list-targets:', len(ids), 'targets')" "$tmp/list.json" || fail "list-targets"
else
  fail "list-targets exited non-zero"
fi
"$pi" plan "$digits" --target no-such-chip >"$tmp/out" 2>"$tmp/err"
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "unknown target 'no-such-chip'.*h100-sxm" "$tmp/err"; then
  fail "unknown target: exit $rc: $(cat "$tmp/err")"
else
  echo "ok   unknown target is a usage error"
fi

"$pi" plan "$decoder" --dim batch=1x2 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [[ $rc -ne 12 ]] || ! grep -q "takes one number (--dim batch=8)" "$tmp/err"; then
  fail "--dim with a shape: exit $rc: $(cat "$tmp/err")"
else
  echo "ok   --dim with two numbers is an error"
fi

[[ $failures -eq 0 ]] || { echo "plan_cli: $failures failed"; exit 1; }
echo "plan_cli: all passed"
