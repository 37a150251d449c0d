"""What every command line shares: one-line errors with exit status 2, colour only on a terminal."""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import sys
from typing import Callable, Sequence

from ..reading.errors import InputError

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus the usage) and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse's own hook
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def run(prog: str, body: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    try:
        return body(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2); main() still returns a status
        if e.code is None:
            return EXIT_OK
        if isinstance(e.code, int):
            return e.code
        print(e.code, file=sys.stderr)
        return EXIT_BAD_INPUT
    except InputError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except re.error as e:
        print(f"{prog}: error: bad regular expression: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except sqlite3.DatabaseError as e:
        print(f"{prog}: error: database: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader went away (| head); say nothing more and keep Python quiet at exit.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"{prog}: error: cannot write{where}: {e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT


def want_colour(mode: str, stream=None) -> bool:
    stream = stream or sys.stdout
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty() and os.environ.get("TERM") != "dumb"


def _checked(text: str, cast, noun: str, ok, rule: str):
    """`text` as `cast` gives it, or argparse's one-line error: `noun` when it does not parse, `rule` when
    `ok` refuses the value."""
    try:
        v = cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {noun}: {text!r}") from None
    if not ok(v):
        raise argparse.ArgumentTypeError(rule)
    return v


def positive_float(text: str) -> float:
    return _checked(text, float, "a number", lambda v: v >= 0, f"must be 0 or more: {text!r}")


def probability(text: str) -> float:
    """A significance level: strictly between 0 and 1."""
    return _checked(text, float, "a number", lambda v: 0.0 < v < 1.0,
                    f"must be between 0 and 1 (exclusive), not {text}")


def positive_int(text: str) -> int:
    return _checked(text, int, "a whole number", lambda v: v > 0, f"must be 1 or more, not {text}")

