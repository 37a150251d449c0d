"""A throwaway PostgreSQL server for the tests, started from the server binaries that are installed.

PostgreSQL refuses to run as root, so under root the server runs as an unprivileged user (`postgres`, which
Debian's package creates, else `nobody`) in a fresh folder it owns. It listens on a Unix socket in that
folder (trust, for the test's own set-up) and on 127.0.0.1 with password authentication (what the tools
are tested through); nothing else can reach it. The server is a child of the test process that dies with
it (PR_SET_PDEATHSIG), so a killed test run leaves no server behind; a normal one stops it and removes
the folder.
"""

from __future__ import annotations

import ctypes
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SUPERUSER = "gpu_bench_admin"
# The role the tools log in as in the tests: no superuser, no CREATEDB, owner of its test database only.
ROLE, ROLE_PASSWORD = "nightly", "s3cret-Pa55word!"


def find_bindir() -> Path | None:
    """The folder of initdb and postgres: $GPU_BENCH_PG_BINDIR, Debian's newest version, or PATH."""
    env = os.environ.get("GPU_BENCH_PG_BINDIR")
    if env:
        return Path(env) if (Path(env) / "initdb").exists() else None
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    # The server gets SIGINT (PostgreSQL's fast shutdown) when the test process dies, however it dies.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)  # 1 = PR_SET_PDEATHSIG


class Server:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="gbpg-"))
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        self.user = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.user = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue
            if self.user is None:
                raise RuntimeError("running as root and neither user 'postgres' nor 'nobody' exists")
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)

    def _as_server_user(self) -> dict:
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def start(self) -> "Server":
        pwfile = self.root / "pw"
        pwfile.write_text(ROLE_PASSWORD + "-admin\n")
        if self.user is not None:
            os.chown(pwfile, self.user.pw_uid, self.user.pw_gid)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        init = subprocess.run(
            [str(self.bindir / "initdb"), "-D", str(self.root / "data"), "-U", SUPERUSER, "--no-locale", "-E", "UTF8",
             "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--no-sync"],
            capture_output=True, text=True, env=env, cwd=self.root, **self._as_server_user())
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
        self.log = open(self.root / "server.log", "w")
        if self.user is not None:
            os.chown(self.root / "server.log", self.user.pw_uid, self.user.pw_gid)
        self.proc = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.root / "data"), "-k", str(self.root), "-p", str(self.port),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off", "-c", "max_connections=60", "-c", "shared_buffers=32MB"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.root, preexec_fn=_die_with_parent,
            **self._as_server_user())
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {(self.root / 'server.log').read_text()[-2000:]}")
            if self.admin("SELECT 1", check=False).returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("postgres did not accept connections within 30 s")
            time.sleep(0.1)
        self.admin(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{ROLE_PASSWORD}'")
        return self

    def admin(self, sql: str, dbname: str = "postgres", check: bool = True) -> subprocess.CompletedProcess:
        """Run SQL as the superuser over the Unix socket (psql, so the tests' own set-up needs no driver)."""
        psql = self.bindir / "psql"
        if not psql.exists():
            psql = Path(shutil.which("psql") or "psql")
        out = subprocess.run([str(psql), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-h", str(self.root), "-p",
                              str(self.port), "-U", SUPERUSER, "-d", dbname, "-c", sql],
                             capture_output=True, text=True, env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"})
        if check and out.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {out.stderr.strip()}")
        return out

    def new_database(self, name: str) -> str:
        self.admin(f"CREATE DATABASE {name} OWNER {ROLE}")
        return name

    def url(self, dbname: str, password: str | None = ROLE_PASSWORD, user: str = ROLE) -> str:
        from urllib.parse import quote

        auth = f"{user}:{quote(password, safe='')}" if password is not None else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
