"""A child process started in a scratch directory with its output in files, stopped by PID."""
import os
import signal
import subprocess
from pathlib import Path

from .ports import wait_for_port


class ManagedProcess:
    def __init__(self, argv, workdir: Path, name: str, env=None, preexec_fn=None):
        self.workdir = workdir
        self.stdout_path = workdir / f"{name}.stdout"
        self.stderr_path = workdir / f"{name}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.popen = subprocess.Popen(argv, cwd=workdir, stdout=out, stderr=err,
                                          stdin=subprocess.DEVNULL, env=env, preexec_fn=preexec_fn)
        self.pid = self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, signum: int) -> None:
        if self.alive():
            os.kill(self.pid, signum)

    def stop(self, timeout: float = 10.0):
        """SIGTERM, then SIGKILL if it has not exited within `timeout`; returns the exit code."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.popen.wait(5)
        return self.popen.returncode

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def output_tail(self, lines: int = 20) -> str:
        text = self.stdout_path.read_text(errors="replace") + self.stderr_text()
        return "\n".join(text.splitlines()[-lines:])


def start_listening(argv, workdir: Path, name: str, ports: list, timeout: float = 15.0, env=None,
                    log: Path = None) -> ManagedProcess:
    """Starts `argv` and returns once each of `ports` accepts connections on 127.0.0.1. A
    process that dies or does not listen in time is stopped, and the error names it with the
    tail of its output (and of `log`, its own error log, when given)."""
    process = ManagedProcess(argv, workdir, name, env=env)
    try:
        for port in ports:
            wait_for_port("127.0.0.1", port, timeout=timeout, alive=process.alive)
    except Exception:
        process.stop()
        tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
        raise RuntimeError(f"{name} did not start: {process.output_tail()}\n{tail}")
    return process
