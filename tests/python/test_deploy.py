"""deploy/ (docs/serve.md, deploy/README.md): the KServe manifests parse, use only the fields
the KServe CRDs document (serving.kserve.io v1alpha1 ServingRuntime, v1beta1 InferenceService,
as kserve.github.io's API reference lists them), agree with each other, and name routes and
flags `polyinfer serve` has; the Dockerfile runs `serve` with flags it takes. Kubernetes and
Docker do not run here."""

import os
import re
import subprocess

import yaml

from polyinfer import _tools

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DEPLOY = os.path.join(ROOT, "deploy")

# Fields of the CRDs' specs (KServe API reference), and of the core Container they embed.
SERVING_RUNTIME_SPEC = {
    "supportedModelFormats", "protocolVersions", "containers", "multiModel", "disabled",
    "grpcEndpoint", "grpcDataEndpoint", "httpDataEndpoint", "replicas", "storageHelper",
    "nodeSelector", "affinity", "tolerations", "builtInAdapter", "volumes", "annotations",
    "labels", "imagePullSecrets", "workerSpec", "hostIPC"}
MODEL_FORMAT = {"name", "version", "autoSelect", "priority"}
PROTOCOLS = {"v1", "v2", "grpc-v1", "grpc-v2"}
CONTAINER = {"name", "image", "command", "args", "env", "ports", "resources", "livenessProbe",
             "readinessProbe", "startupProbe", "volumeMounts", "imagePullPolicy",
             "securityContext", "workingDir"}
PROBE = {"httpGet", "tcpSocket", "exec", "grpc", "initialDelaySeconds", "periodSeconds",
         "timeoutSeconds", "successThreshold", "failureThreshold"}
PREDICTOR = {"model", "minReplicas", "maxReplicas", "scaleTarget", "scaleMetric",
             "containerConcurrency", "timeout", "canaryTrafficPercent", "serviceAccountName",
             "nodeSelector", "tolerations", "affinity", "volumes", "annotations", "labels",
             "logger", "batcher", "imagePullSecrets"}
MODEL = {"modelFormat", "protocolVersion", "runtime", "storageUri", "args", "env", "resources",
         "name", "ports", "livenessProbe", "readinessProbe", "image"}
SCALE_METRICS = {"cpu", "memory", "concurrency", "rps"}


def load(name):
    with open(os.path.join(DEPLOY, "kserve", name)) as f:
        return yaml.safe_load(f)


def serve_usage():
    r = subprocess.run([_tools.cli_path(), "serve", "--help"], capture_output=True, text=True,
                       env=_tools._cli_environment())
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_kserve_manifests_use_documented_fields_and_agree():
    rt, isvc = load("servingruntime.yaml"), load("inferenceservice.yaml")
    assert rt["apiVersion"] == "serving.kserve.io/v1alpha1" and rt["kind"] == "ServingRuntime"
    spec = rt["spec"]
    assert set(spec) <= SERVING_RUNTIME_SPEC, set(spec) - SERVING_RUNTIME_SPEC
    for f in spec["supportedModelFormats"]:
        assert set(f) <= MODEL_FORMAT, f
    assert set(spec["protocolVersions"]) <= PROTOCOLS and "v2" in spec["protocolVersions"]
    usage = serve_usage()
    (c,) = spec["containers"]
    assert set(c) <= CONTAINER, set(c) - CONTAINER
    assert c["name"] == "kserve-container"  # the name KServe's storage initializer expects
    assert c["args"][0] == "serve"
    flags = {}
    for a in c["args"][1:]:
        flag, _, value = a.partition("=")
        assert flag in usage, f"{flag} is not a flag of polyinfer serve"
        flags[flag] = value
    assert flags["--model-repository"] == "/mnt/models"  # where KServe mounts storageUri
    port = int(flags["--http-port"])
    assert [p["containerPort"] for p in c["ports"]] == [port]
    for probe, path in [("livenessProbe", "/v2/health/live"),
                        ("readinessProbe", "/v2/health/ready")]:
        assert set(c[probe]) <= PROBE, c[probe]
        assert c[probe]["httpGet"] == {"path": path, "port": port}
    ann = rt["metadata"]["annotations"]
    assert ann["prometheus.kserve.io/path"] == "/metrics"
    assert int(ann["prometheus.kserve.io/port"]) == int(flags["--metrics-port"])

    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1"
    assert isvc["kind"] == "InferenceService"
    pred = isvc["spec"]["predictor"]
    assert set(pred) <= PREDICTOR, set(pred) - PREDICTOR
    assert pred["scaleMetric"] in SCALE_METRICS
    assert 1 <= pred["minReplicas"] <= pred["maxReplicas"]
    model = pred["model"]
    assert set(model) <= MODEL, set(model) - MODEL
    assert model["runtime"] == rt["metadata"]["name"]
    assert model["protocolVersion"] in spec["protocolVersions"]
    assert model["modelFormat"]["name"] in {f["name"] for f in spec["supportedModelFormats"]}


def test_dockerfile_serves_with_flags_serve_has():
    text = open(os.path.join(DEPLOY, "Dockerfile")).read()
    assert text.startswith("#") and "\nFROM debian:12\n" in text
    assert 'ENTRYPOINT ["polyinfer", "serve"]' in text
    cmd = re.search(r"^CMD (\[.*\])$", text, re.M)
    args = yaml.safe_load(cmd.group(1))  # a JSON array
    usage = serve_usage()
    flags = dict(zip(args[::2], args[1::2]))
    assert all(f in usage for f in flags), flags
    exposed = set(re.search(r"^EXPOSE (.*)$", text, re.M).group(1).split())
    assert {flags["--http-port"], flags["--metrics-port"]} == exposed
    assert "tools/setup.sh" in text and "polyinfer_cli" in text
