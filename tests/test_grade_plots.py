"""The class report's figure (figures/class_plots.py): counts drawn from the summary, legible on a slide."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from helpers.figures.class_plots import plot_class_mistakes
from helpers.figures.slide import check_slide
from helpers.grade.results import summary
from test_grade_report_browser import _table


@pytest.fixture(scope="module")
def facts():
    return summary(_table())


def test_the_bars_are_the_counts(facts):
    fig = plot_class_mistakes(facts)
    assert isinstance(fig, Figure)
    bars = fig.axes[0].containers  # one BarContainer per part: right, named, generic, raised, not attempted
    widths = [[round(b.get_width()) for b in c] for c in bars]
    assert widths == [[8, 0], [4, 0], [0, 0], [0, 3], [0, 9]]  # attention_weights, masked_weights


def test_the_figure_is_legible_on_a_slide(facts):
    report = check_slide(plot_class_mistakes(facts))
    assert report.ok, report.problems


def test_the_figure_draws_into_a_given_axes(facts):
    base = Figure(layout="constrained")
    ax = base.add_subplot()
    assert plot_class_mistakes(facts, ax=ax) is base


def test_no_exercise_is_one_line():
    with pytest.raises(ValueError, match="no exercise was graded"):
        plot_class_mistakes({"exercises": [], "students": 0})


def test_a_class_whose_lesson_setup_failed_in_the_grader_is_sent_to_the_doctor_not_told_to_pass_notebooks(tmp_path):
    """A damaged helpers/ failed every notebook's setup, and the line said "pass the students' lesson notebooks"
    (sweep 14, D28): the teacher's files are at fault, and the doctor names them."""
    from helpers.grade.results import Row, Table, write_outputs
    note = "class/dan_01.ipynb the setup of lesson 01 failed in the grader (SyntaxError: invalid syntax)."
    with pytest.raises(ValueError, match=r"the grader's own files are damaged: run `python -m helpers.doctor "
                                         r"--grading`, which names them\.$"):
        write_outputs(Table([], [Row("dan", notes=[note])], {}), tmp_path, False)
    with pytest.raises(ValueError, match=r"pass the students' lesson notebooks\.$"):
        write_outputs(Table([], [Row("dan", notes=["dan.pdf is not a notebook"])], {}), tmp_path, False)


def test_a_catch_all_code_in_the_report_says_the_checks_line_not_how_it_was_found():
    """The report's top three read "explained … a last-resort diagnosis fitted from the answer" (sweep 14, D1)."""
    from helpers.grade.results import _says, catalogue_lines
    lines = catalogue_lines()
    line = "✗ knock-out prediction: 84 looks like a percentage; write it as a fraction between 0 and 1 (0.84)."
    assert _says({"key": "my_prediction", "code": "my_prediction.unreadable", "line": line}, lines) == line
    named = _says({"key": "attention_weights", "code": "attention_weights.no_scale", "line": "one student's"}, lines)
    assert named == lines["attention_weights.no_scale"]


def test_a_disk_that_fills_while_the_outputs_are_written_changes_none_of_them(tmp_path, disk_full_at):
    """The report's PNG failed after grades.csv had been replaced: the CSV read the new grades and the report the
    old, and the line said "Nothing was changed there" (sweep 21, I21)."""
    from helpers.grade.results import NAMES, write_outputs
    (tmp_path / "grades.csv").write_text("last run's grades")
    calls = disk_full_at(4)  # after grades.csv, verdicts.json and the report page: the report's PNG
    with pytest.raises(OSError, match="Nothing was changed there"):
        write_outputs(_table(), tmp_path, False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv"] and len(calls) == 4
    assert (tmp_path / "grades.csv").read_text() == "last run's grades" and "grades.csv" in NAMES
