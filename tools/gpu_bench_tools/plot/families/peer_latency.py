"""PeerLatency: the GPU time of one small peer copy between every ordered pair of GPUs."""

from __future__ import annotations

from ..points import PlotContext, to_us
from ..heatmap import heatmaps
from ...reading.load import Case

FAMILY = "PeerLatency"
SECTIONS = {"peer_latency": "Peer copy latency"}


def draw(ctx: PlotContext):
    return peer_latency_plots(ctx.files, ctx.labels)


def _latency_us(c: Case) -> float | None:
    if c.has_metric("latency_us"):
        return c.center("latency_us")
    t = c.center("time")
    return to_us(c, t) if t is not None else None


def peer_latency_plots(files, labels):
    """GPU time of one small (4-byte) peer copy between every ordered pair of GPUs, one figure per file."""
    return heatmaps(files, "PeerLatency", "peer_latency", "Peer copy latency (us)", _latency_us,
                     lambda sizes: 4 if 4 in sizes else min(sizes), "latency (us), lower is better", "viridis_r")


