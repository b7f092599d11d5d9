"""What the grader's forkserver holds before any submission is read: torch, the lesson modules, and the
prepared setup of each lesson the class hands in (lessons.py), so every worker forked from it starts ready
and knows no submission but its own. Each lesson's checks have run once on the reference solutions, so
the answers they compare with are computed here, once, not again in every worker and runner.

The parent names the lessons in $HELPERS_GRADE_LESSONS ("01,03") before the server starts; a lesson not
named there (a guess from the files' bytes missed it) is prepared by the worker that needs it. Importing
this module never raises for a lesson: multiprocessing's forkserver would stop on an error in a
preloaded module, so a lesson whose setup fails is said by the workers that need it.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import time

import torch

from ..exercises import solutions
from .lessons import SETUP_FAILED, lessons, prepare

ENV = "HELPERS_GRADE_LESSONS"
PREPARED: dict = {}  # lesson number -> lessons.Prepared
SECONDS: dict[str, float] = {}  # lesson number -> seconds its setup took here
PROBLEMS: dict[str, str] = {}  # lesson number -> why its setup failed (one line)


def prepared(number: str):
    """The lesson's prepared namespaces: preloaded, or prepared now (a ValueError with one line when it fails)."""
    if number not in PREPARED and number not in PROBLEMS:
        _prepare(number)
    if number in PROBLEMS:
        raise ValueError(f"the setup of lesson {number} {SETUP_FAILED} ({PROBLEMS[number]})")
    return PREPARED[number]


def _prepare(number: str) -> None:
    started = time.perf_counter()
    try:
        PREPARED[number] = prepare(lessons()[number])
        _warm(PREPARED[number])
    except Exception as err:  # a damaged lesson: every worker of it says so in one line
        PROBLEMS[number] = f"{type(err).__name__}: {str(err)[:400]}"
    SECONDS[number] = time.perf_counter() - started


def _warm(prepared) -> None:
    """Run each check of the lesson on its reference solution (trusted code), so the check's own answers are
    computed and kept (its caches) before any worker is forked."""
    for i, (_, ex) in enumerate(prepared.lesson.exercises):
        namespace = dict(prepared.namespaces[i])
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(solutions.source(ex.name), namespace)
                eval(ex.test, namespace)
        except Exception:  # a check that fails here fails in the workers too, and says so there
            pass


def _preload() -> None:
    torch.set_num_threads(1)  # each worker grades on one thread; the server's pools are not shared
    try:
        known = lessons()
    except Exception as err:  # said by every worker that needs a lesson
        PROBLEMS.update({n: f"{type(err).__name__}: {str(err)[:200]}" for n in os.environ.get(ENV, "").split(",")})
        return
    for number in os.environ.get(ENV, "").split(","):
        if number in known:
            _prepare(number)
    gc.freeze()  # what is loaded now stays out of the collector's way: a forked process does not copy it to scan it


_preload()
