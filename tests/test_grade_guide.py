"""The guide's "Grading a class" states the grader's limits and rules: each is the code's own value."""

from __future__ import annotations

from pathlib import Path

from helpers.grade import confine, definitions, runner, submissions, worker
from helpers.grade.__main__ import _parser
from helpers.grade.definitions import ALLOWED_DECORATORS

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text()
SECTION = " ".join(GUIDE.split("## Grading a class")[1].split("\n## ")[0].split())


def test_the_limits_the_guide_states_are_the_codes():
    limits = confine.Limits()
    assert f"a zip of more than {submissions.MAX_FILES} files or {submissions.MAX_ZIP_BYTES >> 30} GB" in SECTION
    assert f"A notebook of more than {submissions.MAX_NOTEBOOK_BYTES >> 20} MB, in a folder or a zip, is not read" in SECTION
    assert f"per notebook ({limits.notebook_s:.0f} s)" in SECTION
    assert limits.exercise_wall_s == 3 * limits.exercise_s + 20 and "3 × `--timeout` + 20 s" in SECTION
    assert f"at most {limits.processes} processes and threads" in SECTION
    assert f"the worker's size after the setup + {limits.memory_bytes >> 30} GB" in SECTION
    assert _parser().parse_args([]).timeout == 10 and "(10 s by default)" in SECTION
    assert definitions.MAX_CELLS > 10_000 and "10,000 cells or 50 MB of outputs are read" in SECTION
    assert worker.MAX_MESSAGE == 1 << 20 and "at most 1 MB, of the expected kind and fields" in SECTION
    assert runner.MAX_ANSWER == 8 << 20 and "never pickle; at most 8 MB" in SECTION


def test_the_decorators_the_guide_allows_are_the_codes():
    assert "torch.no_grad()" in ALLOWED_DECORATORS and "`@torch.no_grad()` and a few like it" in SECTION


# Each row of the guide's table of what a submission can reach -> the tests that show it on Linux.
BACKED = {
    "reaches another student's row, pipe or notebook": (
        "test_no_submission_changes_another_row_through_the_pipes", "test_a_worker_holds_no_descriptor_but_its_own_pipe",
        "test_a_worker_holds_no_other_notebook_in_its_memory", "test_bytes_that_are_not_a_message_mark_only_that_submission",
        "test_a_worker_reads_nothing_of_another", "test_no_other_process_can_be_reopened_through_proc",
        "test_where_proc_is_the_machines_a_runner_still_cannot_reopen_its_workers_pipe"),
    "forges its own row": ("test_forged_records_are_never_right", "test_forged_grader_records_then_exit_are_not_right",
                           "test_a_forged_verdict_then_exit_is_not_right",
                           "test_a_forged_verdict_from_a_wrong_function_is_not_right", "test_a_patched_check_gives_no_right",
                           "test_a_runner_holds_no_pipe_to_the_grader", "test_a_forgers_other_exercises_are_graded_as_they_are"),
    "reaches the network, even loopback": ("test_no_connection_leaves_a_worker",),
    "reads or changes the submissions, the folders beside them, the output folder, `$HOME`, `/run` (local sockets) "
    "or any other folder of the machine": (
        "test_the_folders_beside_the_class_are_hidden", "test_last_lessons_class_beside_this_lessons_folder_is_out_of_reach",
        "test_no_submission_reads_another_or_the_teachers_files",
        "test_nothing_is_written_into_the_output_folder_home_or_the_class", "test_deleting_files_deletes_nothing",
        "test_a_right_answer_that_imports_the_standard_library_is_right_when_home_holds_it",
        "test_a_local_services_socket_is_out_of_reach",
        "test_a_class_kept_in_the_project_cannot_read_the_projects_other_folders"),
    "leaves files in the machine's `/tmp`, `/var/tmp` or `/dev/shm`": (
        "test_nothing_is_written_into_the_machines_scratch_folders",),
    "changes a file of the machine: the project, its virtualenv, the interpreter's standard library, `/etc`": (
        "test_the_machines_files_are_read_only_to_a_worker",),
    "leaves processes running": ("test_a_forked_process_ends_with_its_worker",
                                 "test_no_process_a_submission_started_outlives_its_worker",
                                 "test_a_grader_killed_with_minus_9_leaves_no_student_code_running"),
    "runs past its time": ("test_each_hostile_submission_gets_its_own_row_right",),
    "uses more memory": ("test_each_hostile_submission_gets_its_own_row_right",),
    "starts many processes": ("test_a_fork_bomb_is_held_to_the_process_limit_even_as_root",),
}


def test_each_thing_the_guide_says_a_submission_cannot_reach_has_its_test():
    tests = "".join((Path(__file__).parent / name).read_text() for name in ("test_grade_class.py",
                                                                            "test_grade_workers.py",
                                                                            "test_grade_forgery.py"))
    for row, names in BACKED.items():
        assert f"| {row}" in SECTION, row
        for name in names:
            assert f"def {name}(" in tests, name
    assert "`tests/test_grade_workers.py`, `tests/test_grade_class.py` and `tests/test_grade_forgery.py`" in SECTION
    assert "docker run --rm --network none" in SECTION
