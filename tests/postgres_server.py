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


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield the URL of a fresh server's ``postgres`` database (user ``bodi``, trust auth)."""
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if initdb is None or pg_ctl is None or pytest.importorskip("psycopg") is None:
        if os.environ.get("BODI_REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL (initdb, pg_ctl) is required here but not installed")
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    folder = tempfile.mkdtemp(prefix="bodi-pg-")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data, port = os.path.join(folder, "data"), _free_port()
    subprocess.run(_as_postgres([initdb, "-D", data, "--auth=trust", "-U", "bodi"]),
                   check=True, capture_output=True)
    options = f"-p {port} -k {folder} -h 127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(_as_postgres([pg_ctl, "-D", data, "-l", os.path.join(folder, "log"), "-o",
                                 options, "-w", "start"]), check=True, capture_output=True)
    try:
        yield f"postgresql://bodi@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_postgres([pg_ctl, "-D", data, "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server_url: str) -> str:
    """A new empty database on the server; returns its URL."""
    import psycopg

    name = f"study_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + f"/{name}"
