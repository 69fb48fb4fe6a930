"""The configuration's JSON Schema: `countersign schema` prints the committed copy, every
configuration the repository ships validates against it (as an editor would check it), and
it refuses what the strict decoder refuses."""
import json
import subprocess
from pathlib import Path

import json5
import jsonschema
import pytest
import yaml

pytestmark = pytest.mark.countersign_only

REPOSITORY = Path(__file__).resolve().parents[2]
COMMITTED = REPOSITORY / "docs" / "countersign.schema.json"
SIDECAR = REPOSITORY / "deploy" / "kubernetes" / "countersign-sidecar.yaml"


def shipped_configurations() -> dict:
    """Every configuration a user is handed: name -> JSON5 text."""
    found = {str(path.relative_to(REPOSITORY)): path.read_text()
             for path in [REPOSITORY / "conf" / "countersign.json5", REPOSITORY / "deploy" / "countersign.json5",
                          *sorted((REPOSITORY / "conf" / "examples").glob("*.json5"))]}
    for document in yaml.safe_load_all(SIDECAR.read_text()):
        if document and document["kind"] == "ConfigMap":
            for key, text in document["data"].items():
                found[f"{SIDECAR.relative_to(REPOSITORY)} ConfigMap {key}"] = text
    return found


@pytest.fixture(scope="module")
def schema(countersign_executable) -> dict:
    printed = subprocess.run([str(countersign_executable), "schema"], capture_output=True, text=True, timeout=30)
    assert printed.returncode == 0, printed.stderr
    return json.loads(printed.stdout)


def validation_errors(schema: dict, text: str) -> list:
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator.iter_errors(json5.loads(text))]


def test_schema_command_prints_the_committed_schema(countersign_executable):
    printed = subprocess.run([str(countersign_executable), "schema"], capture_output=True, timeout=30)
    assert printed.returncode == 0
    assert printed.stdout == COMMITTED.read_bytes(), \
        "docs/countersign.schema.json is stale: countersign schema > docs/countersign.schema.json"


def test_schema_is_a_valid_draft7_schema(schema):
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize("name", sorted(shipped_configurations()))
def test_shipped_configuration_validates(schema, name):
    assert validation_errors(schema, shipped_configurations()[name]) == []


@pytest.mark.parametrize("mistake, fragment", [
    ('{ listn: [{ address: "127.0.0.1:3128" }] }', "listn"),                                        # a typo
    ('{ listen: [{ address: "127.0.0.1:3128" }], unlisted_hosts: "allow" }', "allow"),              # not a choice
    ('{ listen: [{ address: "127.0.0.1:3128" }], workers: "two" }', "'two'"),                       # wrong type
    ('{ listen: [{ address: "127.0.0.1:3128" }], hosts: { "a.example": { trust: {'
     ' pinning: "public-key", pins: ["sha256:abc"] } } } }', "sha256:abc"),                          # not a pin
    ('{ listen: [{ address: "127.0.0.1:3128" }], hosts: { "a.example": { auth: [{ credential: "c",'
     ' schemes: ["kerberos"] }] } } }', "kerberos"),                                                 # not a scheme
    ('{ listen: [{ address: "127.0.0.1:3128" }], limits: { idle_timeout: "ten seconds" } }', "ten seconds"),
    ('{ admin: { address: "127.0.0.1:9901" } }', "listen"),                                          # listen is required
])
def test_schema_refuses_what_the_decoder_refuses(schema, countersign_executable, tmp_path, mistake, fragment):
    errors = validation_errors(schema, mistake)
    assert errors and any(fragment in error for error in errors), errors
    path = tmp_path / "mistake.json5"
    path.write_text(mistake)
    checked = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True,
                             text=True, timeout=30)
    assert checked.returncode == 2, checked.stdout + checked.stderr


def test_every_key_has_a_description(schema):
    undescribed = []

    def visit(node, path):
        for key, value in node.get("properties", {}).items():
            if "description" not in value:
                undescribed.append(f"{path}.{key}")
            visit(value, f"{path}.{key}")
        for child in ("items", "additionalProperties"):
            if isinstance(node.get(child), dict):
                visit(node[child], f"{path}[]")
        for name, value in node.get("definitions", {}).items():
            visit(value, f"#{name}")

    visit(schema, "")
    assert undescribed == []


def test_schema_command_usage(countersign_executable):
    helped = subprocess.run([str(countersign_executable), "schema", "--help"], capture_output=True, text=True, timeout=30)
    assert helped.returncode == 0 and "JSON Schema" in helped.stdout
    wrong = subprocess.run([str(countersign_executable), "schema", "extra"], capture_output=True, text=True, timeout=30)
    assert wrong.returncode == 2 and "unexpected argument extra" in wrong.stderr
    listed = subprocess.run([str(countersign_executable), "--help"], capture_output=True, text=True, timeout=30)
    assert "countersign schema" in listed.stdout
