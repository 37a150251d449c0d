"""One module per family that needs a figure of its own: FAMILY, SECTIONS (plot kind -> title) and draw(ctx)."""
