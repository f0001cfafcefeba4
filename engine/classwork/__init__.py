"""A class's work: grading a class's answers.csv, the class report, and the marks and report written as one
set."""
