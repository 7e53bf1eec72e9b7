"""Storage names: the one parser of what a user names as a study's storage, and the one masking
of the passwords such a name may carry.

A storage is named by a file path (``study.db``), an SQLite URL as Optuna and SQLAlchemy
read it (``sqlite:///study.db`` is ``study.db`` relative to the working directory,
``sqlite:////abs/study.db`` the absolute path ``/abs/study.db``), or a PostgreSQL URL
(``postgresql://user[:password]@host[:port]/database[?options]``; ``postgres://`` is the
same). :func:`mask` removes a password from any text that may hold such a URL, whether in
the URL's user part or as a ``password=`` option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

POSTGRES_SCHEMES = ("postgresql", "postgres")
SCHEMES = ("sqlite", *POSTGRES_SCHEMES)

#: ``scheme://user:password@`` (the password up to the last ``@`` of the user part)
_USER_PASSWORD = re.compile(r"(?P<head>\b(?:postgres|postgresql)(?:\+\w+)?://[^:/@\s]*:)"
                            r"(?P<password>[^@\s]*)(?=@)")
#: ``password=...`` as a URL query option or a libpq keyword
_PASSWORD_OPTION = re.compile(r"(?P<head>\bpassword=)(?P<password>'[^']*'|[^&\s]+)",
                              re.IGNORECASE)


@dataclass(frozen=True)
class StorageName:
    """A parsed storage name: ``kind`` is ``"sqlite"`` (with ``path``) or ``"postgresql"``
    (with ``url``, the name as given)."""

    kind: str
    path: Path | None = None
    url: str | None = None

    @property
    def is_url(self) -> bool:
        """Whether the storage is a database server (not a file)."""
        return self.kind != "sqlite"


def is_url(name: object) -> bool:
    """Whether ``name`` is written as a URL (``scheme://...``), bodi's or another library's
    (an Optuna RDB storage)."""
    return isinstance(name, str) and "://" in name


def parse(name: str | Path) -> StorageName:
    """The storage that ``name`` names; an unknown URL scheme is an error that lists the
    known forms."""
    if isinstance(name, Path) or not is_url(name):
        return StorageName("sqlite", path=Path(name))
    scheme, _, rest = name.partition("://")
    if scheme == "sqlite":
        if not rest.startswith("/") or rest == "/":
            raise ValueError(f"{name!r}: an SQLite URL is sqlite:///relative/path or "
                             "sqlite:////absolute/path")
        return StorageName("sqlite", path=Path(rest[1:]))
    if scheme in POSTGRES_SCHEMES:
        return StorageName("postgresql", url=name)
    raise ValueError(f"unknown storage URL scheme {scheme!r}: use a file path, "
                     "sqlite:///relative/path or postgresql://user@host:port/database")


def mask(text: str) -> str:
    """``text`` with every password of a database URL or a ``password=`` option replaced by
    ``***``."""
    text = _USER_PASSWORD.sub(lambda m: f"{m['head']}***", text)
    return _PASSWORD_OPTION.sub(lambda m: f"{m['head']}***", text)
