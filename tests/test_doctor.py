"""`python -m helpers.doctor`: a good machine passes; each problem is one line that names its fix.

Problems are simulated on temporary copies (data/) or by pointing the checks elsewhere (widgets):
the real data/ and the installed packages are never touched.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import doctor
from helpers.core.catalog import DATA_DIR, manifest
from helpers.core.files import sha256

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def data_copy(tmp_path):
    """A copy of data/ with its listing, its README and every shipped file."""
    copy = tmp_path / "data"
    copy.mkdir()
    snapshots = [e["snapshots"]["file"] for e in manifest().values() if "snapshots" in e]
    for name in ["models.json", "README.md"] + [e["file"] for e in manifest().values()] + snapshots:
        shutil.copy2(DATA_DIR / name, copy / name)
    return copy


def test_the_doctor_reads_the_catalogs_data_folder():
    assert doctor.DATA_DIR == DATA_DIR


def test_a_good_environment_passes(data_copy):
    for check in (doctor.check_versions, doctor.check_widget_front_end, doctor.check_map, doctor.check_page_files):
        problems, summary = check()
        assert problems == [] and summary, (check.__name__, problems)
    problems, summary = doctor.check_data(data_copy)
    assert problems == [] and summary.startswith(f"{len(manifest())} data files match")


def test_a_damaged_data_file_gives_one_line_naming_the_fix(data_copy):
    name = manifest()["heads-4"]["file"]
    path = data_copy / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the middle of the weights
    path.write_bytes(bytes(data))
    problems = [p for p in doctor.check_data(data_copy)[0] if name in p]
    assert problems == [f"✗ data/{name} is damaged (its sha256 differs from data/models.json): restore it with "
                        f"`git checkout -- data/{name}` (or a fresh copy of the project), or rebuild it with "
                        f"`python -m helpers.train heads-4`."]
    path.unlink()
    assert [p for p in doctor.check_data(data_copy)[0] if name in p][0].startswith(f"✗ data/{name} is missing:")
    (data_copy / "models.json").write_text("{ not json")
    assert doctor.check_data(data_copy)[0] == ["✗ data/models.json is damaged (not valid JSON): restore it with "
                                               "`git checkout -- data/models.json` (or a fresh copy of the project)."]
    assert doctor.check_data(data_copy / "gone")[0] == [  # the whole folder: one line, not models.json's alone
        "✗ data/ is missing, and with it every model: restore it with `git checkout -- data` (or a fresh copy of "
        "the project)."]


def test_a_damaged_snapshot_file_of_notebook_08_is_one_line(data_copy):
    entry = manifest()["induction"]["snapshots"]
    path = data_copy / entry["file"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert doctor.check_data(data_copy)[0] == [
        f"✗ data/{entry['file']} is damaged (its sha256 differs from data/models.json): restore it with "
        f"`git checkout -- data/{entry['file']}` (or a fresh copy of the project), or rebuild it with "
        f"`python -m helpers.train induction --snapshots`."]
    path.unlink()
    assert doctor.check_data(data_copy)[0][0].startswith(f"✗ data/{entry['file']} is missing:")


def test_the_records_the_doctor_asks_for_are_what_the_shipped_list_holds_beside_its_files():
    file_keys = {"file", "sha256", "bytes", "command", "config", "info"}
    shipped = {name: set(entry) - file_keys for name, entry in manifest().items() if set(entry) - file_keys}
    assert {name: set(keys) for name, keys in doctor.RECORDS.items()} == shipped


@pytest.mark.parametrize("name, key", [("induction", "snapshots"), ("heads-1", "seeds")])
def test_a_line_that_lost_what_a_lesson_reads_is_one_line(data_copy, name, key):
    """A retrained model whose line lost its snapshots (08) or seed runs (04): the doctor says so."""
    entries = manifest(data_copy / "models.json")
    del entries[name][key]
    (data_copy / "models.json").write_text(json.dumps(entries))
    assert doctor.check_data(data_copy)[0] == [
        f"✗ data/models.json: the line of {name!r} records no {key!r}, which the lessons read: restore it with "
        f"`git checkout -- data/models.json` (or a fresh copy of the project)."]


def test_the_page_files_the_doctor_checks_are_the_ones_the_page_reads():
    from helpers.figures import page
    from helpers.grade import results
    assert set(doctor.PAGE_FILES) == {page.TEMPLATE.name, *page.SCRIPTS.values(), results.TEMPLATE.name}
    assert all(page.TEMPLATE.with_name(n).parent == doctor.FIGURES_DIR for n in doctor.PAGE_FILES)


def test_a_missing_page_script_is_one_line_naming_the_fix(tmp_path):
    for name in [*doctor.PAGE_FILES, doctor.PAGE_SUMS]:
        shutil.copy2(doctor.FIGURES_DIR / name, tmp_path / name)
    assert doctor.check_page_files(tmp_path)[0] == []
    (tmp_path / "page_model.js").unlink()
    (tmp_path / "page_view.js").write_bytes(b"\xff\xfe\x00broken")
    assert doctor.check_page_files(tmp_path)[0] == [
        "✗ helpers/figures/page_model.js is missing (H.export_page needs it): restore it with "
        "`git checkout -- helpers/figures/page_model.js` (or a fresh copy of the project).",
        "✗ helpers/figures/page_view.js cannot be read (UnicodeDecodeError): restore it with "
        "`git checkout -- helpers/figures/page_view.js` (or a fresh copy of the project)."]


def test_a_missing_widget_front_end_gives_one_line_naming_the_fix(tmp_path, monkeypatch):
    problems, _ = doctor.check_widget_front_end(paths=[tmp_path])  # no labextension in this folder
    assert len(problems) == 1 and "@jupyter-widgets/jupyterlab-manager is missing" in problems[0]
    assert "pip install \"jupyterlab_widgets>=3\"" in problems[0] and "restart JupyterLab" in problems[0]
    monkeypatch.setattr(doctor, "labextension_paths", lambda: [tmp_path])
    lines = doctor.diagnose((doctor.check_versions, doctor.check_widget_front_end))
    assert [line for line in lines if line.startswith("✗")] == problems


def test_a_missing_or_old_package_gives_one_line_naming_the_fix():
    problems, _ = doctor.check_versions({"no-such-package-here": "1.0", "numpy": "999"})
    assert problems[0] == "✗ no-such-package-here is not installed: run `pip install -e .` in the project folder."
    assert problems[1].startswith("✗ numpy ") and problems[1].endswith("is older than 999: run `pip install -U numpy`.")


def test_a_failing_map_is_one_line():
    problems, _ = doctor.check_map(sentence="I like zebras")  # a word the classroom model does not know
    assert len(problems) == 1 and problems[0].startswith("✗ Drawing the map of 'I like zebras' failed (")
    assert "\n" not in problems[0]


def test_the_command_marks_every_line_and_exits_with_its_crosses():
    """Its speed is not asserted here: a test on a busy machine measures the machine, not the doctor."""
    result = subprocess.run([sys.executable, "-m", "helpers.doctor"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    lines = result.stdout.splitlines()
    assert result.returncode == sum(line.startswith("✗") for line in lines), result.stdout + result.stderr
    assert all(line[:1] in "✓✗" for line in lines[:-1]) and "Traceback" not in result.stderr


# --- `python -m helpers.doctor --grading`: what grading a class needs ----------------------------------------
def test_grading_passes_here_and_its_exit_status_counts_the_problems():
    bin_dir = str(Path(sys.executable).parent)  # an activated venv: nbgrader finds its alembic
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(Path.home())}
    result = subprocess.run([sys.executable, "-m", "helpers.doctor", "--grading"], cwd=ROOT, capture_output=True,
                            text=True, timeout=180, env=env)
    lines = result.stdout.splitlines()
    assert result.returncode == sum(line.startswith("✗") for line in lines) == 0, result.stdout + result.stderr
    assert "lessons exported for nbgrader and otter-grader (7 notebooks each)" in result.stdout
    assert lines[-1].endswith("this machine is ready to grade a class.")


def test_grading_checks_the_models_the_lessons_setups_load(data_copy, monkeypatch):
    """A copy without data/classroom.safetensors: lessons 05 and 06 failed in every worker while --grading said
    "ready to grade a class" (sweep 18, doctor_grading_broken)."""
    (data_copy / "classroom.safetensors").unlink()
    monkeypatch.setattr(doctor.check_data, "__defaults__", (data_copy,))
    check = next(c for c in doctor.GRADING_CHECKS if c is doctor.check_data)
    assert check()[0][0].startswith("✗ data/classroom.safetensors is missing:")


def test_grading_problems_are_one_line_each(monkeypatch):
    monkeypatch.delattr(doctor.os, "fork")  # as on Windows
    problems, _ = doctor.check_fork()
    assert len(problems) == 1 and problems[0].startswith("✗ This Python cannot start a confined worker") \
        and "WSL" in problems[0]
    monkeypatch.setattr(doctor, "EXPORT", "import sys; sys.exit('no lesson 01_*.ipynb')")
    problems, _ = doctor.check_export()
    assert problems == ["✗ Exporting the lessons for nbgrader and otter-grader failed (no lesson 01_*.ipynb): "
                        "run `pip install -e .` in the project folder."]
    problems, summary = doctor.check_graders({"no-such-grader": "1"})
    assert problems == ["✗ no-such-grader is not installed: to grade with it run `pip install -e \".[grading]\"` "
                        "(python -m helpers.grade itself does not need it)."]


@pytest.mark.skipif(shutil.which("nbgrader", path=str(Path(sys.executable).parent)) is None,
                    reason='nbgrader is not installed: pip install -e ".[grading]"')
def test_an_old_nbgrader_or_one_without_alembic_on_path_is_named(monkeypatch):
    problems, _ = doctor.check_graders({"nbgrader": "999"})
    assert problems[0].startswith("✗ nbgrader ") and problems[0].endswith("is older than 999: run `pip install -e \".[grading]\"`.")
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    problems, _ = doctor.check_graders()
    assert problems == ["✗ nbgrader runs `alembic`, which is not on PATH: activate the virtual environment "
                        "(`source .venv/bin/activate`) before running nbgrader (`python -m helpers.grade` does not "
                        "need it)."]


def test_the_recorded_page_checksums_are_the_files_own():
    """Edited a page script or template? Run the command the doctor's line names, in helpers/figures."""
    assert doctor.page_sums() == {name: sha256(doctor.FIGURES_DIR / name) for name in doctor.PAGE_FILES}


def test_page_files_checked_out_with_windows_line_endings_pass_and_an_edit_can_be_recorded(tmp_path):
    for name in [*doctor.PAGE_FILES, doctor.PAGE_SUMS]:
        (tmp_path / name).write_bytes((doctor.FIGURES_DIR / name).read_bytes().replace(b"\n", b"\r\n"))
    assert doctor.check_page_files(tmp_path)[0] == []  # Git for Windows' core.autocrlf
    (tmp_path / "page_view.js").write_text("// mine\n", encoding="utf-8")
    assert len(doctor.check_page_files(tmp_path)[0]) == 1
    doctor.record_page_sums(tmp_path)
    assert doctor.check_page_files(tmp_path)[0] == []


@pytest.mark.parametrize("damage", ["cut short", "one word changed", "lines cut from the middle"])
def test_a_page_script_damaged_anywhere_is_one_line(tmp_path, damage):
    """A copy that stops midway, or lost a function from its middle, passed as 'there' before; the page then fails."""
    for name in [*doctor.PAGE_FILES, doctor.PAGE_SUMS]:
        shutil.copy2(doctor.FIGURES_DIR / name, tmp_path / name)
    assert doctor.check_page_files(tmp_path)[0] == []
    script = tmp_path / "page_view.js"
    lines = script.read_text(encoding="utf-8").splitlines(keepends=True)
    script.write_text({"cut short": "".join(lines[:40]),
                       "one word changed": "".join(lines).replace("function", "functoin", 1),
                       "lines cut from the middle": "".join(lines[:100] + lines[160:])}[damage], encoding="utf-8")
    assert doctor.check_page_files(tmp_path)[0] == [
        "✗ helpers/figures/page_view.js is not the copy this project shipped (its sha256 differs from "
        "helpers/figures/page_files.sha256): restore it with `git checkout -- helpers/figures/page_view.js` (or a "
        "fresh copy of the project); if you changed it on purpose, run `python -m helpers.doctor --record-page-files`."]


def test_a_damaged_notebook_or_helper_module_is_one_line_each(tmp_path):
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "notebooks" / "02_shrinking_the_head.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "helpers" / "widgets" / "slider.py").write_text("def broken(:\n", encoding="utf-8")
    check = ("import sys; from helpers import doctor; "
             "print('\\n'.join(doctor.check_code(doctor.FIGURES_DIR.parent.parent)[0]))")
    result = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and result.returncode == 0, result.stdout + result.stderr
    assert lines[0].startswith("✗ notebooks/02_shrinking_the_head.ipynb is not a readable notebook (")
    assert lines[1].startswith("✗ helpers/widgets/slider.py is broken (invalid syntax, line 1): restore it with "
                               "`git checkout -- helpers/widgets/slider.py`")
    assert all(line.endswith("(or a fresh copy of the project).") for line in lines)


def test_a_missing_or_empty_notebook_and_a_missing_module_are_one_line_each(tmp_path):
    """A deleted lesson notebook passed ('8 notebooks read'), and the grader then refused the whole class."""
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "notebooks" / "07_shared_keys_and_values.ipynb").unlink()
    (tmp_path / "notebooks" / "03_decompression_and_recombination.ipynb").write_text('{"cells": [], "nbformat": 4}')
    (tmp_path / "helpers" / "exercises" / "kv_checks.py").unlink()
    (tmp_path / "helpers" / "grade" / "worker.py").unlink()
    check = ("from helpers import doctor; print('\\n'.join(doctor.check_code(doctor.FIGURES_DIR.parent.parent)[0] + "
             "doctor.check_grader_code()[0]))")
    result = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    text = result.stdout
    assert "✗ notebooks/07_shared_keys_and_values.ipynb is missing" in text, text + result.stderr
    assert "✗ notebooks/03_decompression_and_recombination.ipynb has no cells" in text
    assert "helpers/exercises/kv_checks.py is missing" in text and "helpers/grade/worker.py is missing" in text
    assert "Traceback" not in result.stderr


def test_the_notebooks_and_grader_modules_the_doctor_expects_are_the_projects():
    assert sorted(doctor.NOTEBOOKS) == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    grader = {p.stem for p in (ROOT / "helpers" / "grade").glob("*.py")} - {"__init__", "__main__"}
    assert set(doctor.GRADER_MODULES) <= grader


def test_one_missing_or_broken_module_is_one_line_whatever_imports_it(tmp_path):
    """A deleted core module gave 52 lines, one per importer; a truncated one named files that do not exist."""
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "helpers" / "core" / "attention.py").unlink()
    definitions = tmp_path / "helpers" / "grade" / "definitions.py"
    definitions.write_text(definitions.read_text(encoding="utf-8")[:2000], encoding="utf-8")  # ends mid-import
    check = "from helpers import doctor; print('\\n'.join(doctor.check_code(doctor.FIGURES_DIR.parent.parent)[0]))"
    lines = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120).stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✗ helpers/core/attention.py is missing; ") and \
        "more modules fail with it" in lines[0], lines
    check = "from helpers import doctor; print('\\n'.join(doctor.check_grader_code()[0]))"
    lines = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120).stdout.splitlines()
    assert any(line.startswith("✗ helpers/grade/definitions.py is broken (") for line in lines), lines
    assert not any("lessons/" in line for line in lines), lines


def test_doctor_grading_names_a_broken_module_the_lessons_setup_imports(tmp_path):
    """A syntax error in helpers/analysis/captions.py failed every grading while `doctor --grading` said the
    grader's modules imported (sweep 14, D26): the lessons' setups import far more than helpers/grade/."""
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    with open(tmp_path / "helpers" / "analysis" / "captions.py", "a", encoding="utf-8") as f:
        f.write("def broken(:\n")
    check = "from helpers import doctor; print('\\n'.join(doctor.check_grader_code()[0]))"
    lines = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120).stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✗ helpers/analysis/captions.py is broken (invalid syntax"), lines


def test_doctor_grading_sends_a_damaged_lesson_to_git_not_to_pip(tmp_path):
    """The export line ended "run `pip install -e .`" for a damaged lesson notebook (sweep 14, D25)."""
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "notebooks" / "04_head_count_slider.ipynb").write_text("{", encoding="utf-8")
    check = "from helpers import doctor; print('\\n'.join(doctor.check_export()[0]))"
    line = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300).stdout.strip()
    assert line.endswith("restore it with `git checkout -- notebooks/04_head_count_slider.ipynb` (or a fresh copy "
                         "of the project).") and "pip install" not in line, line


def test_an_emptied_module_and_a_lost_check_call_are_one_line_each_naming_the_file(tmp_path):
    """An emptied module imports: the doctor said "All good" while H.solution and every importer of seeds.py failed;
    an exercise cell without its H.check_… call left that exercise unchecked, and the doctor said nothing."""
    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    check = "from helpers import doctor; print('\\n'.join(doctor.check_code(doctor.FIGURES_DIR.parent.parent)[0]))"

    def doctor_lines() -> list[str]:
        result = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert "Traceback" not in result.stderr, result.stderr
        return result.stdout.splitlines()

    for name in ("exercises/solutions.py", "analysis/seeds.py"):
        (tmp_path / "helpers" / name).write_text("", encoding="utf-8")
    lines = doctor_lines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("✗ helpers/analysis/seeds.py is damaged (other modules no longer find the names they "
                               "use in it); ") and "`git checkout -- helpers/analysis/seeds.py`" in lines[0]
    assert lines[1] == ("✗ helpers/exercises/solutions.py is empty: restore it with "
                        "`git checkout -- helpers/exercises/solutions.py` (or a fresh copy of the project).")
    grader = "from helpers import doctor; print('\\n'.join(doctor.check_grader_code()[0]))"
    (tmp_path / "helpers" / "grade" / "preload.py").write_text("", encoding="utf-8")  # imports, defines nothing
    assert "✗ helpers/grade/preload.py is empty: restore it with `git checkout -- helpers/grade/preload.py`" in \
        subprocess.run([sys.executable, "-c", grader], cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
    for name in ("exercises/solutions.py", "analysis/seeds.py", "grade/preload.py"):
        shutil.copy(ROOT / "helpers" / name, tmp_path / "helpers" / name)
    lesson = tmp_path / "notebooks" / "01_single_head_attention.ipynb"
    text = lesson.read_text(encoding="utf-8")
    assert text.count("H.check_masked_weights(masked_weights)") == 1
    lesson.write_text(text.replace("H.check_masked_weights(masked_weights)", "pass"), encoding="utf-8")
    assert doctor_lines() == [
        "✗ notebooks/01_single_head_attention.ipynb no longer calls H.check_masked_weights(…) (its exercise “masked "
        "weights”), so that exercise is never checked: restore it with "
        "`git checkout -- notebooks/01_single_head_attention.ipynb` (or a fresh copy of the project)."]
    read = "from helpers.grade import lessons; lessons.read(lessons.NOTEBOOKS / '01_single_head_attention.ipynb')"
    result = subprocess.run([sys.executable, "-c", read], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stderr.splitlines()[-1] == (  # what the grader and its export print for it
        "ValueError: In the lesson notebooks/01_single_head_attention.ipynb, the exercise cell of masked_weights must "
        "end with one H.check_…(…) call; it has 0: restore it with "
        "`git checkout -- notebooks/01_single_head_attention.ipynb`."), result.stderr


def test_an_installed_package_that_fails_is_not_blamed_on_a_project_file():
    """A teacher's tqdm.py beside the project made the doctor say "restore helpers/train.py with git checkout"."""
    shadowed = ModuleNotFoundError("No module named 'tqdm.auto'; 'tqdm' is not a package", name="tqdm.auto")
    assert doctor._what_is_wrong("helpers.train", shadowed).startswith("the package tqdm cannot be imported")
    ours = ModuleNotFoundError("No module named 'helpers.figures.mosaic'", name="helpers.figures.mosaic")
    assert doctor._what_is_wrong("helpers.widgets.slider", ours) == "helpers/figures/mosaic.py is missing"
