"""curl as the client, run with a clean proxy environment so only what a test sets applies."""
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .wire import field

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy",
                   "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@dataclass
class CurlResult:
    returncode: int
    status: int          # of the last response; 0 when none arrived
    headers: list        # of the last response, (name, value)
    body_path: Path
    stderr: str

    @property
    def body(self) -> bytes:
        return self.body_path.read_bytes() if self.body_path.exists() else b""

    def header(self, name: str, default=None):
        return field(self.headers, name, default)


def curl(args, workdir: Path, env_proxy: dict = None, timeout: float = 60.0, name: str = "curl") -> CurlResult:
    """Runs `curl ARGS` writing the body and the received heads to files in `workdir`.
    The body file pairs with the first URL in ARGS; give later URLs their own `-o`."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARIABLES}
    env.update(env_proxy or {})
    body_path, head_path = workdir / f"{name}.body", workdir / f"{name}.heads"
    command = ["curl", "-sS", "--max-time", str(int(timeout)), "-o", str(body_path),
               "-D", str(head_path), "-w", "%{http_code}", *args]
    completed = subprocess.run(command, env=env, capture_output=True, timeout=timeout + 10)
    status_text = completed.stdout.decode(errors="replace").strip()[-3:]
    return CurlResult(completed.returncode, int(status_text) if status_text.isdigit() else 0,
                      _last_head(head_path), body_path, completed.stderr.decode(errors="replace"))


def _last_head(path: Path) -> list:
    """The fields of the final response in a `curl -D` dump (which holds every head, 1xx included)."""
    if not path.exists():
        return []
    heads = [block for block in path.read_bytes().split(b"\r\n\r\n") if block.strip()]
    if not heads:
        return []
    fields = []
    for line in heads[-1].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields.append((name.decode("latin-1"), value.strip().decode("latin-1")))
    return fields
