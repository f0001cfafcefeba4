"""Prompt and solution text: Markdown with TeX maths parsed into small trees (TeX in `tex`, Markdown blocks
in `markdown`), plain Unicode text, and XML escaping."""
