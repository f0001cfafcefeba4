"""Scanned answer sheets read back into the answers.csv that `quiz grade` reads."""
