"""Expectations per GPU model, host link and node shape: the figures a healthy node's gate run must reach.

The file is TOML (the one shipped is ``expectations.toml`` beside this module; its header explains how
its numbers were chosen, and docs/fleet.md the format). Anything wrong in it is one InputError line
that names the entry: a typo in a health gate must not pass silently.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..reading.errors import InputError
from ..reading.facts import pcie_max_link
from ..reading.multigpu import NODE_SHAPES, gpu_fact
from ..reading.names import parse_name

if TYPE_CHECKING:
    from ..reading.results import BenchmarkFile

FORMAT = 1
DEFAULT_FILE = "expectations.toml"
WILDCARD = "*"
_GPU_KEYS = {"name", "link", "node", "about", "figure"}
_FIGURE_KEYS = {"case", "metric", "name", "min", "max", "source", "link", "max_nvlink"}


@dataclass(frozen=True)
class Figure:
    case: str  # Family/key:value/...; a value of '*' matches any
    family: str
    axes: tuple[tuple[str, str], ...]
    metric: str
    name: str
    minimum: float | None
    maximum: float | None
    source: str
    link: str | None = None  # only pairs of GPUs joined by this link (topology.i-j.link)
    # At most this many times the pair's NVLink peak per direction, as the run's own context says
    # (topology.i-j.nvlink_gbps): 1 for one direction's figure, 2 for both directions'.
    max_nvlink: float | None = None

    def matches(self, axes: tuple[tuple[str, str], ...]) -> bool:
        """Whether a case's axes (its device axis already removed) are this figure's."""
        if len(axes) != len(self.axes):
            return False
        return all(k == fk and (fv == WILDCARD or v == fv) for (k, v), (fk, fv) in zip(axes, self.axes))

    @property
    def is_pattern(self) -> bool:
        return any(v == WILDCARD for _, v in self.axes)


@dataclass(frozen=True)
class Entry:
    name: str
    link: str
    node: str | None  # one of NODE_SHAPES; None: a node of any shape
    about: str
    figures: tuple[Figure, ...]

    @property
    def key(self) -> str:
        """'NVIDIA H200 on PCIe gen5 x16 in a node of several GPUs': what the entry is chosen by."""
        return key_text(self.name, self.link, self.node)


def key_text(model: str, link: str | None, node: str | None) -> str:
    on = f" on {link}" if link else " (its host link is unavailable)"
    return f"{model}{on} in a node of {node or 'any shape'}"


@dataclass(frozen=True)
class Expectations:
    path: str
    entries: tuple[Entry, ...]
    given: bool  # named by the operator (--expect): a model it lacks is an error, not a note

    def entry(self, model: str, link: str | None, node: str | None) -> Entry | None:
        """The entry of the model and link for this node shape, else the model and link's entry for any node."""
        found = [e for e in self.entries if e.name == model and e.link == link and e.node in (node, None)]
        return min(found, key=lambda e: e.node is None, default=None)

    def missing(self, model: str, link: str | None, node: str | None) -> str:
        """The one line that says this file has no entry for a model on a link in a node of this shape."""
        others = [e.key for e in self.entries if e.name == model]
        known = f"; it has {', '.join(others)}" if others else ""
        return f"{self.path}: no expectation for {key_text(model, link, node)}{known}"


def result_link(f: BenchmarkFile, gpu: int | None = None) -> str | None:
    """The host link an entry is keyed on: the most GPU `gpu` (None: the GPU the file describes as gpu.*)
    and its slot can train to.

    The link as read now would key a GPU whose idle link trained down to a slower entry, or to none,
    instead of judging it against what it should reach; profile.host_link is used only where it is not
    PCIe (NVLink-C2C), which has no generation and width.
    """
    trained = f.fact("profile.host_link") if gpu is None else gpu_fact(f, gpu, "profile.host_link")
    if trained and not trained.startswith("PCIe"):
        return trained
    return pcie_max_link(f, gpu) or trained


def default_path() -> Path:
    return Path(__file__).resolve().parent / DEFAULT_FILE


def load_expectations(path: str | os.PathLike | None = None) -> Expectations:
    """The operator's file, or the one shipped with the tools (path None)."""
    from ..reading.files import read_toml

    given = path is not None
    p = Path(path) if given else default_path()
    doc = read_toml(p, "an expectations file")
    return Expectations(str(p), _entries(str(p), doc), given)


def _entries(path: str, doc: dict) -> tuple[Entry, ...]:
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise InputError(f"{path}: format = {fmt!r}; these tools read expectations of format {FORMAT}")
    extra = set(doc) - {"format", "gpu"}
    if extra:
        raise InputError(f"{path}: unknown key {sorted(extra)[0]!r} (expected format and [[gpu]] entries)")
    gpus = doc.get("gpu")
    if not isinstance(gpus, list) or not gpus:
        raise InputError(f"{path}: no [[gpu]] entries")
    out: list[Entry] = []
    seen: set[tuple[str, str, str | None]] = set()
    for i, g in enumerate(gpus):
        where = f"{path}: gpu[{i}]"
        unknown = set(g) - _GPU_KEYS
        if unknown:
            raise InputError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(_GPU_KEYS))})")
        name, link = _text(g, "name", where), _text(g, "link", where)
        node = _text(g, "node", where, required=False)
        if node is not None and node not in NODE_SHAPES:
            raise InputError(f"{where}: node = {node!r}; it is one of {', '.join(map(repr, NODE_SHAPES))}, or left out "
                             "for a node of any shape")
        where = f"{path}: {key_text(name, link, node)}"
        if (name, link, node) in seen:
            raise InputError(f"{where}: a second entry for the same model, link and node")
        seen.add((name, link, node))
        figs = g.get("figure")
        if not isinstance(figs, list) or not figs:
            raise InputError(f"{where}: no [[gpu.figure]] lines")
        figures = tuple(_figure(fg, f"{where}, figure[{j}]") for j, fg in enumerate(figs))
        about = g.get("about", "")
        if not isinstance(about, str):
            raise InputError(f"{where}: about is not text")
        out.append(Entry(name, link, node, about, figures))
    return tuple(out)


def _text(d: dict, key: str, where: str, required: bool = True) -> str | None:
    v = d.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise InputError(f"{where}: {key} is {'missing' if v is None else 'not text'}")
    return v.strip()


def _number(d: dict, key: str, where: str) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    if type(v) not in (int, float) or not math.isfinite(v):
        raise InputError(f"{where}: {key} = {v!r} is not a finite number")
    return float(v)


def _figure(d: dict, where: str) -> Figure:
    if not isinstance(d, dict):
        raise InputError(f"{where}: not a table")
    unknown = set(d) - _FIGURE_KEYS
    if unknown:
        raise InputError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(_FIGURE_KEYS))})")
    case = _text(d, "case", where)
    cn = parse_name(case)
    if not cn.axes or cn.options or cn.timing or any(k == "device" for k, _ in cn.axes):
        raise InputError(f"{where}: case {case!r} is not Family/key:value/... (no /device:N, no manual_time)")
    metric = _text(d, "metric", where)
    lo, hi = _number(d, "min", where), _number(d, "max", where)
    per_link = _number(d, "max_nvlink", where)
    if lo is None and hi is None and per_link is None:
        raise InputError(f"{where}: {case} {metric} has neither min nor max")
    if per_link is not None and (per_link <= 0 or not {"src", "dst"} <= {k for k, _ in cn.axes}):
        raise InputError(f"{where}: max_nvlink = {per_link:g} needs a positive number and a case of a GPU pair "
                         "(src and dst)")
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"{where}: min {lo:g} is above max {hi:g}")
    return Figure(case=cn.key, family=cn.family, axes=cn.axes, metric=metric,
                  name=_text(d, "name", where, required=False) or f"{cn.key} {metric}",
                  minimum=lo, maximum=hi, source=_text(d, "source", where),
                  link=_text(d, "link", where, required=False), max_nvlink=per_link)
