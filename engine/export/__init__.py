"""Exports of a bank: worksheets and keys (Markdown, HTML, PDF) and LMS files (Moodle, QTI, JSON)."""
