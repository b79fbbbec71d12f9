"""`polyinfer serve` (src/serve/, docs/serve.md): the Open Inference Protocol over HTTP, against
the CLI the package ships, on a model repository made here. Outputs are checked against
InferenceSession on the same inputs; errors by status and message; versions, rollback and a
refused update through the repository API; metrics; SIGTERM's clean exit."""

import json
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import polyinfer
from polyinfer import _tools

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DIGITS = os.path.join(ROOT, "examples", "digits", "digits_cnn.onnx")


class Server:
    def __init__(self, repo, *flags, drain=True):
        self.proc = subprocess.Popen(
            [_tools.cli_path(), "serve", "--model-repository", str(repo), "--http-port", "0",
             "--metrics-port", "0", "--grpc-port", "0", "--host", "127.0.0.1", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=_tools._cli_environment())
        self.log = []
        deadline = time.time() + 120  # a sanitized build loads slowly
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # not a log line: an error before the server started, say
            if event.get("event") == "listening":
                self.http = f"http://127.0.0.1:{event['http_port']}"
                self.metrics = f"http://127.0.0.1:{event['metrics_port']}"
                self.grpc = f"127.0.0.1:{event.get('grpc_port')}"
                # The log keeps being read, unless a test wants the pipe to fill.
                self.reader = threading.Thread(target=self._drain, daemon=True)
                if drain:
                    self.reader.start()
                return
        self.proc.kill()
        raise AssertionError("the server did not start:\n" + "".join(self.log))

    def request(self, path, body=None, base=None):
        """(status, parsed JSON or text) of a GET, or of a POST when `body` is given."""
        data = None if body is None else (body if isinstance(body, bytes) else
                                          json.dumps(body).encode())
        req = urllib.request.Request((base or self.http) + path, data=data,
                                     method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def _drain(self):
        for line in self.proc.stdout:
            self.log.append(line)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        if self.reader.is_alive():
            self.reader.join(timeout=60)
        return code


def infer_body(x, name="pixels", datatype="FP32", **extra):
    return {"inputs": [{"name": name, "shape": list(x.shape), "datatype": datatype,
                        "data": x.ravel().tolist()}], **extra}


@pytest.fixture
def repo(tmp_path):
    for v in ("1", "2"):
        os.makedirs(tmp_path / "digits" / v)
        shutil.copy(DIGITS, tmp_path / "digits" / v / "model.onnx")
    os.makedirs(tmp_path / "broken" / "1")
    (tmp_path / "broken" / "1" / "model.onnx").write_bytes(b"not an onnx file")
    return tmp_path


def test_serve_infers_checks_versions_and_drains(repo):
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:3]
    (want,) = polyinfer.InferenceSession(DIGITS).run(None, {"pixels": x})
    s = Server(repo)
    try:
        assert s.request("/v2/health/live")[0] == 200
        assert s.request("/v2/health/ready")[0] == 200
        status, meta = s.request("/v2")
        assert status == 200 and meta["name"] == "polyinfer"
        status, meta = s.request("/v2/models/digits")
        assert status == 200 and meta["versions"] == ["2"], meta  # the latest, by default
        assert meta["inputs"] == [{"name": "pixels", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]
        assert meta["outputs"][0]["name"] == "logits"
        assert s.request("/v2/models/digits/ready")[0] == 200
        assert s.request("/v2/models/broken/ready")[0] != 200

        # Inference, against InferenceSession on the same inputs.
        status, out = s.request("/v2/models/digits/infer", infer_body(x, id="req-1"))
        assert status == 200, out
        assert out["id"] == "req-1" and out["model_name"] == "digits"
        assert out["model_version"] == "2"
        (o,) = out["outputs"]
        assert o["name"] == "logits" and o["datatype"] == "FP32" and o["shape"] == [3, 10]
        np.testing.assert_allclose(np.array(o["data"], np.float32).reshape(3, 10), want,
                                   rtol=1e-6, atol=1e-6)
        nested = {"inputs": [{"name": "pixels", "shape": [3, 1, 8, 8], "datatype": "FP32",
                              "data": x.tolist()}], "outputs": [{"name": "logits"}]}
        status, out = s.request("/v2/models/digits/versions/2/infer", nested)
        assert status == 200, out
        np.testing.assert_allclose(np.array(out["outputs"][0]["data"]).reshape(3, 10), want,
                                   rtol=1e-6, atol=1e-6)

        # Bad requests: the status and a message naming the fix; nothing reaches a kernel.
        for body, status_want, words in [
                (infer_body(x, name="pixel"), 400, "no input named 'pixel'; its inputs are"),
                (infer_body(x, datatype="FP64"), 400, "is FP64 but the model takes FP32"),
                ({"inputs": [{"name": "pixels", "shape": [3, 1, 8, 8], "datatype": "FP32",
                              "data": [1.0]}]}, 400, "1 elements in \"data\" for shape"),
                ({"inputs": [{"name": "pixels", "shape": [3, 1, 4, 4], "datatype": "FP32",
                              "data": [0.0] * 48}]}, 400, "dimension 2 must be 8"),
                ({"inputs": []}, 400, "input 'pixels'"),
                (infer_body(x, outputs=[{"name": "probs"}]), 400, "no output named 'probs'"),
                (b"{not json", 400, "not JSON")]:
            status, err = s.request("/v2/models/digits/infer", body)
            assert status == status_want and words in err["error"], (status, err)
        req = urllib.request.Request(s.http + "/v2/models/digits/infer",
                                     data=json.dumps(infer_body(x)).encode(), method="POST",
                                     headers={"Inference-Header-Content-Length": "-3"})
        try:
            urllib.request.urlopen(req, timeout=60)
            raise AssertionError("a negative header length was taken")
        except urllib.error.HTTPError as e:
            assert e.code == 400 and "not a byte count" in json.loads(e.read())["error"]
        status, err = s.request("/v2/models/nope/infer", infer_body(x))
        assert status == 404 and "no model named 'nope'" in err["error"], err
        status, err = s.request("/v2/models/digits/versions/1/infer", infer_body(x))
        assert status == 404 and "version 1 of model 'digits' is not ready" in err["error"]
        status, err = s.request("/v2/nowhere")
        assert status == 404 and "no route" in err["error"]

        # The repository: a refused model with its reason; rollback to version 1 by config.
        status, index = s.request("/v2/repository/index", {})
        assert status == 200
        broken = [e for e in index if e["name"] == "broken"]
        assert broken and broken[0]["state"] == "UNAVAILABLE"
        assert "not a valid ONNX protobuf" in broken[0]["reason"]
        (repo / "digits" / "config.json").write_text(
            json.dumps({"version_policy": {"specific": {"versions": [1]}}}))
        assert s.request("/v2/repository/models/digits/load", {})[0] == 200
        assert s.request("/v2/models/digits")[1]["versions"] == ["1"]
        status, out = s.request("/v2/models/digits/infer", infer_body(x))
        assert status == 200 and out["model_version"] == "1"
        # A broken update is refused and version 1 goes on serving.
        os.makedirs(repo / "digits" / "3")
        (repo / "digits" / "3" / "model.onnx").write_bytes(b"broken")
        (repo / "digits" / "config.json").write_text(json.dumps({}))  # latest 1: version 3
        status, err = s.request("/v2/repository/models/digits/load", {})
        assert status == 400 and "version 3" in err["error"] and "serving" in err["error"], err
        assert s.request("/v2/models/digits")[1]["versions"] == ["1"]
        assert s.request("/v2/models/digits/infer", infer_body(x))[0] == 200
        (repo / "digits" / "config.json").write_text(json.dumps({"threads": -1}))
        status, err = s.request("/v2/repository/models/digits/load", {})
        assert status == 400 and "config.json" in err["error"] and "threads" in err["error"]

        # Metrics, labelled by model and version.
        status, text = s.request("/metrics", base=s.metrics)
        assert status == 200
        assert 'polyinfer_request_success_total{model="digits",version="2"} 2' in text
        assert 'polyinfer_request_success_total{model="digits",version="1"} 2' in text
        assert 'polyinfer_request_failure_total{model="digits",version="2"} 8' in text
        assert 'polyinfer_compute_duration_seconds_count{model="digits",version="2"} 2' in text
        assert 'model="nope"' not in text, "no series for names nobody loaded"
        assert "process_resident_memory_bytes" in text
        # The machine as `monitor` reads it (no GPU lines where NVML does not load).
        assert "polyinfer_cpu_utilization_ratio " in text
        total = [l for l in text.splitlines() if l.startswith("polyinfer_memory_total_bytes ")]
        assert total and float(total[0].split()[1]) > 0, total

        assert s.request("/v2/repository/models/digits/unload", {})[0] == 200
        assert s.request("/v2/models/digits/infer", infer_body(x))[0] == 404
    finally:
        code = s.stop()
    assert code == 0, "".join(s.log)
    events = [json.loads(line)["event"] for line in "".join(s.log).splitlines() if line]
    assert events[-2:] == ["draining", "stopped"], events
    assert events.count("request") >= 10


def identity_model(path, name, elem, shape):
    """out = Identity(in) for tensors of `elem`: the echo models tritonclient's test sends BYTES
    and FP16 through."""
    import onnx
    from onnx import helper

    g = helper.make_graph([helper.make_node("Identity", [name], [name + "_out"])], "echo",
                          [helper.make_tensor_value_info(name, elem, shape)],
                          [helper.make_tensor_value_info(name + "_out", elem, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    os.makedirs(path)
    onnx.save(m, os.path.join(path, "model.onnx"))


def test_tritonclient_works_unchanged(repo, tmp_path):
    """tritonclient's HTTP client with its defaults (binary tensors in and out), JSON tensors,
    BYTES and FP16, its errors and the repository calls (tests/python/serve_tritonclient.py);
    its gRPC client the same over gRPC (serve_tritonclient_grpc.py)."""
    from onnx import TensorProto

    client_python = os.path.join(ROOT, ".venv-serve", "bin", "python")
    if not os.path.exists(client_python):
        pytest.skip("no .venv-serve (tools/test.sh makes it: POLYINFER_VENV=.venv-serve "
                    "POLYINFER_REQUIREMENTS=tests/python/requirements-serve.txt tools/pyenv.sh)")
    identity_model(repo / "echo_strings" / "1", "text", TensorProto.STRING, [1, 3])
    identity_model(repo / "echo_half" / "1", "half", TensorProto.FLOAT16, [1, 3])
    (repo / "digits" / "config.json").write_text(json.dumps({"version_policy": {"all": {}}}))
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:4]
    (want,) = polyinfer.InferenceSession(DIGITS).run(None, {"pixels": x})
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", want)
    s = Server(repo)
    try:
        env = {k: v for k, v in _tools._cli_environment().items() if k != "PYTHONPATH"}
        for script, url in [("serve_tritonclient.py", s.http.replace("http://", "")),
                            ("serve_tritonclient_grpc.py", s.grpc)]:
            r = subprocess.run([client_python, os.path.join(os.path.dirname(__file__), script),
                                url, str(tmp_path / "x.npy"), str(tmp_path / "want.npy")],
                               capture_output=True, text=True, timeout=300, env=env)
            assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (script, r.stdout +
                                                                           r.stderr)
    finally:
        assert s.stop() == 0, "".join(s.log)


def slow_model(path, products=24, n=512):
    """y = sum over rows of (x tiled to n x n) W W ... W: `products` n x n products (~6 GFLOP),
    a run long enough (tens of ms or more) for requests sent meanwhile to find the version
    busy, from a one-row input."""
    import onnx
    from onnx import TensorProto, helper

    w = np.random.default_rng(0).uniform(-0.05, 0.05, (n, n)).astype(np.float32)
    nodes, prev = [helper.make_node("Tile", ["x", "reps"], ["t"])], "t"
    for i in range(products):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"p{i}"]))
        prev = f"p{i}"
    nodes.append(helper.make_node("ReduceSum", [prev, "axis0"], ["y"], keepdims=1))
    g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                        [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [onnx.numpy_helper.from_array(w, "w"),
                           onnx.numpy_helper.from_array(np.array([n, 1], np.int64), "reps"),
                           onnx.numpy_helper.from_array(np.array([0], np.int64), "axis0")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    os.makedirs(path)
    onnx.save(m, os.path.join(path, "model.onnx"))
    (path.parent / "config.json").write_text(json.dumps({"threads": 1}))


def test_a_full_queue_and_a_wait_past_its_timeout_are_503(tmp_path):
    import threading

    slow_model(tmp_path / "slow" / "1")
    s = Server(tmp_path, "--max-queue", "1")
    body = {"inputs": [{"name": "x", "shape": [1, 512], "datatype": "FP32",
                        "data": [0.01] * 512}]}
    try:
        # Six at once: one runs, one waits, the others find the queue full.
        results = [None] * 6

        def send(i, b=body):
            results[i] = s.request("/v2/models/slow/infer", b)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(r[0] for r in results)
        assert codes.count(200) >= 1 and codes.count(503) >= 1, results
        full = [r[1]["error"] for r in results if r[0] == 503]
        assert all("requests waiting already (--max-queue)" in e for e in full), full
        # A request that may wait 1 ms, sent while another runs, times out.
        first = threading.Thread(target=send, args=(0,))
        first.start()
        time.sleep(0.05)
        timed = dict(body, parameters={"timeout": 1000})
        status, err = s.request("/v2/models/slow/infer", timed)
        first.join()
        assert results[0][0] == 200, results[0]
        assert status == 503 and "timed out after 1 ms waiting for its turn" in err["error"], err
        text = s.request("/metrics", base=s.metrics)[1]
        assert 'polyinfer_requests_in_flight{model="slow",version="1"} 0' in text
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_polling_picks_up_new_versions_and_models(tmp_path):
    os.makedirs(tmp_path / "digits" / "1")
    shutil.copy(DIGITS, tmp_path / "digits" / "1" / "model.onnx")
    s = Server(tmp_path, "--repository-poll-secs", "1")

    def eventually(check, what):
        deadline = time.time() + 60
        while time.time() < deadline:
            if check():
                return
            time.sleep(0.2)
        raise AssertionError(f"not seen within 60 s: {what}\n" + "".join(s.log))

    try:
        assert s.request("/v2/models/digits")[1]["versions"] == ["1"]
        os.makedirs(tmp_path / "digits" / "2")
        shutil.copy(DIGITS, tmp_path / "digits" / "2" / "model.onnx")
        eventually(lambda: s.request("/v2/models/digits")[1]["versions"] == ["2"],
                   "version 2 of digits")
        os.makedirs(tmp_path / "other" / "1")
        shutil.copy(DIGITS, tmp_path / "other" / "1" / "model.onnx")
        eventually(lambda: s.request("/v2/models/other/ready")[0] == 200, "model other")
        shutil.rmtree(tmp_path / "other")
        eventually(lambda: s.request("/v2/models/other")[0] == 404, "model other unloaded")
        assert s.request("/v2/models/digits/ready")[0] == 200
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_dynamic_batching_runs_requests_together(tmp_path):
    import threading

    from onnx import TensorProto

    os.makedirs(tmp_path / "digits" / "1")
    shutil.copy(DIGITS, tmp_path / "digits" / "1" / "model.onnx")
    # Two instances: two batcher workers wait on the one queue, and one takes what the other
    # was waiting for.
    (tmp_path / "digits" / "config.json").write_text(json.dumps(
        {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_us": 300000},
         "instance_count": 2}))
    identity_model(tmp_path / "fixed" / "1", "half", TensorProto.FLOAT16, [1, 3])
    (tmp_path / "fixed" / "config.json").write_text(json.dumps({"max_batch_size": 4}))
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))
    sess = polyinfer.InferenceSession(DIGITS)
    parts = [x[0:1], x[1:3], x[3:6], x[6:7]]  # 7 images in 4 requests
    s = Server(tmp_path)
    try:
        results = [None] * len(parts)

        def send(i):
            results[i] = s.request("/v2/models/digits/infer", infer_body(parts[i]))

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(parts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for part, (status, out) in zip(parts, results):
            assert status == 200, out
            (want,) = sess.run(None, {"pixels": part})
            got = np.array(out["outputs"][0]["data"], np.float32).reshape(want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        text = s.request("/metrics", base=s.metrics)[1]
        runs = [line for line in text.splitlines()
                if line.startswith('polyinfer_batch_size_count{model="digits"')]
        assert runs and 1 <= int(runs[0].split()[-1]) < len(parts), runs
        assert 'polyinfer_batch_size_sum{model="digits",version="1"} 7' in text
        assert 'polyinfer_inference_total{model="digits",version="1"} 7' in text
        status, err = s.request("/v2/models/digits/infer", infer_body(x[:9]))
        assert status == 400 and "over the model's max_batch_size of 8" in err["error"], err
        index = {e["name"]: e for e in s.request("/v2/repository/index", {})[1]}
        assert index["fixed"]["state"] == "UNAVAILABLE"
        assert "first dimension dynamic" in index["fixed"]["reason"], index["fixed"]
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_instances_run_requests_side_by_side(tmp_path):
    import threading

    slow_model(tmp_path / "slow" / "1")
    (tmp_path / "slow" / "config.json").write_text(json.dumps({"threads": 1,
                                                               "instance_count": 2}))
    s = Server(tmp_path, "--max-queue", "0")  # nothing may wait: only free instances serve
    body = {"inputs": [{"name": "x", "shape": [1, 512], "datatype": "FP32",
                        "data": [0.01] * 512}]}
    try:
        for n, all_ok in [(2, True), (4, False)]:
            results = [None] * n

            def send(i):
                results[i] = s.request("/v2/models/slow/infer", body)

            threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            codes = [r[0] for r in results]
            if all_ok:
                assert codes == [200, 200], results  # one request per instance, no wait
            else:
                assert 200 in codes and 503 in codes, results
    finally:
        assert s.stop() == 0, "".join(s.log)


def load_loop(s, body, stop, results):
    """Sends `body` to digits until `stop` is set, recording (status, version or error)."""
    while not stop.is_set():
        try:
            status, out = s.request("/v2/models/digits/infer", body)
        except (urllib.error.URLError, ConnectionError) as e:  # refused once the server stops
            results.append((0, str(e)))
            continue
        results.append((status, out.get("model_version") if status == 200 else out))


def test_version_swap_and_rollback_under_load_fail_no_request(tmp_path):
    import threading

    for v in ("1", "2"):
        os.makedirs(tmp_path / "digits" / v)
        shutil.copy(DIGITS, tmp_path / "digits" / v / "model.onnx")
    config = tmp_path / "digits" / "config.json"
    config.write_text(json.dumps({"version_policy": {"specific": {"versions": [1]}}}))
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:2]
    s = Server(tmp_path)
    stop, results = threading.Event(), []
    threads = [threading.Thread(target=load_loop, args=(s, infer_body(x), stop, results))
               for _ in range(4)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)
        config.write_text(json.dumps({"version_policy": {"specific": {"versions": [2]}}}))
        assert s.request("/v2/repository/models/digits/load", {})[0] == 200
        time.sleep(0.3)
        config.write_text(json.dumps({"version_policy": {"specific": {"versions": [1]}}}))
        assert s.request("/v2/repository/models/digits/load", {})[0] == 200  # the rollback
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join()
        code = s.stop()
    assert code == 0, "".join(s.log)
    failed = [r for r in results if r[0] != 200]
    assert not failed, failed[:5]
    versions = {r[1] for r in results}
    assert versions == {"1", "2"}, versions
    assert results[-1][1] == "1", "the last requests ran on the version rolled back to"


def test_oversized_bodies_and_sigterm_under_load(tmp_path):
    import threading

    os.makedirs(tmp_path / "digits" / "1")
    shutil.copy(DIGITS, tmp_path / "digits" / "1" / "model.onnx")
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:2]
    s = Server(tmp_path, "--max-body-mb", "1")
    big = np.zeros((4200, 1, 8, 8), np.float32)  # ~1.6 MB of JSON
    status, err = s.request("/v2/models/digits/infer", infer_body(big))
    assert status == 413 and "over 1048576 bytes" in err["error"], (status, err)
    stop, results = threading.Event(), []
    threads = [threading.Thread(target=load_loop, args=(s, infer_body(x), stop, results))
               for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    code = s.stop()  # SIGTERM while the loaders run
    stop.set()
    for t in threads:
        t.join()
    assert code == 0, "".join(s.log)
    statuses = {r[0] for r in results}
    assert 200 in statuses and statuses <= {200, 503, 0}, statuses  # served, draining, refused


def test_the_kserve_sdk_client_works_unchanged(tmp_path):
    """kserve's InferenceRESTClient (v2): health, model readiness, binary and JSON tensors
    (tests/python/serve_kserve.py, from .venv-serve)."""
    client_python = os.path.join(ROOT, ".venv-serve", "bin", "python")
    if not os.path.exists(client_python):
        pytest.skip("no .venv-serve (tools/test.sh makes it: POLYINFER_VENV=.venv-serve "
                    "POLYINFER_REQUIREMENTS=tests/python/requirements-serve.txt tools/pyenv.sh)")
    os.makedirs(tmp_path / "repo" / "digits" / "1")
    shutil.copy(DIGITS, tmp_path / "repo" / "digits" / "1" / "model.onnx")
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:3]
    (want,) = polyinfer.InferenceSession(DIGITS).run(None, {"pixels": x})
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", want)
    s = Server(tmp_path / "repo")
    try:
        env = {k: v for k, v in _tools._cli_environment().items() if k != "PYTHONPATH"}
        r = subprocess.run([client_python, os.path.join(os.path.dirname(__file__),
                                                        "serve_kserve.py"),
                            s.http, str(tmp_path / "x.npy"), str(tmp_path / "want.npy")],
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_connections_waiting_for_a_thread_are_bounded(tmp_path):
    """Two HTTP threads, at most two accepted connections waiting for one: ten concurrent
    requests on a slow model all succeed, and the pending gauge never passes the bound (the
    rest wait in the kernel's backlog, not in the server's memory)."""
    slow_model(tmp_path / "slow" / "1")
    s = Server(tmp_path, "--http-threads", "2", "--max-pending-connections", "2")
    body = {"inputs": [{"name": "x", "shape": [1, 512], "datatype": "FP32",
                        "data": [0.01] * 512}]}
    seen, done = [], threading.Event()

    def watch():
        while not done.is_set():
            text = s.request("/metrics", base=s.metrics)[1]
            for line in text.splitlines():
                if line.startswith("polyinfer_http_pending_connections "):
                    seen.append(int(line.split()[1]))

    try:
        results = [None] * 10

        def send(i):
            results[i] = s.request("/v2/models/slow/infer", body)

        watcher = threading.Thread(target=watch)
        watcher.start()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.set()
        watcher.join()
        assert [r[0] for r in results] == [200] * 10, results
        assert seen and max(seen) <= 2, seen
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_a_stdout_nobody_reads_stalls_no_request(tmp_path):
    """Its log pipe left unread (64 KB fill in a few hundred lines), the server still answers
    every request and exits 0 on SIGTERM: the log's own thread waits on the pipe, the requests
    do not (src/serve/log_writer.h)."""
    os.makedirs(tmp_path / "digits" / "1")
    shutil.copy(DIGITS, tmp_path / "digits" / "1" / "model.onnx")
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:1]
    s = Server(tmp_path, drain=False)
    body = infer_body(x, id="x" * 200)  # long ids: long log lines
    for i in range(1500):
        status, out = s.request("/v2/models/digits/infer", body)
        assert status == 200, (i, out)
    assert s.stop() == 0
