"""`python -m helpers.grade SUBMISSION... --out FOLDER`: grade a class (helpers/grade/cli.py)."""

from .cli import main

raise SystemExit(main())
