"""`openssl s_server` on a loopback port, for tests that need a TLS server serving exactly the
chain they say (appended certificates included) and a record of what the server saw: the
client certificate it received (its verify lines) and, without -www, every byte that arrived."""
import subprocess
import time
from pathlib import Path

from .ports import free_port


class OpenSSLServer:
    def __init__(self, workdir: Path, name: str, certificate: Path, key: Path, chain: Path = None,
                 extra=(), www: bool = True):
        self.port = free_port()
        self.output_path = workdir / f"s_server-{name}.out"
        argv = ["openssl", "s_server", "-accept", f"127.0.0.1:{self.port}",
                "-cert", str(certificate), "-key", str(key)]
        if chain is not None:
            argv += ["-cert_chain", str(chain)]
        argv += list(extra) + (["-www"] if www else [])
        with open(self.output_path, "wb") as out:
            # stdin stays an open pipe: s_server stops at end of input.
            self.popen = subprocess.Popen(argv, cwd=workdir, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.PIPE)
        self.pid = self.popen.pid
        # "ACCEPT" means listening; probing the port would itself be a connection it reports.
        self.wait_for("ACCEPT", timeout=10)

    def output(self) -> str:
        return self.output_path.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float = 5.0, after: int = 0) -> bool:
        """Whether `text` appears in the output past offset `after` within `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output()[after:]:
                return True
            if self.popen.poll() is not None:
                raise RuntimeError(f"s_server exited: {self.output()[-2000:]}")
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        if self.popen.stdin:
            self.popen.stdin.close()
