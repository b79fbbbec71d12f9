#!/usr/bin/env python3
"""Serving benchmark (issue 39): `polyinfer serve` against the kserve SDK's ModelServer running
onnxruntime (bench/kserve_ort_server.py), side by side on the same machine, the same model files
and the same intra-op threads: throughput and p50/p99 latency at each concurrency, over HTTP and
gRPC, and polyinfer with and without dynamic batching.

    .venv-servebench/bin/python bench/serve_bench.py [--polyinfer build/polyinfer]
        [--models resnet50_dyn bert_base_dyn] [--concurrency 1 4 16] [--seconds 10]
        [--threads 2] [--json out.json] > table.md

Models come from bench/models/ (`/usr/bin/python3 bench/export_models.py --models resnet50
bert_base --dynamic-batch` writes the NAME_dyn.onnx forms, whose first dimension is the batch)
with their seeded inputs (NAME_dyn.input.npy, one item). The load: `concurrency` client threads,
each with its own tritonclient client (tritonclient.http with its binary tensors, or
tritonclient.grpc), sending one-item requests back to back for --seconds after one second of
warm-up; a request's latency is the client's call. Throughput is completed requests per second;
a failed request is counted and shown. The clients run on the same two cores as the servers:
both servers pay for them alike. "bare" is `polyinfer bench` of the same model (median) at the
same threads: serving overhead is p50 at concurrency 1 less it.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Polyinfer:
    def __init__(self, exe, repo):
        self.proc = subprocess.Popen(
            [exe, "serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0",
             "--metrics-port", "0", "--host", "127.0.0.1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("event") == "listening":
                self.http = f"127.0.0.1:{event['http_port']}"
                self.grpc = f"127.0.0.1:{event['grpc_port']}"
                break
        else:
            raise SystemExit("polyinfer serve did not start")
        # Its log is read (and dropped) so that the pipe never fills.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


class Kserve:
    def __init__(self, name, model, threads):
        hp, gp = free_port(), free_port()
        # SERVE_BENCH_DEBUG=1 shows its log (a failing request's traceback is only there).
        quiet = None if os.environ.get("SERVE_BENCH_DEBUG") else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "kserve_ort_server.py"), "--model",
             f"{name}={model}", "--http-port", str(hp), "--grpc-port", str(gp), "--threads",
             str(threads)], stdout=quiet, stderr=quiet)
        self.http, self.grpc = f"127.0.0.1:{hp}", f"127.0.0.1:{gp}"
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://{self.http}/v2/models/{name}/ready",
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.proc.kill()
        raise SystemExit("the kserve ModelServer did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def load(protocol, url, model, x, concurrency, seconds):
    """(requests/s, p50 ms, p99 ms, failures) of `concurrency` closed-loop clients."""
    lat, failures, lock = [], [0], threading.Lock()
    warm_until = time.time() + 1.0
    stop_at = warm_until + seconds

    def client():
        mod = httpclient if protocol == "http" else grpcclient
        c = mod.InferenceServerClient(url=url, **({"connection_timeout": 300.0,
                                                  "network_timeout": 300.0}
                                               if protocol == "http" else {}))
        inp = mod.InferInput("input", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        mine = []
        while True:
            t0 = time.time()
            if t0 >= stop_at:
                break
            try:
                c.infer(model, [inp])
                ok = True
            except Exception:  # noqa: BLE001 - any failure counts
                ok = False
            t1 = time.time()
            if t0 >= warm_until:
                if ok:
                    mine.append(t1 - t0)
                else:
                    with lock:
                        failures[0] += 1
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()
    if not lat:
        return 0.0, float("nan"), float("nan"), failures[0]
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1e3  # noqa: E731
    return len(lat) / seconds, p(0.50), p(0.99), failures[0]


def bare_ms(exe, model, x_path, threads):
    r = subprocess.run([exe, "bench", model, "-i", f"input={x_path}", "--threads", str(threads),
                        "--duration", "5", "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--polyinfer", default=os.path.join(ROOT, "build", "polyinfer"))
    ap.add_argument("--models", nargs="+", default=["resnet50_dyn", "bert_base_dyn"])
    ap.add_argument("--concurrency", nargs="+", type=int, default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--queue-delay-us", type=int, default=2000)
    ap.add_argument("--json")
    args = ap.parse_args()

    rows, started = [], time.time()
    for name in args.models:
        onnx_path = os.path.join(HERE, "models", f"{name}.onnx")
        x_path = os.path.join(HERE, "models", f"{name}.input.npy")
        x = np.load(x_path)
        bare = bare_ms(args.polyinfer, onnx_path, x_path, args.threads)
        tmp = tempfile.mkdtemp()
        try:
            for batching in (False, True):
                repo = os.path.join(tmp, "batched" if batching else "plain")
                os.makedirs(os.path.join(repo, name, "1"))
                shutil.copy(onnx_path, os.path.join(repo, name, "1", "model.onnx"))
                config = {"threads": args.threads}
                if batching:
                    config.update(max_batch_size=args.max_batch,
                                  dynamic_batching={"max_queue_delay_us": args.queue_delay_us})
                with open(os.path.join(repo, name, "config.json"), "w") as f:
                    json.dump(config, f)
            servers = [("polyinfer", lambda: Polyinfer(args.polyinfer, os.path.join(tmp, "plain"))),
                       ("polyinfer, dynamic batching",
                        lambda: Polyinfer(args.polyinfer, os.path.join(tmp, "batched"))),
                       ("kserve ModelServer + onnxruntime",
                        lambda: Kserve(name, onnx_path, args.threads))]
            for server_name, start in servers:
                server = start()
                try:
                    for protocol in ("http", "grpc"):
                        url = server.http if protocol == "http" else server.grpc
                        for c in args.concurrency:
                            rps, p50, p99, failed = load(protocol, url, name, x, c, args.seconds)
                            rows.append({"model": name, "server": server_name,
                                         "protocol": protocol, "concurrency": c, "rps": rps,
                                         "p50_ms": p50, "p99_ms": p99, "failed": failed,
                                         "bare_ms": bare})
                            print(f"{name} {server_name} {protocol} c={c}: {rps:.1f}/s p50 "
                                  f"{p50:.1f} p99 {p99:.1f} failed {failed}", file=sys.stderr,
                                  flush=True)
                finally:
                    server.stop()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    print("| model | server | protocol | concurrency | requests/s | p50 ms | p99 ms | failed |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['server']} | {r['protocol']} | {r['concurrency']} | "
              f"{r['rps']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['failed']} |")
    print()
    for name in args.models:
        bare = next(r["bare_ms"] for r in rows if r["model"] == name)
        for protocol in ("http", "grpc"):
            one = next((r for r in rows if r["model"] == name and r["server"] == "polyinfer" and
                        r["protocol"] == protocol and r["concurrency"] == 1), None)
            if one:
                print(f"- {name}, {protocol}: p50 at concurrency 1 {one['p50_ms']:.2f} ms, bare "
                      f"`polyinfer bench` median {bare:.2f} ms: serving overhead "
                      f"{one['p50_ms'] - bare:.2f} ms")
    print(f"\n{args.threads} intra-op threads per server; {args.seconds:g} s per point after 1 s "
          f"of warm-up; dynamic batching up to {args.max_batch} within {args.queue_delay_us} us; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; whole run "
          f"{time.time() - started:.0f} s.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
