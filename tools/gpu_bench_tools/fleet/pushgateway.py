"""Pushing to a Pushgateway, behind basic auth or TLS, with credentials that never reach a command line.

Credentials come from the environment or from a file only its owner can read; the URL may not carry
them (a command line is visible to every user in the process list). No message names a password or
shows a file's content. Every failure is one InputError line: the command then exits with 2 before it
writes anything.

Environment:
  GPU_BENCH_PUSHGATEWAY_USER, GPU_BENCH_PUSHGATEWAY_PASSWORD   basic auth, both or neither
  GPU_BENCH_PUSHGATEWAY_AUTH_FILE   a file holding USER:PASSWORD on its first line (mode 600 or stricter)
  GPU_BENCH_PUSHGATEWAY_CA          CA bundle (PEM) that verifies the Pushgateway's certificate
  GPU_BENCH_PUSHGATEWAY_CERT, GPU_BENCH_PUSHGATEWAY_KEY   client certificate and its key (mode 600)
"""

from __future__ import annotations

import base64
import ipaddress
import os
import socket
import stat
from dataclasses import dataclass, field
from typing import Mapping
from urllib.parse import urlsplit

from ..reading.errors import InputError

ENV_USER = "GPU_BENCH_PUSHGATEWAY_USER"
ENV_PASSWORD = "GPU_BENCH_PUSHGATEWAY_PASSWORD"
ENV_AUTH_FILE = "GPU_BENCH_PUSHGATEWAY_AUTH_FILE"
ENV_CA = "GPU_BENCH_PUSHGATEWAY_CA"
ENV_CERT = "GPU_BENCH_PUSHGATEWAY_CERT"
ENV_KEY = "GPU_BENCH_PUSHGATEWAY_KEY"
MAX_AUTH_FILE_BYTES = 4096


@dataclass(frozen=True)
class Credentials:
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @property
    def basic(self) -> bool:
        return self.user is not None


def credentials_from_env(env: Mapping[str, str] | None = None) -> Credentials:
    env = os.environ if env is None else env
    user, password, auth_file = env.get(ENV_USER), env.get(ENV_PASSWORD), env.get(ENV_AUTH_FILE)
    if auth_file and (user is not None or password is not None):
        raise InputError(f"give basic auth either in {ENV_USER} and {ENV_PASSWORD} or in {ENV_AUTH_FILE}, not both")
    if auth_file:
        user, password = _auth_file(auth_file)
    elif (user is None) != (password is None):
        have, lack = (ENV_USER, ENV_PASSWORD) if user is not None else (ENV_PASSWORD, ENV_USER)
        raise InputError(f"{have} is set but {lack} is not: basic auth needs both")
    if user is not None and (not user or ":" in user):
        raise InputError("the basic auth user name is empty or holds a ':'")
    ca, cert, key = env.get(ENV_CA) or None, env.get(ENV_CERT) or None, env.get(ENV_KEY) or None
    for var, path in ((ENV_CA, ca), (ENV_CERT, cert)):
        if path is not None and not os.path.isfile(path):
            raise InputError(f"{var} names {path}, which is not a file")
    if (cert is None) != (key is None):
        raise InputError(f"a client certificate needs both {ENV_CERT} and {ENV_KEY}")
    if key is not None:
        _private(key, ENV_KEY)
    return Credentials(user, password, ca, cert, key)


def _private(path: str, var: str) -> os.stat_result:
    """A regular file no one but its owner may read or write; refused with one line otherwise."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"{var} names {path}, which cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{var} names {path}, which is not a regular file")
    if st.st_mode & 0o077:
        raise InputError(f"{var} names {path}, which others can read or write (mode {stat.S_IMODE(st.st_mode):04o}): "
                         f"chmod 600 {path}")
    return st


def _auth_file(path: str) -> tuple[str, str]:
    st = _private(path, ENV_AUTH_FILE)
    if st.st_size > MAX_AUTH_FILE_BYTES:
        raise InputError(f"{ENV_AUTH_FILE} names {path}, which is too large for USER:PASSWORD")
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{ENV_AUTH_FILE} names {path}, which cannot be read ({getattr(e, 'strerror', None) or 'not UTF-8'})") from None
    user, sep, password = first.partition(":")
    if not sep or not user or not password:
        raise InputError(f"{ENV_AUTH_FILE} names {path}, whose first line is not USER:PASSWORD")
    return user, password


def checked_url(url: str, creds: Credentials) -> str:
    """The URL to push to, refused with one line where it would leak or send credentials in clear."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise InputError(f"--pushgateway: not a URL ({e})") from None
    if parts.username is not None or parts.password is not None:
        shown = parts._replace(netloc=(parts.hostname or "") + (f":{port}" if port else "")).geturl()
        raise InputError(f"--pushgateway {shown}: credentials in the URL show in the process list; "
                         f"give them in {ENV_AUTH_FILE} or {ENV_USER}/{ENV_PASSWORD}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"--pushgateway {url}: give http://HOST:PORT or https://HOST:PORT")
    if parts.query or parts.fragment:
        raise InputError(f"--pushgateway {url}: no query or fragment; the job and group are added to the path")
    if parts.scheme == "http" and (creds.basic or creds.cert) and not _loopback(parts.hostname):
        raise InputError(f"--pushgateway {url}: basic auth over plain http would send the password in clear; "
                         "use https://")
    if parts.scheme == "http" and creds.ca:
        raise InputError(f"{ENV_CA} is set but --pushgateway {url} is plain http: use https://")
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def push(url: str, job: str, registry, grouping_key: dict[str, str], creds: Credentials, timeout: float) -> None:
    """PUT the registry to the Pushgateway (replacing this job and group's metrics), or one InputError line."""
    import ssl
    import urllib.error

    from prometheus_client import push_to_gateway

    where = f"cannot push to {url} (job {job})"
    try:
        push_to_gateway(url, job=job, registry=registry, grouping_key=grouping_key, timeout=timeout,
                        handler=_handler(creds))
    except urllib.error.HTTPError as e:
        e.close()
        hint = f" (check {ENV_AUTH_FILE} or {ENV_USER}/{ENV_PASSWORD})" if e.code in (401, 403) else ""
        raise InputError(f"{where}: the Pushgateway answered HTTP {e.code} {e.reason}{hint}") from None
    except urllib.error.URLError as e:
        raise InputError(f"{where}: {_reason(e.reason, timeout)}") from None
    except (ssl.SSLError, OSError) as e:
        raise InputError(f"{where}: {_reason(e, timeout)}") from None


def _reason(r, timeout: float) -> str:
    import ssl

    if isinstance(r, (socket.timeout, TimeoutError)):
        return f"no answer within {timeout:g} s"
    if isinstance(r, ssl.SSLCertVerificationError):
        return f"TLS: {r.verify_message or r.reason} (a private CA goes in {ENV_CA})"
    if isinstance(r, ssl.SSLError):
        hint = f" (a client certificate goes in {ENV_CERT} and {ENV_KEY})" if "ALERT" in str(r.reason) else ""
        return f"TLS: {r.reason or r}{hint}"
    if isinstance(r, ConnectionRefusedError):
        return "connection refused (is the Pushgateway running there?)"
    if isinstance(r, OSError):
        return r.strerror or type(r).__name__
    return str(r)


def _handler(creds: Credentials):
    """A push_to_gateway handler: prometheus_client's request, with our TLS context and basic auth."""

    def handler(url, method, timeout, headers, data):
        def send() -> None:
            import urllib.request

            request = urllib.request.Request(url, data=data, method=method)
            for k, v in headers:
                request.add_header(k, v)
            if creds.basic:
                token = base64.b64encode(f"{creds.user}:{creds.password}".encode()).decode("ascii")
                request.add_header("Authorization", f"Basic {token}")
            opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=_tls_context(creds)))
            with opener.open(request, timeout=timeout) as response:
                response.read()

        return send

    return handler


def _tls_context(creds: Credentials):
    import ssl

    try:
        ctx = ssl.create_default_context(cafile=creds.ca)
    except (ssl.SSLError, OSError):
        raise InputError(f"{ENV_CA} names {creds.ca}, which holds no CA certificate in PEM") from None
    if creds.cert:
        try:
            ctx.load_cert_chain(creds.cert, creds.key)
        except (ssl.SSLError, OSError):
            raise InputError(f"{ENV_CERT} and {ENV_KEY} are not a certificate and its key in PEM") from None
    return ctx
