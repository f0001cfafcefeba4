"""Figures drawn by each renderer: SVG, Typst, a Markdown table, terminal text, and the accessible table and
description."""
