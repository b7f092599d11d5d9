"""Grading a class: `python -m helpers.grade` (the command, its report, and the nbgrader and otter-grader formats)."""
