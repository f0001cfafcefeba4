"""Grading: a response to a question becomes a Grade (status, score, feedback, the mistake named), for
every answer kind; questions in parts graded together so that errors carry forward."""
