#!/usr/bin/env bash
# `polyinfer bench`: --json is one parseable object with the documented keys, --profile lists
# every node, and bad flags exit 1 with one clear error line. No timing assertions.
#   bench_cli.sh POLYINFER DIGITS_FOLDER
set -u
pi=$1
model=$2/digits_cnn.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# JSON report: keys, types and a per-node profile covering the placement's nodes.
if "$pi" bench "$model" --iterations 4 --warmup 2 --threads 1 --profile --json >"$tmp/out.json" \
    2>"$tmp/err"; then
  python3 - "$tmp/out.json" <<'PY' || fail "json: keys or values wrong"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ["session_create_ms", "first_run_ms", "latency_ms", "throughput", "peak_rss_mb",
          "peak_intermediate_mb", "memory_arena_mb", "threads", "placement", "profile",
          "samples_ms", "iterations", "precision"]:
    assert k in r, f"missing key {k}"
lat = r["latency_ms"]
for k in ["min", "median", "p90", "p99", "max"]:
    assert isinstance(lat[k], (int, float)) and lat[k] >= 0, f"latency_ms.{k} = {lat[k]}"
assert lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
assert r["iterations"] == 4 and len(r["samples_ms"]) == 4, r["iterations"]
assert r["threads"] == 1, r["threads"]
assert r["precision"] == "fp32", r["precision"]
assert r["tf32"] is False, r["tf32"]
assert r["peak_rss_mb"] > 0
ph = r["session_create_phases_ms"]
assert ph["import"] > 0 and ph["kernels"] > 0 and ph["optimize"] >= 0, ph
assert sum(ph.values()) <= r["session_create_ms"] + 0.01, (ph, r["session_create_ms"])
pl = r["placement"]
assert pl["summary"].startswith("placement:") and pl["providers"][0]["name"] == "cpu", pl
nodes = r["profile"]["nodes"]
assert len(nodes) == pl["total_nodes"] > 0, (len(nodes), pl["total_nodes"])
for n in nodes:
    assert n["calls"] == 4, n  # measured runs only: warm-up runs are not counted
    assert n["total_ms"] >= 0 and n["impl"] and n["op"], n
assert sum(o["nodes"] for o in r["profile"]["ops"]) == len(nodes)
# The shares issue 43 tracks: reference-tier kernels and the optimizer's layout Transposes.
total = sum(n["total_ms"] for n in nodes)
# If/Loop/Scan rows are control flow (their bodies' bookkeeping), counted apart.
flow = [n for n in nodes if n["op"] in ("If", "Loop", "Scan", "SequenceMap")]
ref = [n for n in nodes if n["impl"].startswith("reference") and n not in flow]
lay = [n for n in nodes if n["origin"] == "channels-last" and n["op"] == "Transpose"]
p = r["profile"]
assert p["reference_nodes"] == len(ref) and p["layout_nodes"] == len(lay), p
assert p["control_flow_nodes"] == len(flow) and p["control_flow_share"] >= 0, p
assert abs(p["reference_share"] - sum(n["total_ms"] for n in ref) / total) < 1e-6, p
assert abs(p["layout_share"] - sum(n["total_ms"] for n in lay) / total) < 1e-6, p
assert lay, "the digits CNN runs channels-last at the default level: Transposes expected"
assert all(n["origin"] == "" for n in nodes if n["op"] != "Transpose"), nodes
print("ok   json: keys, percentiles in order, profile covers", len(nodes), "nodes")
PY
else
  fail "json run: exit $?: $(cat "$tmp/err")"
fi

# The human report names its sections.
if "$pi" bench "$model" --duration 0.2 --profile --top 3 >"$tmp/out.txt" 2>"$tmp/err"; then
  for want in "latency over" "throughput:" "(import " ", kernels " "peak RSS" "placement: cpu" \
      "top 3 of" "reference kernels " "layout Transposes the optimizer inserted"; do
    grep -q "$want" "$tmp/out.txt" || fail "text report lacks '$want'"
  done
  echo "ok   text report"
else
  fail "text run: exit $?: $(cat "$tmp/err")"
fi

# cpu-ref runs every node on the reference tier: all of the kernel time is the reference share.
if "$pi" bench "$model" --providers cpu-ref --iterations 2 --profile --json >"$tmp/ref.json" \
    2>"$tmp/err"; then
  python3 - "$tmp/ref.json" <<'PY' || fail "cpu-ref json: reference share not all"
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
assert p["reference_nodes"] == len(p["nodes"]) and abs(p["reference_share"] - 1) < 1e-9, p
print("ok   cpu-ref: reference share 1 over", p["reference_nodes"], "nodes")
PY
else
  fail "cpu-ref run: exit $?: $(cat "$tmp/err")"
fi

expect_usage() {  # NAME PATTERN ARGS...
  local name=$1 pattern=$2; shift 2
  "$pi" bench "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 1 ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] ||
      ! grep -q "^error: .*$pattern" "$tmp/err"; then
    fail "$name: exit $rc, stderr: $(cat "$tmp/err")"
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
}
expect_usage no-model "needs a MODEL"
expect_usage zero-iterations "--iterations takes a whole number" "$model" --iterations 0
expect_usage bad-duration "--duration takes seconds" "$model" --duration soon
expect_usage both-modes "exclude each other" "$model" --iterations 2 --duration 1
expect_usage bad-threads "--threads takes a whole number" "$model" --threads many
expect_usage bad-level "--level takes a whole number from 0 to 3" "$model" --level 9
expect_usage unknown-flag "unknown option '--fast'" "$model" --fast
expect_usage bad-precision "--precision takes fp32, fp16 or bf16, got 'fp8'" "$model" \
  --precision fp8

# --precision fp16 / bf16: reported in the JSON, the graph converted (Casts at the float32
# borders), and in the text report's session line.
for prec in fp16 bf16; do
  if "$pi" bench "$model" --iterations 2 --warmup 1 --precision $prec --profile --json \
      >"$tmp/half.json" 2>"$tmp/err"; then
    python3 - "$tmp/half.json" $prec <<'PY' || fail "$prec json: precision or Casts missing"
import json, sys
r = json.load(open(sys.argv[1]))
prec = sys.argv[2]
assert r["precision"] == prec, r.get("precision")
ops = [n["op"] for n in r["profile"]["nodes"]]
assert ops.count("Cast") >= 2, ops
print(f"ok   --precision {prec}: precision in the JSON,", ops.count("Cast"), "Casts")
PY
  else
    fail "$prec run: exit $?: $(cat "$tmp/err")"
  fi
  if "$pi" bench "$model" --iterations 1 --warmup 1 --precision $prec >"$tmp/half.txt" \
      2>"$tmp/err"; then
    grep -q "; precision $prec" "$tmp/half.txt" || fail "$prec text report: no precision"
  else
    fail "$prec text run: exit $?: $(cat "$tmp/err")"
  fi
done

# --tf32: reported in the JSON and the text report; the cpu provider has no TF32, so no node's
# impl claims it (the CUDA side: CudaGemm.Tf32IsOptInAndNamed on a GPU).
if "$pi" bench "$model" --tf32 --iterations 1 --profile --json >"$tmp/tf32.json" 2>"$tmp/err"; then
  python3 - "$tmp/tf32.json" <<'PY' || fail "tf32 json: flag or impls wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["tf32"] is True, r["tf32"]
nodes = r["profile"]["nodes"]
assert nodes and not any("tf32" in n["impl"] for n in nodes), nodes
PY
else
  fail "tf32 run: exit $?: $(cat "$tmp/err")"
fi
"$pi" bench "$model" --tf32 --iterations 1 2>&1 | grep -q "; tf32 allowed" ||
  fail "tf32 text report: no 'tf32 allowed'"

# --capture-graph: the cpu provider cannot record its work, and the report says so (the
# recording itself is checked in GraphCapture.*, and on a GPU by tools/gpu_check.sh).
if "$pi" bench "$model" --capture-graph --iterations 3 --json >"$tmp/cap.json" 2>"$tmp/err"; then
  grep -q '"graph_capture": "off: cpu cannot record its work"' "$tmp/cap.json" ||
    fail "capture json: $(grep -o '"graph_capture[^,}]*' "$tmp/cap.json")"
else
  fail "capture run: exit $?: $(cat "$tmp/err")"
fi

# --compare: a column per provider, in the order given. cpu is the reference (exact against
# itself); every other column is either measured, on its provider then cpu, with outputs close
# to cpu's, or not usable here with a reason that names it (cuda on a machine without a GPU).
if "$pi" bench "$model" --compare cpu,vulkan,cuda --iterations 3 --warmup 1 --threads 1 --json \
    >"$tmp/cmp.json" 2>"$tmp/err"; then
  python3 - "$tmp/cmp.json" <<'PY' || fail "compare json: columns wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["reference"] == "cpu" and r["threads"] == 1 and r["rounds"] >= 1, r
cols = r["compare"]
assert [c["provider"] for c in cols] == ["cpu", "vulkan", "cuda"], cols
for c in cols:
    if not c["usable"]:
        assert c["provider"] in c["reason"], c
        continue
    assert c["providers"] == ([c["provider"]] + (["cpu"] if c["provider"] != "cpu" else [])), c
    assert c["iterations"] == 3, c
    lat = c["latency_ms"]
    assert 0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
    pl = c["placement"]
    assert sum(p["nodes"] for p in pl["providers"]) == pl["total_nodes"] > 0, pl
    assert c["max_abs_diff"] is not None and c["max_abs_diff"] < 1e-3, c
assert cols[0]["usable"] and cols[0]["max_abs_diff"] == 0, cols[0]
print("ok   --compare json:",
      ", ".join(c["provider"] + (" measured" if c["usable"] else " not usable") for c in cols))
PY
else
  fail "compare run: exit $?: $(cat "$tmp/err")"
fi
if "$pi" bench "$model" --compare cpu,cuda --iterations 2 >"$tmp/cmp.txt" 2>"$tmp/err"; then
  for want in "provider " "median ms" "ratio" "max |diff|" "placement" "cpu 8/8 nodes"; do
    grep -q "$want" "$tmp/cmp.txt" || fail "compare text lacks '$want'"
  done
  echo "ok   --compare text"
else
  fail "compare text run: exit $?: $(cat "$tmp/err")"
fi
expect_usage compare-one "--compare takes two or more providers" "$model" --compare cpu
expect_usage compare-twice "--compare names 'cpu' twice" "$model" --compare cpu,cpu
expect_usage compare-and-providers "--compare and --providers exclude each other" "$model" \
  --compare cpu,vulkan --providers cpu
expect_usage compare-profile "--compare measures latency only" "$model" --compare cpu,vulkan \
  --profile

echo "$failures failed"
[ "$failures" -eq 0 ]
