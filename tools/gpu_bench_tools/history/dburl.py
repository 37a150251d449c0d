"""Where a history lives: an SQLite file or a PostgreSQL URL, and how to name it without its password.

A target is a path (SQLite, the embedded default), `sqlite:///PATH`, or `postgresql://[USER@]HOST[:PORT]/DB`
with any libpq parameter in the query (`?sslmode=require`, `?service=nightly`). The password never needs
to be in the URL: libpq reads `~/.pgpass` (or $PGPASSFILE), service files ($PGSERVICEFILE, `?service=`)
and the PG* environment. A URL with a password may come from $GPU_BENCH_DB (only the user and root can
read a process's environment) but is refused on the command line, where every user of the machine can read
it. Every message names the database with the password masked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..reading.errors import InputError

ENV = "GPU_BENCH_DB"
# libpq's default is to wait for ever on a host that does not answer; a nightly job should not hang.
CONNECT_TIMEOUT_S = 10
PG_SCHEMES = ("postgresql", "postgres")
MASK = "***"


@dataclass(frozen=True)
class Target:
    kind: str  # "sqlite" or "postgresql"
    path: Path | None  # SQLite
    url: object | None  # PostgreSQL: a sqlalchemy.engine.URL (with its password, if it has one)
    shown: str  # for messages: the path, or the URL with the password masked

    @property
    def secret(self) -> str | None:
        """The password the URL holds, so that it can be struck from any message a driver writes."""
        if self.url is None:
            return None
        return self.url.password or self.url.query.get("password") or None


def is_url(text: str) -> bool:
    return "://" in text


def _masked(url) -> str:
    if "password" in url.query:
        url = url.update_query_dict({"password": MASK})
    return url.render_as_string(hide_password=True).replace("%2A%2A%2A", MASK)


def parse(target: str | os.PathLike) -> Target:
    """A path or URL as given; refuses a URL it cannot use with one line (the password masked)."""
    text = os.fspath(target)
    if not is_url(text):
        return Target("sqlite", Path(text), None, text)
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    scheme = text.split("://", 1)[0]
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):
        raise InputError(f"{scheme}://...: not a database URL that can be read (postgresql://USER@HOST/DB, "
                         "or a file path for SQLite)") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise InputError(f"{_masked(url)}: give the SQLite file, e.g. sqlite:///path/history.sqlite")
        return Target("sqlite", Path(url.database), None, url.database)
    if backend not in PG_SCHEMES:
        raise InputError(f"{_masked(url)}: {backend} is not supported; use postgresql://USER@HOST/DB or an SQLite "
                         "file path")
    return Target("postgresql", None, url, _masked(url))


def refuse_password_in_argv(text: str) -> None:
    """A password given on the command line is in the process list for every user to read: refuse it."""
    if not is_url(text):
        return
    t = parse(text)
    if t.secret:
        raise InputError(f"--db {t.shown}: a password on the command line can be read by every user of this "
                         f"machine (ps); put the URL in {ENV} or the password in ~/.pgpass, and give --db without "
                         "it (docs/fleet.md)")


def from_args(given: str | None, default: str | os.PathLike | None) -> str | os.PathLike | None:
    """The database a command uses: --db (never with a password), else $GPU_BENCH_DB, else `default`."""
    if given:
        refuse_password_in_argv(given)
        return given
    env = os.environ.get(ENV, "").strip()
    return env or default


def pg_engine_args(t: Target, read_only: bool, application: str) -> tuple[object, dict]:
    """(URL with a driver, connect arguments) for create_engine; refuses with one line where no driver is there."""
    url = t.url
    if "+" not in url.drivername:
        for module, driver in (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2")):
            try:
                __import__(module)
            except ImportError:
                continue
            url = url.set(drivername=driver)
            break
        else:
            raise InputError(f"{t.shown}: PostgreSQL needs a driver that is not installed: "
                             "pip install './tools[fleet]'")
    args: dict = {}
    if "connect_timeout" not in url.query and not os.environ.get("PGCONNECT_TIMEOUT"):
        args["connect_timeout"] = CONNECT_TIMEOUT_S
    if "application_name" not in url.query and not os.environ.get("PGAPPNAME"):
        args["application_name"] = application
    if read_only and "options" not in url.query and not os.environ.get("PGOPTIONS"):
        # A command that only reads cannot write by mistake, whatever the role may do.
        args["options"] = "-c default_transaction_read_only=on"
    return url, args


def one_line(message: str, t: Target) -> str:
    """A driver's message as one line, without the password even where the driver quoted it."""
    text = " ".join(str(message).split())
    if t.secret:
        text = text.replace(t.secret, MASK)
        from urllib.parse import quote

        text = text.replace(quote(t.secret, safe=""), MASK)
    return text
