"""deploy/kubernetes/countersign-sidecar.yaml agrees with the configuration it ships: the
sidecar is a native sidecar (an init container that keeps running, so it starts before and
stops after the application), runs that file, its ports and probes are the configured listener
and admin endpoints, its memory request and limit fit what the proxy was measured to use,
every file the configuration names is provided by a mount (and the Secret key it comes from
exists), the application uses the proxy and trusts the CA without seeing its key, and the
configuration, with the mounts laid out on disk, passes `countersign check`."""
import json
import subprocess
from pathlib import Path

import json5
import pytest
import yaml

pytestmark = pytest.mark.countersign_only

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "countersign-sidecar.yaml"


@pytest.fixture(scope="module")
def example() -> dict:
    documents = [document for document in yaml.safe_load_all(EXAMPLE.read_text()) if document]
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    deployment = by_kind["Deployment"][0]
    pod = deployment["spec"]["template"]["spec"]
    containers = {container["name"]: container for container in pod["containers"]}
    assert "countersign" not in containers, "the proxy must be a native sidecar (initContainers), not a container"
    sidecar = next(c for c in pod.get("initContainers", []) if c["name"] == "countersign")
    assert len(containers) == 1, "one application container beside the sidecar"
    args = sidecar["args"]
    assert args[:2] == ["run", "-c"], args
    config_path = args[2]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: volumes[mount["name"]] | {"readOnly": mount.get("readOnly", False)}
              for mount in sidecar["volumeMounts"]}
    configmaps = {document["metadata"]["name"]: document for document in by_kind["ConfigMap"]}
    secrets = {document["metadata"]["name"]: document for document in by_kind.get("Secret", [])}
    config_mount = str(Path(config_path).parent)
    configmap = configmaps[mounts[config_mount]["configMap"]["name"]]
    config_text = configmap["data"][Path(config_path).name]
    return {"pod": pod, "sidecar": sidecar, "app": next(iter(containers.values())), "mounts": mounts,
            "secrets": secrets, "configmaps": configmaps, "config_path": config_path,
            "config_text": config_text, "config": json5.loads(config_text)}


def test_countersign_is_a_native_sidecar_the_application_waits_for(example):
    """Kubernetes >= 1.29: an init container with restartPolicy Always runs for the pod's whole
    life; the next containers start once its startupProbe passes, and it is stopped last."""
    sidecar = example["sidecar"]
    assert sidecar.get("restartPolicy") == "Always", "without restartPolicy: Always the init container would block the pod"
    startup = sidecar["startupProbe"]["httpGet"]
    assert startup["path"] == "/readyz" and startup["port"] == "admin"
    image = sidecar["image"]
    assert image.endswith(":0.1.0") and "countersign" in image
    assert "make image" in EXAMPLE.read_text() and "skopeo copy oci-archive:" in EXAMPLE.read_text(), \
        "the manifest must say how its image is built and pushed"
    assert "Older clusters" in EXAMPLE.read_text(), "the note on clusters before 1.29 is missing"


def mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[:-2]) * factor
    return float(quantity) / 2**20


def test_memory_request_and_limit_fit_the_measured_rss(example, countersign, origin):
    """The proxy with the example's limits, idle and then under a short loopback load (keep-alive
    uploads and CONNECT tunnels at once): the request covers the idle RSS, and the limit leaves
    at least twice the peak, without being an order of magnitude beyond it."""
    from harness.rawclient import RawConnection, forward_request, request_bytes
    import threading
    proxy = countersign({"workers": example["config"].get("workers", 1)})
    resources = example["sidecar"]["resources"]
    request, limit = mebibytes(resources["requests"]["memory"]), mebibytes(resources["limits"]["memory"])

    def status(field: str) -> float:
        for line in Path(f"/proc/{proxy.process.pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
        raise AssertionError(field)

    assert proxy.admin_get("/readyz")[0] == 200
    idle = status("VmRSS:")
    body, failures = b"x" * 65536, []

    def uploads():
        try:
            with RawConnection("127.0.0.1", proxy.port) as connection:
                for _ in range(10):
                    connection.send(forward_request(origin.url("/upload"), method="POST", body=body))
                    assert connection.read_response().status == 200
        except Exception as error:  # noqa: BLE001  (reported below)
            failures.append(error)

    def tunnel():
        try:
            with RawConnection("127.0.0.1", proxy.port) as connection:
                connection.send(request_bytes("CONNECT", origin.authority, [("Host", origin.authority)]))
                assert connection.read_response("CONNECT").status == 200
                for _ in range(10):
                    connection.send(request_bytes("POST", "/upload", [("Host", origin.authority),
                                                                      ("Content-Length", str(len(body)))], body))
                    assert connection.read_response().status == 200
        except Exception as error:  # noqa: BLE001
            failures.append(error)

    threads = [threading.Thread(target=uploads) for _ in range(32)] + [threading.Thread(target=tunnel) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
    peak = status("VmHWM:")
    assert request >= idle, f"memory request {request} MiB is below the idle RSS {idle:.1f} MiB"
    assert limit >= 2 * peak, f"memory limit {limit} MiB leaves less than twice the peak RSS {peak:.1f} MiB"
    assert limit <= 16 * peak, f"memory limit {limit} MiB is far beyond the peak RSS {peak:.1f} MiB"


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


def test_ports_and_probes_match_the_configuration(example):
    config, sidecar = example["config"], example["sidecar"]
    admin_port = port_of(config["admin"]["address"])
    named = {port["name"]: port["containerPort"] for port in sidecar["ports"]}
    assert named["admin"] == admin_port
    # The kubelet probes from the node: the admin listener must not be loopback-only.
    assert config["admin"]["address"].startswith("0.0.0.0:")
    assert any(block not in ("127.0.0.0/8", "::1/128") for block in config["admin"]["allow"]), \
        "admin.allow must admit the kubelet, which probes from the node's address"
    for probe, path in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")]:
        get = sidecar[probe]["httpGet"]
        assert get["path"] == path
        assert named.get(get["port"], get["port"]) == admin_port


def test_application_uses_the_proxy_on_loopback(example):
    listener = example["config"]["listen"][0]
    assert listener["address"].startswith("127.0.0.1:"), "the proxy is for the pod only"
    env = {entry["name"]: entry.get("value") for entry in example["app"]["env"]}
    url = f"http://{listener['address']}"
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]:
        assert env[name] == url, name


def configured_paths(config: dict) -> list:
    """(key path, absolute path) of every file or directory the configuration names."""
    found = [("interception.ca_certificate", config["interception"]["ca_certificate"]),
             ("interception.ca_key", config["interception"]["ca_key"]),
             ("state_dir", config["state_dir"])]
    for name, credential in config.get("credentials", {}).items():
        for key, value in credential.items():
            if key.endswith("_file") or key in ("certificate", "private_key", "pkcs12"):
                found.append((f"credentials.{name}.{key}", value))
    return found


def mount_for(mounts: dict, path: str):
    best = max((m for m in mounts if path == m or path.startswith(m.rstrip("/") + "/")), key=len, default=None)
    return best, mounts.get(best)


def test_every_configured_file_comes_from_a_mount(example):
    mounts, secrets = example["mounts"], example["secrets"]
    for key, path in configured_paths(example["config"]):
        mount_path, volume = mount_for(mounts, path)
        assert volume is not None, f"{key} ({path}) is on no volume of the sidecar"
        if key == "state_dir":
            assert not volume["readOnly"] and "emptyDir" in volume, "state_dir needs a writable volume"
            continue
        assert volume["readOnly"], f"{key} should come from a read-only mount"
        file_key = Path(path).relative_to(mount_path).as_posix()
        if "secret" in volume:
            name = volume["secret"]["secretName"]
            if name in secrets:
                secret = secrets[name]
                assert file_key in {**secret.get("data", {}), **secret.get("stringData", {})}, \
                    f"Secret {name} has no key {file_key} for {key}"
            else:  # created by the operator, as the file's comment says: a TLS Secret
                assert name == "countersign-ca" and file_key in ("tls.crt", "tls.key"), (name, file_key)
        else:
            assert file_key in example["configmaps"][volume["configMap"]["name"]]["data"]


def test_application_trusts_the_ca_but_never_sees_its_key(example):
    app, pod = example["app"], example["pod"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    ca_mounts = [(mount, volumes[mount["name"]]) for mount in app.get("volumeMounts", [])
                 if volumes[mount["name"]].get("secret", {}).get("secretName") == "countersign-ca"]
    assert ca_mounts, "the application must mount the CA certificate to trust it"
    for mount, volume in ca_mounts:
        items = volume["secret"].get("items")
        assert items and [item["key"] for item in items] == ["tls.crt"], "only the certificate, never tls.key"
    env = {entry["name"]: entry.get("value") for entry in app["env"]}
    assert env["SSL_CERT_FILE"] == f"{ca_mounts[0][0]['mountPath']}/tls.crt"


def test_sidecar_is_locked_down(example):
    context = example["sidecar"]["securityContext"]
    assert context["runAsNonRoot"] and context["readOnlyRootFilesystem"]
    assert context["allowPrivilegeEscalation"] is False and context["capabilities"]["drop"] == ["ALL"]
    # Mounted Secrets are readable by the sidecar's user only through fsGroup.
    assert example["pod"]["securityContext"]["fsGroup"] == context["runAsUser"]


def test_configuration_passes_check_with_the_mounts_laid_out(example, countersign_executable, tmp_path):
    """The pod's file system, rebuilt under tmp_path: the ConfigMap and Secrets at their mount
    paths and the CA made as the file's comment says; then `countersign check` must pass."""
    mounts, config = example["mounts"], example["config"]

    def local(path: str) -> Path:
        return tmp_path / path.lstrip("/")

    for mount_path, volume in mounts.items():
        directory = local(mount_path)
        directory.mkdir(parents=True, exist_ok=True)
        if "configMap" in volume:
            for key, text in example["configmaps"][volume["configMap"]["name"]]["data"].items():
                (directory / key).write_text(text)
        elif "secret" in volume and volume["secret"]["secretName"] in example["secrets"]:
            for key, text in example["secrets"][volume["secret"]["secretName"]].get("stringData", {}).items():
                (directory / key).write_text(text)

    def relocate(value):
        if isinstance(value, dict):
            return {key: relocate(item) for key, item in value.items()}
        if isinstance(value, list):
            return [relocate(item) for item in value]
        if isinstance(value, str) and any(value.startswith(m.rstrip("/") + "/") for m in mounts):
            return str(local(value))
        return value

    relocated = tmp_path / "countersign.json5"
    relocated.write_text(json.dumps(relocate(config), indent=2))

    def check() -> subprocess.CompletedProcess:
        return subprocess.run([str(countersign_executable), "check", "-c", str(relocated)], capture_output=True,
                              text=True, timeout=30)

    checked = check()
    assert checked.returncode == 0, checked.stdout + checked.stderr

    ca_dir = tmp_path / "ca"
    made = subprocess.run([str(countersign_executable), "ca", "init", "--dir", str(ca_dir), "-c", str(relocated)],
                          capture_output=True, text=True, timeout=30)
    assert made.returncode == 0, made.stdout + made.stderr
    ca_mount = local(config["interception"]["ca_certificate"]).parent
    (ca_dir / "ca.pem").rename(ca_mount / "tls.crt")
    (ca_dir / "ca.key").rename(ca_mount / "tls.key")
    checked = check()
    assert checked.returncode == 0, checked.stdout + checked.stderr
