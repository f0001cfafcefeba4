"""Formula items (``kind: formula``): drawn parameters, expressions read without eval, exact comparison of
formulas, their TeX, and the figures they declare."""
