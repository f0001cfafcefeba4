"""A student's practice: sessions (practice, exam, review) without a terminal, the attempt history in SQLite,
spaced repetition and exams kept on disk."""
