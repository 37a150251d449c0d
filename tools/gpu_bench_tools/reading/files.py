"""Reading a file's text and parsing it: anything unusable becomes one InputError line a person can act on.

A file must be a readable regular file of UTF-8 text, gzip-compressed or not; JSON and TOML are parsed here.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any, Callable

from .errors import InputError

# A full gpu_bench run with every sample is tens of MB; anything near this is not one of ours.
MAX_FILE_BYTES = 1 << 30
_NUMBER_OR_LITERAL_PREFIX = re.compile(r"-?[0-9.eE+\-]*|t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|N(aN?)?|-?I(n(f(i(n(i(ty?)?)?)?)?)?)?")


class _DuplicateKey(Exception):
    pass


def _unreadable(p: Path, e: OSError) -> InputError:
    """The one line for a file the system would not let us stat or read."""
    if isinstance(e, FileNotFoundError):
        return InputError(f"{p}: no such file")
    if isinstance(e, PermissionError):
        return InputError(f"{p}: permission denied")
    return InputError(f"{p}: cannot read ({e.strerror or e})")


def _gunzipped(p: Path, data: bytes) -> bytes:
    """A gzip file's content (archived results are kept compressed), at most MAX_FILE_BYTES of it."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as z:
            out = z.read(MAX_FILE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(f"{p}: a damaged gzip file ({e})") from None
    if len(out) > MAX_FILE_BYTES:
        raise InputError(f"{p}: more than {MAX_FILE_BYTES} bytes once uncompressed, too large for a gpu_bench file")
    return out


def read_text(path: str | os.PathLike, kind: str = "JSON") -> str:
    """The file's text; refuses what is not a readable regular file of UTF-8 text (a FIFO is never opened).
    A gzip-compressed file (by its first bytes, whatever its name) is read uncompressed.

    kind: what the file should be, for the messages ('JSON', 'TOML').
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as e:
        raise _unreadable(p, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory, not a {kind} file")
    if not stat.S_ISREG(st.st_mode):
        what = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or
                stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise InputError(f"{p}: {what}, not a {kind} file")
    if st.st_size > MAX_FILE_BYTES:
        raise InputError(f"{p}: {st.st_size} bytes is too large for a gpu_bench file (at most {MAX_FILE_BYTES})")
    try:
        data = p.read_bytes()
    except MemoryError:
        raise InputError(f"{p}: too large to read into memory") from None
    except OSError as e:
        raise _unreadable(p, e) from None
    if data[:2] == b"\x1f\x8b":
        data = _gunzipped(p, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not {kind} (not UTF-8 text)") from None
    if not text.strip():
        raise InputError(f"{p}: empty file, not {kind}")
    return text



def read_toml(path: str | os.PathLike, what: str) -> dict:
    """A TOML file as a dict, or InputError with one line naming `what` the file should have been."""
    text = read_text(path, kind="TOML")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise InputError(f"{path}: reading TOML needs Python 3.11 or newer, or the tomli package "
                             "(pip install tomli)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not {what} (TOML: {e})") from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _DuplicateKey(dup)
    return d


def parse_json(path: str | os.PathLike, text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as e:
        raise InputError(f"{path}: not one JSON document: key {e.args[0]!r} appears twice in one object "
                         "(two runs merged into one file?)") from None
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            what = ("a second JSON document" if text[e.pos:].lstrip()[:1] in "{[" else "text")
            raise InputError(f"{path}: not one JSON document: {what} after its end at line {e.lineno} column "
                             f"{e.colno} (two runs in one file, or something appended?)") from None
        # Cut off: the document ends inside a string, or on a half-written number or literal.
        tail = text[e.pos:].rstrip()
        if e.msg.startswith("Unterminated string") or _NUMBER_OR_LITERAL_PREFIX.fullmatch(tail):
            raise InputError(f"{path}: truncated JSON (the document stops early, line {e.lineno}); "
                             "was the run interrupted?") from None
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise InputError(f"{path}: not JSON that can be read (nested too deeply)") from None


def read_json(path: str | os.PathLike) -> Any:
    return parse_json(path, read_text(path))


def converted(path: str | os.PathLike, doc: Any, convert: Callable[[str, Any], Any], what: str) -> Any:
    """convert(path, doc), with any sign of a malformed document turned into one InputError line."""
    try:
        return convert(str(path), doc)
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise InputError(f"{path}: {what} ({type(e).__name__}: {e})") from None

