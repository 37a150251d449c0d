"""Peer: the bandwidth matrix between every ordered pair of GPUs, and bandwidth against size per pair."""

from __future__ import annotations

from ..points import PlotContext
from ..generic import line_plots, x_values
from ..heatmap import heatmaps

FAMILY = "Peer"
SECTIONS = {"peer_matrix": "Peer bandwidth between GPUs", "peer": "Peer copies by size"}


def draw(ctx: PlotContext):
    out = peer_matrix_plots(ctx.files, ctx.labels)
    desc = ctx.descriptor(FAMILY)
    # At a single size the matrix already shows every pair: a line plot would be one dot a series.
    if desc is not None and desc.plot.get("x") and len(x_values(ctx, desc)) > 1:
        out += line_plots(ctx, desc, panels=("src", "dst"), kind="peer", title="Peer copy bandwidth vs. size")
    return out


def peer_matrix_plots(files, labels):
    """Peer bandwidth between every ordered pair of GPUs at the largest size, one figure per file."""
    return heatmaps(files, "Peer", "peer_matrix", "Peer copy bandwidth (GB/s)",
                     lambda c: c.center("gbps") if c.has_metric("gbps") else None, max,
                     "bandwidth (GB/s, 1 GB = 1e9 B), higher is better", "viridis")


