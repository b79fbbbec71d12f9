#!/usr/bin/env bash
# `polyinfer monitor` and `bench --monitor`: JSON Lines with the documented keys, a bounded
# sample count, usage errors; the bench report carries the monitor's min/avg/max.
#   monitor_cli.sh POLYINFER DIGITS_FOLDER
set -u
pi=$1
model=$2/digits_cnn.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

if "$pi" monitor --count 3 --interval 50 --json >"$tmp/m.jsonl" 2>"$tmp/err"; then
  python3 - "$tmp/m.jsonl" <<'PY' || fail "monitor --json lines"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, len(lines)
prev = 0
for line in lines:
    s = json.loads(line)
    for k in ["t_ms", "cpu_util_pct", "core_util_pct", "core_mhz", "temperature_c",
              "memory_used_mb", "memory_total_mb", "gpus"]:
        assert k in s, k
    assert s["t_ms"] > prev, (s["t_ms"], prev)  # one interval apart, in order
    prev = s["t_ms"]
    assert 0 < s["memory_used_mb"] <= s["memory_total_mb"], s
    assert all(u is None or 0 <= u <= 100 for u in s["core_util_pct"]), s["core_util_pct"]
print("ok   monitor --json: 3 lines")
PY
else
  fail "monitor --json: exit $?: $(cat "$tmp/err")"
fi

"$pi" monitor --count 1 --interval 50 >"$tmp/m.txt" 2>&1 && grep -q "cpu .*mem" "$tmp/m.txt" ||
  fail "monitor text line: $(cat "$tmp/m.txt")"

for bad in "--interval 5" "--interval x" "--count 0"; do
  # shellcheck disable=SC2086
  "$pi" monitor $bad >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q "^error: --" "$tmp/err" ||
    fail "monitor $bad: want exit 1 and one error line"
done

if "$pi" bench "$model" --iterations 20 --monitor --monitor-interval 20 --json >"$tmp/b.json" \
    2>"$tmp/err"; then
  python3 - "$tmp/b.json" <<'PY' || fail "bench --monitor json"
import json, sys
m = json.load(open(sys.argv[1]))["monitor"]
assert m["samples"] >= 1, m
for k in ["cpu_util_pct", "cpu_mhz", "temperature_c", "memory_used_mb", "gpus"]:
    assert k in m, k
r = m["memory_used_mb"]
assert r["min"] <= r["avg"] <= r["max"], r
print("ok   bench --monitor:", m["samples"], "samples")
PY
else
  fail "bench --monitor: exit $?: $(cat "$tmp/err")"
fi
"$pi" bench "$model" --iterations 5 --monitor >"$tmp/b.txt" 2>&1 &&
  grep -q "^monitor (" "$tmp/b.txt" ||
  fail "bench --monitor text lacks the monitor line"

[ "$failures" -eq 0 ] && echo "monitor_cli: all passed" ||
  { echo "monitor_cli: $failures failed"; exit 1; }
