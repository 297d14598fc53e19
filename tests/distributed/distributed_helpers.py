"""Helpers of the multi-process tests: a real redis-server on loopback, tools, worker processes."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import frametrace as ft

PROGS = Path(__file__).parent / "progs"
CACHE_KEY = "test-cache-key-0123456789abcdef"


def find_tool(name: str) -> str | None:
    """`name` on PATH, next to this Python (the mpich wheel installs mpiexec there), or in sbin."""
    for candidate in (shutil.which(name), str(Path(sys.executable).with_name(name)),
                      f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server on 127.0.0.1 with no persistence; kill/pause/resume for failure tests."""

    def __init__(self, binary: str, workdir: Path):
        self.binary, self.workdir = binary, workdir
        self.proc = None
        self.paused = False
        for _ in range(5):             # another process may grab the port between probe and bind
            self.port = _free_port()
            self.proc = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(workdir), "--daemonize", "no", "--protected-mode", "yes"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError("could not start redis-server on a loopback port")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            time.sleep(0.02)
        return False

    def kill(self):
        """SIGKILL, as a crash would."""
        self.resume()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def pause(self):
        """SIGSTOP: connections are accepted by the kernel but never answered (a hung server)."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self):
        if self.paused and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def stop(self):
        if self.proc is None:
            return
        self.resume()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def patch_settings(monkeypatch, **settings):
    """Set frametrace settings through ft.config where it has them, else the environment."""
    known = ft.config.as_dict()
    in_config = {k: v for k, v in settings.items() if k in known}
    for k, v in settings.items():
        if k not in known:
            monkeypatch.setenv("FRAMETRACE_" + k.upper(), str(v))
    return ft.config.patch(**in_config)


def worker_env(cache_dir, url=None, **extra) -> dict:
    """Environment of a worker process: its own local cache dir, PGO on, the remote cache at `url`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMETRACE_")}
    env.update(FRAMETRACE_CACHE_DIR=str(cache_dir), FRAMETRACE_PGO="1", FRAMETRACE_CACHE_KEY=CACHE_KEY)
    if url:
        env["FRAMETRACE_REMOTE_CACHE"] = url
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_worker(*args, env, timeout=120) -> dict:
    """Run progs/cache_worker.py; its JSON line."""
    proc = subprocess.run([sys.executable, str(PROGS / "cache_worker.py"), *map(str, args)], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]) | {"stderr": proc.stderr}
