"""Family descriptors: what a family's headline is, its unit and direction, whether it crosses the host link,
whether its figures are the host's, which of its cases are link-bound, which vary with the machine's own state,
and how the generic plot lays it out (docs/json.md, "Family descriptors").

Schema 2 files carry them as ``family.<slug>.*`` context keys.  Older files have none, so a descriptor is
inferred from the cases: ``gbps`` where every case of the family has it, else ``real_time`` (lower is
better), no host link (so no peak lines), no host-side figures and, where every case has an integer ``bytes`` axis, a line
against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from .cases import Case
from .errors import InputError
from .names import snake

FIELDS = ("name", "summary", "axes", "headline", "unit", "better", "headline_kind", "host_link", "plot", "scope",
          "host_side", "spread_axes", "link_bound", "machine_variance", "machine_variance_cause", "revisions")
# A link_bound rule speaks only of cases of 1 MiB and more by their bytes (docs/json.md): below that a copy's
# time is its fixed costs more than the link's throughput.
LINK_BOUND_MIN_BYTES = 1 << 20
# Beyond this noise_pct or detectable_pct a case whose descriptor names the machine's own cause of its spread
# shows that cause in words, not the percentage (docs/methodology.md, "Host-driven cases and the CPU's state").
MACHINE_VARIANCE_PCT = 25.0
# The axes that set how far a case varies between processes, where a file does not say (docs/json.md).
DEFAULT_SPREAD_AXES = ("mem", "dir")
BETTER = ("higher", "lower")
HEADLINE_KINDS = ("rate", "time", "other")
PLOT_KEYS = ("x", "series", "panel", "xlabel")
_FAMILY_KEY = re.compile(r"^family\.([A-Za-z0-9_]+)\.([a-z_]+)$")


@dataclass(frozen=True)
class FamilyDescriptor:
    name: str
    headline: str
    unit: str | None  # None: the case's own time unit (a real_time headline of an older file)
    better: str
    headline_kind: str = "other"
    summary: str = ""
    axes: tuple[str, ...] = ()
    host_link: str = "no"
    plot: dict[str, str] = field(default_factory=dict)
    scope: str = "single_gpu"
    host_side: str = "no"  # files before it have none: their figures are keyed on the GPU alone
    spread_axes: tuple[str, ...] = DEFAULT_SPREAD_AXES  # with the size band, a case's spread group
    link_bound: str | None = None  # None where the file has no family.*.link_bound (older files): see is_link_bound
    machine_variance: str = "no"  # files before it have none: no case names the machine's own cause
    machine_variance_cause: str = ""  # what such a case varies with, as words after "varies with"
    # (N, rule): the cases gpu_bench measures in its way N (2 and up), which earlier versions did not; files
    # before it have none, and every case of theirs is of way 1
    revisions: tuple[tuple[int, str], ...] = ()
    inferred: bool = False  # read from the cases of a file without descriptors

    @property
    def kind(self) -> str:
        """The plot kind of the family's generic figures ('SmallCopy' -> 'small_copy')."""
        return snake(self.name)

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def is_time(self) -> bool:
        return self.headline in ("real_time", "time")

    def crosses_host_link(self, case: Case) -> bool:
        """Whether the case moves data over the host link, by the descriptor's host_link rule."""
        return rule_matches(self.host_link, case.key)

    def is_host_side(self, case_key: str) -> bool:
        """Whether the case's figures are the host's (its CPU's), by the descriptor's host_side rule."""
        return rule_matches(self.host_side, case_key)

    def machine_cause(self, case_key: str) -> str | None:
        """What the case varies with between processes that gpu_bench cannot remove, by the descriptor's
        machine_variance rule: its machine_variance_cause, or None where the rule does not hold."""
        if self.machine_variance_cause and rule_matches(self.machine_variance, case_key):
            return self.machine_variance_cause
        return None

    def way(self, case_key: str) -> int:
        """How gpu_bench measured the case: the highest way of the descriptor's revisions whose rule holds for
        it, else 1. Two files' figures of a case are comparable only where its ways agree."""
        return way_of(self.revisions, case_key)

    def is_link_bound(self, case: Case) -> bool:
        """Whether the case is a copy at the host link's own throughput, measured in gpu_bench.link_rounds
        rounds: by the descriptor's link_bound rule, for cases of 1 MiB and more. A file without the rule
        (before gpu_bench wrote it) is read by link_bound_oracle."""
        if self.link_bound is None:
            return link_bound_oracle(case)
        size = case.axis_int("bytes")
        return rule_matches(self.link_bound, case.key) and size is not None and size >= LINK_BOUND_MIN_BYTES


def link_bound_oracle(case: Case) -> bool:
    """gpu_bench's link_bound rule as these tools held it before files carried it: Transfer's pinned and
    registered copies of 1 MiB and more. Only for files without family.*.link_bound, and for tests."""
    size = case.axis_int("bytes")
    return (case.family == "Transfer" and case.axis("mem") in ("pinned", "registered") and size is not None
            and size >= LINK_BOUND_MIN_BYTES)


def rule_matches(rule: str, case_key: str) -> bool:
    """A descriptor's yes/no rule for one case: 'yes', 'no', or tokens joined by '|', any of which holding means
    yes. A key:value token holds where it is one of the case name's parts; key>=N where the name's value of key
    is a whole number, N or more."""
    rule = rule.strip()
    if rule in ("yes", "no", ""):
        return rule == "yes"
    parts = case_key.split("/")[1:]
    values = dict(p.split(":", 1) for p in parts if ":" in p)

    def holds(token: str) -> bool:
        key, ge, least = token.strip().partition(">=")
        if not ge:
            return key in parts
        value = values.get(key, "")
        return value.isdigit() and least.isdigit() and int(value) >= int(least)

    return any(holds(tok) for tok in rule.split("|"))


def beyond_machine_variance_pct(*pcts: float | None) -> bool:
    """Whether any of a case's noise_pct or detectable_pct is above MACHINE_VARIANCE_PCT (a figure that is not
    repeatable is: its noise_pct is 100 or more)."""
    return any(p is not None and p > MACHINE_VARIANCE_PCT for p in pcts)


def _written(ctx: dict, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """Each family's `keys` and name as a context's family.<slug>.* writes them, the rest of its descriptor unread."""
    groups: dict[str, dict[str, str]] = {}
    for k, v in ctx.items():
        m = _FAMILY_KEY.match(str(k))
        if m and m.group(2) in ("name",) + keys:
            groups.setdefault(m.group(1), {})[m.group(2)] = str(v).strip()
    return [g for g in groups.values() if g.get("name")]


def host_side_rules(ctx: dict) -> dict[str, str]:
    """Family name -> its host_side rule, from a context's family.<slug>.{name,host_side} alone."""
    return {g["name"]: g.get("host_side") or "no" for g in _written(ctx, ("host_side",))}


def machine_variance_rules(ctx: dict) -> dict[str, tuple[str, str]]:
    """Family name -> its (machine_variance rule, machine_variance_cause), from a context's family.<slug>.* keys
    alone, for the families whose descriptor names a cause."""
    return {g["name"]: (g.get("machine_variance") or "no", g["machine_variance_cause"])
            for g in _written(ctx, ("machine_variance", "machine_variance_cause")) if g.get("machine_variance_cause")}


def revision_rules(ctx: dict) -> dict[str, tuple[tuple[int, str], ...]]:
    """Family name -> its revisions (FamilyDescriptor.revisions), from a context's family.<slug>.{name,revisions}
    alone; a family without the key measures every case in way 1."""
    return {g["name"]: parse_revisions(g["revisions"], f"family {g['name']}.revisions")
            for g in _written(ctx, ("revisions",)) if g.get("revisions")}


def way_of(revisions: tuple[tuple[int, str], ...], case_key: str) -> int:
    """The highest way of `revisions` whose rule holds for the case, else 1 (FamilyDescriptor.way)."""
    return max((n for n, rule in revisions if rule_matches(rule, case_key)), default=1)


def parse_revisions(text: str, where: str) -> tuple[tuple[int, str], ...]:
    """'2=dir:bidir;3=dir:h2d|engine:sm' -> ((2, 'dir:bidir'), (3, 'dir:h2d|engine:sm'))."""
    out = []
    for entry in text.split(";"):
        n, sep, rule = entry.strip().partition("=")
        if not entry.strip():
            continue
        if not sep or not n.strip().isdigit() or int(n) < 2 or not rule.strip():
            raise InputError(f"{where}: revisions entry {entry.strip()!r} is not N=RULE with N from 2")
        out.append((int(n), rule.strip()))
    return tuple(out)


def parse_plot_hint(text: str, where: str) -> dict[str, str]:
    """'x=bytes;series=mem;panel=dir' -> {'x': 'bytes', ...}; keys other than x, series, panel and xlabel (the
    x axis's words) are ignored."""
    out: dict[str, str] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise InputError(f"{where}: plot hint {text!r} is not KEY=AXIS;KEY=AXIS")
        k, v = (x.strip() for x in part.split("=", 1))
        if k in PLOT_KEYS and v:
            out[k] = v
    return out


def _from_context(path: str, ctx: dict) -> dict[str, FamilyDescriptor]:
    groups: dict[str, dict[str, str]] = {}
    for k, v in ctx.items():
        m = _FAMILY_KEY.match(str(k))
        if m and m.group(2) in FIELDS:
            groups.setdefault(m.group(1), {})[m.group(2)] = str(v).strip()
    out: dict[str, FamilyDescriptor] = {}
    for slug, d in groups.items():
        where = f"{path}: family.{slug}"
        name = d.get("name") or ""
        if not name:
            raise InputError(f"{where} has no name")
        headline = d.get("headline") or ""
        if not headline:
            raise InputError(f"{where}.headline is missing")
        better = d.get("better", "")
        if better not in BETTER:
            raise InputError(f"{where}.better is {better!r}, not 'higher' or 'lower'")
        kind = d.get("headline_kind") or "other"
        if kind not in HEADLINE_KINDS:
            raise InputError(f"{where}.headline_kind is {kind!r}, not one of {', '.join(HEADLINE_KINDS)}")
        axes = tuple(a.strip() for a in d.get("axes", "").split(",") if a.strip())
        out[name] = FamilyDescriptor(
            name=name, headline="real_time" if headline == "time" else headline, unit=d.get("unit") or None,
            better=better, headline_kind=kind, summary=d.get("summary", ""), axes=axes,
            host_link=d.get("host_link") or "no", plot=parse_plot_hint(d.get("plot", ""), f"{where}.plot"),
            scope=d.get("scope") or "single_gpu", host_side=d.get("host_side") or "no",
            link_bound=d["link_bound"] if "link_bound" in d else None,
            machine_variance=d.get("machine_variance") or "no",
            machine_variance_cause=d.get("machine_variance_cause", ""),
            revisions=parse_revisions(d.get("revisions", ""), f"{where}.revisions"),
            spread_axes=tuple(a.strip() for a in d["spread_axes"].split(",") if a.strip())
            if "spread_axes" in d else DEFAULT_SPREAD_AXES,
        )
    return out


def infer(family: str, cases: list[Case]) -> FamilyDescriptor:
    """The descriptor of a family in a file without one (docs/json.md, "Files of schema 1")."""
    measured = [c for c in cases if c.ok]
    rate = bool(measured) and all(c.has_metric("gbps") for c in measured)
    axes: list[str] = []
    for c in cases:  # an optional axis goes where the cases that have it put it
        prev = None
        for k, _ in c.name.axes:
            if k not in axes:
                axes.insert(axes.index(prev) + 1 if prev is not None else 0, k)
            prev = k
    plot: dict[str, str] = {}
    if "bytes" in axes and cases and all(c.axis_int("bytes") is not None for c in cases):
        plot["x"] = "bytes"
        before = [a for a in axes[: axes.index("bytes")] if a != "device"]
        after = [a for a in axes[axes.index("bytes") + 1:] if a != "device"]
        if before and after:  # a figure per leading axis, a panel per trailing one
            plot["panel"] = after[-1]
        elif before:
            plot["panel"] = before[-1]
    if rate:
        return FamilyDescriptor(family, "gbps", "GB/s", "higher", "rate", axes=tuple(axes), plot=plot, inferred=True)
    return FamilyDescriptor(family, "real_time", None, "lower", "time", axes=tuple(axes), plot=plot, inferred=True)


def descriptors_of(path: str, context: dict, schema: str | None, cases: Iterable[Case]) -> dict[str, FamilyDescriptor]:
    """Every family of a file's cases: its written descriptor where the file has one (schema 2), else one
    inferred from its cases."""
    out = _from_context(path, context) if schema == "2" else {}
    by_family: dict[str, list[Case]] = {}
    for c in cases:
        by_family.setdefault(c.family, []).append(c)
    for fam, family_cases in by_family.items():
        if fam not in out:
            out[fam] = infer(fam, family_cases)
    return out
