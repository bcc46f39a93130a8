#!/usr/bin/env python3
"""A throwaway PostgreSQL server for shared optuna studies and the test suite.

    python -m pgc.tuning.postgres_cluster                      # start, print the URL, wait for Ctrl-C, then remove it
    python -m pgc.tuning.postgres_cluster -- pgc tune --storage '{url}' --workers 2 --trials 20
                                                    # run a command against it ({url} and $PGC_POSTGRES_URL)
    python -m pgc.tuning.postgres_cluster --install            # only install the Debian package if it is missing

The cluster lives in a temporary folder (initdb), listens on 127.0.0.1 on a free port with trust
authentication for the local user ``pgc`` (throwaway: fsync off), and is stopped and deleted on exit.
initdb refuses to run as root: as root the cluster belongs to the ``postgres`` user of the Debian
package (or a created ``pgc-postgres`` user). Importable: ``from pgc.tuning.postgres_cluster import Cluster``, then
``with Cluster() as url: ...``.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

USER = "pgc"
DATABASE = "pgc"


class PostgresError(RuntimeError):
    """The server could not be installed, initialised or started (the message says why)."""


def bin_dir() -> Path | None:
    """The folder holding initdb and pg_ctl (Debian: /usr/lib/postgresql/<major>/bin), or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    majors = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(majors[-1]).parent if majors else None


def install() -> Path:
    """Install the Debian package ``postgresql`` if the server binaries are missing; their folder."""
    found = bin_dir()
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise PostgresError("PostgreSQL's initdb/pg_ctl are not installed and apt-get is not available")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "postgresql"]):
        proc = subprocess.run(sudo + cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PostgresError(f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
    found = bin_dir()
    if found is None:
        raise PostgresError("installed the postgresql package but found no initdb")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_user() -> str | None:
    """The user that owns the cluster when running as root (initdb refuses root); None otherwise."""
    if os.geteuid() != 0:
        return None
    import pwd

    for name in ("postgres", "pgc-postgres"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "pgc-postgres"],
        check=True,
        capture_output=True,
    )
    return "pgc-postgres"


class Cluster:
    """Context manager: a fresh cluster in a temporary folder; ``__enter__`` returns its URL."""

    def __init__(self, port: int | None = None, start_timeout: float = 60.0):
        self.port = port
        self.start_timeout = start_timeout
        self.dir: Path | None = None
        self.url: str | None = None
        self._as: list[str] = []
        self._bin: Path | None = None

    def _run(self, *cmd: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        return subprocess.run(self._as + list(cmd), capture_output=True, text=True, timeout=timeout)

    def start(self) -> str:
        self._bin = install()
        user = _server_user()
        self._as = ["runuser", "-u", user, "--"] if user else []
        self.dir = Path(tempfile.mkdtemp(prefix="pgc-postgres-"))
        if user:
            shutil.chown(self.dir, user)
        data = self.dir / "data"
        proc = self._run(
            str(self._bin / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"
        )
        if proc.returncode != 0:
            raise PostgresError(f"initdb failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        for attempt in range(5):  # a free port can be taken between the probe and the bind: try another
            self.port = self.port if (attempt == 0 and self.port) else free_port()
            opts = (
                f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
            )
            proc = self._run(
                str(self._bin / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                opts,
                "-l",
                str(self.dir / "log"),
                "-w",
                "-t",
                str(int(self.start_timeout)),
                "start",
                timeout=self.start_timeout + 30,
            )
            if proc.returncode == 0:
                break
        else:
            log = (self.dir / "log").read_text(errors="replace")[-800:] if (self.dir / "log").exists() else ""
            raise PostgresError(f"pg_ctl start failed: {(proc.stderr or proc.stdout).strip()[-400:]}\n{log}")
        proc = self._run(
            str(self._bin / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            USER,
            "-d",
            "postgres",
            "-qc",
            f"CREATE DATABASE {DATABASE}",
        )
        if proc.returncode != 0:
            raise PostgresError(f"CREATE DATABASE failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"
        return self.url

    def stop(self) -> None:
        if self.dir is None:
            return
        if (self.dir / "data" / "postmaster.pid").exists() and self._bin is not None:
            self._run(str(self._bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def _usage() -> str:
    """The usage lines of the module docstring."""
    return (__doc__ or "").split("\n\n")[1] if __doc__ and "\n\n" in __doc__ else ""


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(_usage())
        return 0
    if argv[:1] and argv[0].startswith("-") and argv[0] not in ("--", "--install"):
        print(f"postgres_cluster: error: unknown option {argv[0]!r}; usage:\n{_usage()}", file=sys.stderr)
        return 2
    if argv[:1] == ["--install"]:
        try:
            print(install())
        except PostgresError as exc:  # one line: what failed
            print(f"postgres_cluster --install: {exc}", file=sys.stderr)
            return 1
        return 0
    command = argv[1:] if argv[:1] == ["--"] else argv
    if command and shutil.which(command[0]) is None:  # before a server starts for nothing
        print(
            f"postgres_cluster: error: no command {command[0]!r} (not on PATH: activate the environment that "
            "installed it, or give its path, e.g. .venv/bin/pgc)",
            file=sys.stderr,
        )
        return 2
    try:
        with Cluster() as url:
            if not command:
                print(url, flush=True)
                stop = {"now": False}

                def handler(*_):
                    stop["now"] = True

                signal.signal(signal.SIGTERM, handler)
                try:
                    while not stop["now"]:
                        time.sleep(0.5)
                except KeyboardInterrupt:
                    pass
                return 0
            print(f"postgres: {url}", file=sys.stderr, flush=True)
            return subprocess.call(
                [a.replace("{url}", url) for a in command], env={**os.environ, "PGC_POSTGRES_URL": url}
            )
    except PostgresError as exc:
        print(f"postgres: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
