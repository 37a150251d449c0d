"""Comparing files case by case (compare), and the comparison as a table, markdown, CSV or JSON (render)."""
