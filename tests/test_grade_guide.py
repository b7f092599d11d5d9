"""The guide's "Grading a class" states the grader's limits and rules: each is the code's own value."""

from __future__ import annotations

from pathlib import Path

from helpers.grade import confine, submissions
from helpers.grade.cli import _parser
from helpers.grade.definitions import ALLOWED_DECORATORS

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text()
SECTION = " ".join(GUIDE.split("## Grading a class")[1].split("\n## ")[0].split())


def test_the_limits_the_guide_states_are_the_codes():
    limits = confine.Limits()
    assert f"a zip of more than {submissions.MAX_FILES} files or {submissions.MAX_ZIP_BYTES >> 30} GB" in SECTION
    assert f"per notebook ({limits.notebook_s:.0f} s)" in SECTION
    assert limits.exercise_wall_s == 3 * limits.exercise_s + 20 and "3 × `--timeout` + 20 s" in SECTION
    assert f"the worker's size after the setup + {limits.memory_bytes >> 30} GB" in SECTION
    assert _parser().parse_args([]).timeout == 10 and "(10 s by default)" in SECTION
    assert submissions.MAX_CELLS > 10_000 and "10,000 cells or 50 MB of outputs are read" in SECTION


def test_the_decorators_the_guide_allows_are_the_codes():
    assert "torch.no_grad()" in ALLOWED_DECORATORS and "`@torch.no_grad()` and a few like it" in SECTION


def test_each_linux_protection_the_guide_claims_has_its_test():
    tests = (Path(__file__).parent / "test_grade_class.py").read_text()
    for name in ("test_no_connection_leaves_a_worker", "test_nothing_is_written_into_the_output_folder_home_or_the_class",
                 "test_deleting_files_deletes_nothing", "test_no_submission_reads_another_or_the_teachers_files",
                 "test_a_forked_process_ends_with_its_worker", "test_each_hostile_submission_gets_its_own_row_right"):
        assert f"def {name}(" in tests
    assert "`tests/test_grade_class.py`" in SECTION and "docker run --rm --network none" in SECTION
