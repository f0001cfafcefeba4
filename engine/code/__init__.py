"""Code questions: the tasks, their reference solutions and mutants, the sandbox that runs a student's code,
grading one answer and a class's folder of submissions."""
