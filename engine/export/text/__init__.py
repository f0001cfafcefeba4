"""Worksheets and keys as text documents: HTML with MathML, Markdown, and maths as a screen reader says it."""
