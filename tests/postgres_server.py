"""A real PostgreSQL server for the tests: initdb in a temporary folder, started with pg_ctl
as the ``postgres`` user on a free loopback port, stopped after. ``.ci/run`` installs Debian's
``postgresql`` when it is missing and sets ``BODI_REQUIRE_POSTGRES=1``, so that CI fails
rather than skips without it."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def _bin(name: str) -> str | None:
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(command: list[str]) -> list[str]:
    """Run ``command`` as the ``postgres`` user when we are root (initdb refuses root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PostgresServer:
    """A server in a temporary folder: ``url`` of its ``postgres`` database, and ``stop`` /
    ``start`` for tests of a server that goes away and comes back."""

    def __init__(self, initdb: str, pg_ctl: str):
        self.pg_ctl = pg_ctl
        self.folder = tempfile.mkdtemp(prefix="bodi-pg-")
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self.data, port = os.path.join(self.folder, "data"), _free_port()
        subprocess.run(_as_postgres([initdb, "-D", self.data, "--auth=trust", "-U", "bodi"]),
                       check=True, capture_output=True)
        self.options = (f"-p {port} -k {self.folder} -h 127.0.0.1 -c fsync=off "
                        "-c max_connections=200")
        self.url = f"postgresql://bodi@127.0.0.1:{port}/postgres"

    def start(self) -> None:
        subprocess.run(_as_postgres([self.pg_ctl, "-D", self.data, "-l",
                                     os.path.join(self.folder, "log"), "-o", self.options, "-w",
                                     "start"]), check=True, capture_output=True)

    def stop(self, mode: str = "immediate") -> None:
        subprocess.run(_as_postgres([self.pg_ctl, "-D", self.data, "-m", mode, "-w", "stop"]),
                       capture_output=True)


@contextmanager
def postgres_server(*, control: bool = False) -> Iterator[str | PostgresServer]:
    """Yield the URL of a fresh server's ``postgres`` database (user ``bodi``, trust auth); with
    ``control``, the :class:`PostgresServer` itself."""
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if initdb is None or pg_ctl is None or pytest.importorskip("psycopg") is None:
        if os.environ.get("BODI_REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL (initdb, pg_ctl) is required here but not installed")
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    server = PostgresServer(initdb, pg_ctl)
    server.start()
    try:
        yield server if control else server.url
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def new_database(server_url: str) -> str:
    """A new empty database on the server; returns its URL."""
    import psycopg

    name = f"study_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + f"/{name}"
