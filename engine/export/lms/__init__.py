"""LMS files: the one model of what a question asks of an LMS, and its writers (Moodle XML, STACK, Canvas
QTI, JSON)."""
