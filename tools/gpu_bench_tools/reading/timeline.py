"""gpu_bench --timeline traces: Chrome trace JSON whose ``otherData.source`` says gpu_bench wrote it."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .files import converted, read_json

TIMELINE_SOURCE = "gpu_bench --timeline"


def is_timeline(doc: Any) -> bool:
    """A Chrome trace of any program (object with traceEvents, or a bare list of events)."""
    return (isinstance(doc, dict) and "traceEvents" in doc) or (
        isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "ph" in doc[0]
    )


@dataclass
class Span:
    name: str
    cat: str
    start_us: float
    dur_us: float
    tid: int
    args: dict[str, Any]


@dataclass
class TimelineCase:
    pid: int
    name: str
    spans: list[Span] = field(default_factory=list)
    thread_names: dict[int, str] = field(default_factory=dict)


@dataclass
class Timeline:
    path: str
    cases: dict[int, TimelineCase]

    @property
    def stem(self) -> str:
        return Path(self.path).stem


def _finite(ev: dict, key: str, where: str, default: float | None = None) -> float:
    v = ev.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(f"{where}: '{key}' is not a finite number")
    return float(v)


def timeline_from_doc(path: str | os.PathLike, doc: Any) -> Timeline:
    return converted(path, doc, _timeline_from_doc, "not a Chrome trace that can be drawn")


def _timeline_from_doc(path: str, doc: Any) -> Timeline:
    other = doc.get("otherData") if isinstance(doc, dict) else None
    source = other.get("source") if isinstance(other, dict) else None
    if source != TIMELINE_SOURCE:
        raise InputError(f"{path}: a Chrome trace from another program (otherData.source is {source!r}, "
                         f"not {TIMELINE_SOURCE!r}); only gpu_bench --timeline traces are drawn")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise InputError(f"{path}: not a Chrome trace ('traceEvents' is not a list)")
    cases: dict[int, TimelineCase] = {}

    def case_for(pid: Any) -> TimelineCase:
        key = pid if isinstance(pid, int) and not isinstance(pid, bool) else hash(str(pid))
        if key not in cases:
            cases[key] = TimelineCase(key, f"case {pid}")
        return cases[key]

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise InputError(f"{path}: traceEvents[{i}] is not an object")
        ph = ev.get("ph")
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if ph == "M":
            name = args.get("name")
            if ev.get("name") == "process_name" and isinstance(name, str):
                case_for(ev.get("pid", 0)).name = name
            elif ev.get("name") == "thread_name" and isinstance(name, str):
                tid = ev.get("tid", 0)
                if isinstance(tid, int):
                    case_for(ev.get("pid", 0)).thread_names[tid] = name
        elif ph == "X":
            where = f"{path}: traceEvents[{i}]"
            ts, dur = _finite(ev, "ts", where), _finite(ev, "dur", where, 0.0)
            if dur < 0:
                raise InputError(f"{where}: 'dur' is negative")
            tid = ev.get("tid", 0)
            tid = tid if isinstance(tid, int) and not isinstance(tid, bool) else 0
            case_for(ev.get("pid", 0)).spans.append(
                Span(str(ev.get("name", "")), str(ev.get("cat", "")), ts, dur, tid, args)
            )
    cases = {k: c for k, c in cases.items() if c.spans}
    if not cases:
        raise InputError(f"{path}: the trace has no complete ('ph': 'X') events to draw")
    return Timeline(path, cases)


def load_timeline(path: str | os.PathLike) -> Timeline:
    doc = read_json(path)
    if not is_timeline(doc):
        raise InputError(f"{path}: not a --timeline trace (no 'traceEvents')")
    return timeline_from_doc(path, doc)
