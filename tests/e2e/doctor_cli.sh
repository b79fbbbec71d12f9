#!/usr/bin/env bash
# `polyinfer doctor`: --json is one object that follows docs/doctor.md's schema; diagnoses come
# out of a faked system given with --root (an NVIDIA GPU on the PCI bus with no driver, an NPU
# node with its module not loaded, low memory); `run --providers auto` says what it chose.
#   doctor_cli.sh POLYINFER DIGITS_FOLDER
set -u
pi=$1
model=$2/digits_cnn.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# This machine, as JSON: the schema's keys and types (not this machine's facts).
if "$pi" doctor --json >"$tmp/real.json" 2>"$tmp/err"; then
  python3 - "$tmp/real.json" <<'PY' || fail "json schema"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ["polyinfer", "cpu", "memory", "gpus", "nvidia", "vulkan", "opencl", "npus", "providers",
          "diagnoses"]:
    assert k in r, f"missing {k}"
c = r["cpu"]
assert isinstance(c["model"], str) and c["cores"] >= 1 and c["threads"] >= c["cores"], c
assert isinstance(c["features"], list) and all(isinstance(f, str) for f in c["features"])
assert r["memory"]["total_bytes"] > 0
for d in r["vulkan"]["devices"]:
    assert d["name"] and d["type"] in ("discrete", "integrated", "virtual", "cpu", "other"), d
for d in r["opencl"]["devices"]:
    assert d["name"] and d["type"] in ("cpu", "gpu", "accelerator", "other"), d
names = [p["name"] for p in r["providers"]]
assert "cpu" in names and all(set(p) >= {"name", "usable", "reason"} for p in r["providers"]), \
    r["providers"]
assert [p for p in r["providers"] if p["name"] == "cpu"][0]["usable"] is True
for d in r["diagnoses"]:
    assert (set(d) == {"id", "severity", "cause", "fix"}
            and d["severity"] in ("error", "warning", "info")), d
    assert d["cause"] and d["fix"], d
# Software-only Vulkan is said to be what it is.
if r["vulkan"]["devices"] and all(d["type"] == "cpu" for d in r["vulkan"]["devices"]):
    assert "vulkan-software-only" in [d["id"] for d in r["diagnoses"]], r["diagnoses"]
print("ok   json schema on this machine")
PY
else
  fail "doctor --json: exit $?: $(cat "$tmp/err")"
fi

# The human report has its sections.
if "$pi" doctor >"$tmp/real.txt" 2>"$tmp/err"; then
  for want in CPU Memory NVIDIA Vulkan OpenCL "NPUs" Providers Diagnoses "✓ cpu"; do
    grep -q "$want" "$tmp/real.txt" || fail "text report lacks '$want'"
  done
  echo "ok   text report"
else
  fail "doctor: exit $?: $(cat "$tmp/err")"
fi

# A faked system: NVIDIA GPU without its driver, an Ascend NPU node without its module, little
# memory, a throttled CPU.
root=$tmp/root
mkdir -p "$root/proc" "$root/sys/bus/pci/devices/0000:17:00.0" "$root/dev" \
         "$root/sys/devices/system/cpu/cpu0/thermal_throttle"
{
  printf 'processor\t: 0\nvendor_id\t: AuthenticAMD\n'
  printf 'model name\t: AMD EPYC 9454 48-Core Processor\n'
  printf 'flags\t\t: fpu sse4_2 avx avx2 fma avx512f\n\n'
} >"$root/proc/cpuinfo"
{
  printf 'MemTotal:       16000000 kB\nMemFree:          100000 kB\n'
  printf 'MemAvailable:     200000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n'
} >"$root/proc/meminfo"
echo 0 >"$root/sys/devices/system/cpu/online"
echo 7 >"$root/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count"
echo 0x10de >"$root/sys/bus/pci/devices/0000:17:00.0/vendor"
echo 0x2335 >"$root/sys/bus/pci/devices/0000:17:00.0/device"
echo 0x030200 >"$root/sys/bus/pci/devices/0000:17:00.0/class"
: >"$root/dev/davinci0"
: >"$root/dev/davinci_manager"
if "$pi" doctor --json --root "$root" >"$tmp/fake.json" 2>"$tmp/err"; then
  python3 - "$tmp/fake.json" <<'PY' || fail "faked system: diagnoses"
import json, sys
r = json.load(open(sys.argv[1]))
ids = {d["id"]: d for d in r["diagnoses"]}
assert r["cpu"]["model"] == "AMD EPYC 9454 48-Core Processor", r["cpu"]["model"]
assert "avx512f" in r["cpu"]["features"], r["cpu"]["features"]
assert r["nvidia"]["pci_devices"] == ["0000:17:00.0"], r["nvidia"]
for want in ["nvidia-module-not-loaded", "memory-low", "npu-module-not-loaded",
             "cpu-thermal-throttling"]:
    assert want in ids, (want, list(ids))
assert ids["memory-low"]["severity"] == "error", ids["memory-low"]
sev = [d["severity"] for d in r["diagnoses"]]
order = {"error": 0, "warning": 1, "info": 2}
assert sev == sorted(sev, key=order.get), sev
print("ok   faked system:", ", ".join(ids))
PY
else
  fail "doctor --root: exit $?: $(cat "$tmp/err")"
fi

# The text form of the same puts each fix under its problem.
"$pi" doctor --root "$root" >"$tmp/fake.txt" 2>&1
grep -q "fix: sudo modprobe" "$tmp/fake.txt" || fail "text report lacks the modprobe fix"

# Bad command lines.
"$pi" doctor --root "$tmp/none" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "^error: --root" "$tmp/err" ||
  fail "--root to a missing folder: want exit 1 and an error line"
"$pi" doctor --bogus >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "unknown option: want exit 1"

# --providers auto says what it chose.
if "$pi" run "$model" --providers auto >"$tmp/auto.txt" 2>"$tmp/err"; then
  grep -q "providers: auto chose .*cpu" "$tmp/auto.txt" ||
    fail "run --providers auto does not say what it chose"
  echo "ok   --providers auto"
else
  fail "run --providers auto: exit $?: $(cat "$tmp/err")"
fi
"$pi" run "$model" --providers auto,cpu >/dev/null 2>"$tmp/err"
[ $? -eq 12 ] && grep -q "cannot be combined" "$tmp/err" ||
  fail "auto,cpu: want exit 12 and the reason"

[ "$failures" -eq 0 ] && echo "doctor_cli: all passed" ||
  { echo "doctor_cli: $failures failed"; exit 1; }
