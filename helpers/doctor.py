"""Check a student's machine before class: `python -m helpers.doctor`.

It checks the Python and package versions, the widget front end JupyterLab needs to show sliders,
the shipped files in data/ against the checksums in data/models.json and data/README.md (notebook
08's training snapshots included, and the records the lessons read beside each model), the scripts and
templates the offline page is built from (each the shipped copy, by sha256), that every notebook reads and every helper module imports, and draws one 144-head map. Each
problem is one line that names the fix; the exit status is the number of problems (0: ready for class).
`--grading` checks what grading a class needs instead: the grader's modules and the lessons' notebooks, a
confined worker per submission (python -m helpers.grade; bubblewrap for --sandbox bwrap), the lessons
exported for nbgrader and otter-grader, and those two graders (the extra `.[grading]`; a missing one is a line).

Only the standard library and the lazy facade are imported at the top, so a missing package is
reported as a line, not as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as metadata
import io
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import helpers as H
from .core.files import atomic_write, finish_interrupted, recorded_sums, sha256, text_sha256  # stdlib only, as here

DATA_DIR = Path(__file__).resolve().parent.parent / "data"  # as helpers.core.catalog.DATA_DIR (tested)
FIGURES_DIR = Path(__file__).resolve().parent / "figures"
# The files H.export_page and the class report read beside helpers/figures/page.py (tested against page.SCRIPTS).
PAGE_FILES = ("page_template.html", "page_model.js", "page_live.js", "page_view.js", "report_template.html")
PAGE_SUMS = "page_files.sha256"  # their checksums beside them, in sha256sum's format (as figures/page.py's SUMS)
INSTALL = "run `pip install -e .` in the project folder"
# package -> the oldest version that works (pyproject.toml's dependencies)
REQUIRED = {"torch": "2.2", "numpy": "1.24", "matplotlib": "3.7", "ipywidgets": "8", "jupyterlab": "4",
            "ipykernel": "6", "safetensors": "0.4", "tqdm": "4.60"}
WIDGET_FRONT_END = ("@jupyter-widgets", "jupyterlab-manager")  # the labextension that draws ipywidgets


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text.split("+")[0])[:3])


def _packages(required: dict[str, str], missing: str, old: str) -> tuple[list[str], list[str]]:
    """(problems, found) for packages {name: oldest version}; `missing` and `old` are the fixes, where
    {name} stands for the package."""
    problems, found = [], []
    for name, oldest in required.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"✗ {name} is not installed: {missing.format(name=name)}.")
            continue
        if _version_tuple(have) < _version_tuple(oldest):
            problems.append(f"✗ {name} {have} is older than {oldest}: {old.format(name=name)}.")
        found.append(f"{name} {have}")
    return problems, found


def check_versions(required: dict[str, str] = REQUIRED) -> tuple[list[str], str]:
    """(problems, summary): Python 3.10 or newer and every package at its oldest working version."""
    python = sys.version.split()[0]
    problems = [f"✗ Python {python} is too old: install Python 3.10 or newer, then {INSTALL}."
                ] if sys.version_info < (3, 10) else []
    more, found = _packages(required, INSTALL, "run `pip install -U {name}`")
    return problems + more, ", ".join([f"Python {python}", *found])


def labextension_paths() -> list[Path]:
    """The folders where JupyterLab looks for prebuilt extensions (jupyter --paths)."""
    try:
        from jupyter_core.paths import jupyter_path  # third-party, loaded late: a missing one is a line
    except ImportError:
        return [Path(sys.prefix) / "share" / "jupyter" / "labextensions"]
    return [Path(p) for p in jupyter_path("labextensions")]


def check_widget_front_end(paths: list[Path] | None = None) -> tuple[list[str], str]:
    """(problems, summary): jupyterlab_widgets installed and its labextension where JupyterLab finds it."""
    fix = ("run `pip install \"jupyterlab_widgets>=3\"`, then restart JupyterLab (without it the sliders "
           "and explorers print as text)")
    try:
        version = metadata.version("jupyterlab_widgets")
    except metadata.PackageNotFoundError:
        return [f"✗ The widget front end (jupyterlab_widgets) is not installed: {fix}."], ""
    found = [p / Path(*WIDGET_FRONT_END) for p in (labextension_paths() if paths is None else paths)]
    if not any((p / "package.json").is_file() for p in found):
        return [f"✗ The widget front end {'/'.join(WIDGET_FRONT_END)} is missing from JupyterLab's extension "
                f"folders: {fix}."], ""
    if _version_tuple(version)[:1] < (3,):
        return [f"✗ jupyterlab_widgets {version} is for ipywidgets 7: {fix}."], ""
    return [], f"widget front end: jupyterlab_widgets {version}"


RESTORE_CODE = "restore it with `git checkout -- {0}` (or a fresh copy of the project)"  # any file of the project
RESTORE = RESTORE_CODE.format("data/{0}")
# What the lessons read beside a model's own file, line by line of data/models.json (tested against the shipped
# file): 04 and 07 the seed runs, 08 the snapshots and formation seeds, 04 and 07 their thought experiments.
RECORDS = {**{f"heads-{h}": ("seeds",) for h in (1, 2, 3, 4, 6)}, "heads-12": ("seeds", "merged_held_out_loss"),
           **{f"kv-{n}": ("seeds", "loss_split") for n in (1, 2, 3, 4, 6)},
           "kv-12": ("seeds", "loss_split", "kv_pooled"), "induction": ("snapshots", "formation_seeds")}


def _readme_checksums(data_dir: Path) -> tuple[dict[str, str] | None, list[str]]:
    """(file name -> sha256 from the table in data/README.md, problems); None when it cannot be read."""
    try:
        text = (data_dir / "README.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [f"✗ data/README.md is missing: {RESTORE.format('README.md')}."]
    except (OSError, UnicodeDecodeError) as err:
        return None, [f"✗ data/README.md cannot be read ({_reason(err)}): {RESTORE.format('README.md')}."]
    return dict(re.findall(r"\|\s*`([^`]+\.safetensors)`.*?\|\s*`([0-9a-f]{64})`", text)), []


def _reason(err: Exception) -> str:
    return getattr(err, "strerror", None) or type(err).__name__


def _read_listing(data_dir: Path) -> tuple[dict, str | None]:
    """(entries of data/models.json, None) or ({}, the ✗ line saying why they cannot be used)."""
    restore = RESTORE.format("models.json")
    try:
        entries = json.loads((data_dir / "models.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, f"✗ data/models.json is missing: {restore}."
    except PermissionError:
        return {}, "✗ data/models.json cannot be read (permission denied): run `chmod a+r data/models.json`."
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}, f"✗ data/models.json is damaged (not valid JSON): {restore}."
    except OSError as err:
        return {}, f"✗ data/models.json cannot be read ({_reason(err)}): {restore}."
    if not isinstance(entries, dict):
        return {}, f"✗ data/models.json is damaged (it holds a {type(entries).__name__}, not an object of models): {restore}."
    if not entries:
        return {}, f"✗ data/models.json lists no model, so no lesson can load one: {restore}."
    return entries, None


def _check_entry(data_dir: Path, name: str, entry, listed: dict[str, str] | None) -> str | None:
    """The ✗ line for one model of data/models.json, or None when its file is there, whole and listed alike;
    then the same for its training snapshots (notebook 08's slider), when it lists them."""
    restore = RESTORE.format("models.json")
    if not isinstance(entry, dict):
        return f"✗ data/models.json: the entry {name!r} is a {type(entry).__name__}, not an object: {restore}."
    for field in ("file", "sha256"):
        if not isinstance(entry.get(field), str):
            return f"✗ data/models.json: the entry {name!r} has no {field!r}: {restore}."
    file = entry["file"]
    if Path(file).name != file or file in ("", ".", ".."):
        return f"✗ data/models.json: the entry {name!r} names {file!r}, not a file in data/: {restore}."
    fix = f"{RESTORE.format(file)}, or rebuild it with `{entry.get('command') or f'python -m helpers.train {name}'}`"
    try:
        digest = sha256(data_dir / file)
    except FileNotFoundError:
        return f"✗ data/{file} is missing: {fix}."
    except PermissionError:
        return f"✗ data/{file} cannot be read (permission denied): run `chmod a+r data/{file}`."
    except OSError as err:
        return f"✗ data/{file} cannot be read ({_reason(err)}): {fix}."
    if digest != entry["sha256"]:
        return f"✗ data/{file} is damaged (its sha256 differs from data/models.json): {fix}."
    if listed is not None and listed.get(file) != entry["sha256"]:
        said = "lists another checksum for" if file in listed else "has no line for"
        return f"✗ data/README.md {said} {file} (data/models.json has it): run `python tools/data_readme.py`."
    return _check_entry(data_dir, f"{name} snapshots", entry["snapshots"], None) if "snapshots" in entry else None


def check_data(data_dir: Path = DATA_DIR) -> tuple[list[str], str]:
    """(problems, summary): every file in models.json is there, readable, whole (sha256), and listed
    alike in README.md. Each fault, however the files are damaged, is one ✗ line naming the fix.
    A model and its line that a killed trainer left half-renamed are finished first, as load_model does."""
    if not data_dir.is_dir():  # the whole folder gone (a copy without it): one line, not one per file
        return [f"✗ data/ is missing, and with it every model: {RESTORE_CODE.format('data')}."], ""
    finish_interrupted(data_dir)
    entries, problem = _read_listing(data_dir)
    if problem:
        return [problem], ""
    listed, problems = _readme_checksums(data_dir)
    problems += [line for name, entry in entries.items() if (line := _check_entry(data_dir, name, entry, listed))]
    problems += [f"✗ data/models.json: the line of {name!r} records no {key!r}, which the lessons read: "
                 f"{RESTORE.format('models.json')}." for name, keys in RECORDS.items()
                 if isinstance(entries.get(name), dict) for key in keys if key not in entries[name]]
    return problems, f"{len(entries)} data files match data/models.json and data/README.md"


def check_map(model: str = "classroom", sentence: str = "I like to draw") -> tuple[list[str], str]:
    """(problems, summary): load a shipped model, run a sentence, draw its 144-head map as a PNG."""
    try:
        lm = H.load_model(model)
        run = H.run_sentence(lm, sentence)
        fig = H.plot_all_heads(run.attentions, run.tokens)
        fig.savefig(io.BytesIO(), format="png")
    except Exception as err:  # the doctor reports every failure as one line, never a traceback
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return [f"✗ Drawing the map of {sentence!r} failed ({first}): fix what the lines above say, then run "
                f"`python -m helpers.doctor` again."], ""
    L, n_heads = run.attentions.shape[:2]
    return [], f"drew the {L * n_heads}-head map of {sentence!r} ({lm.name})"


def record_page_sums(folder: Path = FIGURES_DIR) -> None:
    """Write folder/page_files.sha256 for the page files as they are now (after an edit made on purpose)."""
    text = "".join(f"{text_sha256(folder / name)}  {name}\n" for name in PAGE_FILES)
    atomic_write(folder / PAGE_SUMS, lambda tmp: Path(tmp).write_text(text, encoding="utf-8", newline="\n"))


def page_sums(folder: Path = FIGURES_DIR) -> dict[str, str]:
    """{file name: sha256} as recorded in folder/page_files.sha256 ({} when it cannot be read)."""
    return recorded_sums(folder / PAGE_SUMS)


def check_page_files(folder: Path = FIGURES_DIR) -> tuple[list[str], str]:
    """(problems, summary): the scripts and templates the offline page (H.export_page) and the class report
    are built from, each there and the bytes this project shipped (a browser runs them: a cut or a damaged
    word breaks the page, and no check short of a JavaScript engine finds it another way)."""
    problems, sums = [], page_sums(folder)
    for name in PAGE_FILES:
        fix = RESTORE_CODE.format(f"helpers/figures/{name}")
        try:
            (folder / name).read_text(encoding="utf-8")
            if text_sha256(folder / name) != sums.get(name):
                problems.append(f"✗ helpers/figures/{name} is not the copy this project shipped (its sha256 differs "
                                f"from helpers/figures/{PAGE_SUMS}): {fix}; if you changed it on purpose, run "
                                f"`python -m helpers.doctor --record-page-files`.")
        except FileNotFoundError:
            needs = "the class report of python -m helpers.grade" if name.startswith("report") else "H.export_page"
            problems.append(f"✗ helpers/figures/{name} is missing ({needs} needs it): {fix}.")
        except (OSError, UnicodeDecodeError) as err:
            problems.append(f"✗ helpers/figures/{name} cannot be read ({_reason(err)}): {fix}.")
    return problems, f"the offline page's {len(PAGE_FILES)} scripts and templates are the shipped copies"


NOTEBOOKS = ("01_single_head_attention.ipynb", "02_shrinking_the_head.ipynb", "03_decompression_and_recombination.ipynb",
             "04_head_count_slider.ipynb", "05_all_144_heads.ipynb", "06_what_each_head_learns.ipynb",
             "07_shared_keys_and_values.ipynb", "08_watch_the_heads_learn.ipynb", "app_slider_explorer.ipynb")  # (tested)

def _module_problems(names: list[str]) -> list[str]:
    """One line per damaged file, whichever modules fail because of it: the file that is missing or broken
    when the error says, else the module that does not import."""
    found: dict[str, list[str]] = {}  # what is wrong -> the modules that fail with it
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 - any failure to import is the one line this check exists for
            found.setdefault(_what_is_wrong(name, err), []).append(_as_file(name))
            continue
        if not hasattr(module, "__path__") and not any(n[0] != "_" for n in vars(module)):  # emptied: imports, holds nothing
            found.setdefault(f"{_as_file(name)} is empty", []).append(_as_file(name))
    named = {key.split()[0] for key in found if not key.endswith(" is empty")}
    found = {key: modules for key, modules in found.items() if key.split()[0] not in named or " is empty" not in key}
    lines = []
    for wrong, modules in found.items():
        more = (f"; {len(modules) - 1} more module{'s fail' if len(modules) > 2 else ' fails'} with it"
                if len(modules) > 1 else "")
        if wrong.startswith("the package "):
            package = wrong.split()[2]
            lines.append(f"✗ {wrong}, so {modules[0]} does not import{more}: a file or folder named {package} where you run the "
                         f"command hides it (`python -c \"import {package}; print({package}.__file__)\"` says which), "
                         f"else reinstall it: pip install --force-reinstall {package}.")
            continue
        where = wrong.split()[0] if wrong.startswith("helpers/") else "helpers"
        lines.append(f"✗ {wrong}{more}: {RESTORE_CODE.format(where)}.")
    return lines


def _package_of(err: Exception) -> str | None:
    """The installed package an import failed in (not a file of the project), if the error says which."""
    named = getattr(err, "name", None) if isinstance(err, ImportError) else None
    if named and not named.startswith("helpers"):
        return named.split(".")[0]
    frames = traceback.extract_tb(err.__traceback__) if err.__traceback__ else []
    last = Path(frames[-1].filename).as_posix() if frames else ""
    inside = re.search(r"/(?:site|dist)-packages/([A-Za-z_][\w]*)", last)
    return inside[1] if inside and "/helpers/" not in last else None


def _what_is_wrong(name: str, err: Exception) -> str:
    if package := _package_of(err):  # tqdm.py in the folder the command runs from, or a broken install
        return f"the package {package} cannot be imported ({type(err).__name__}: {str(err)[:160]})"
    missing = err.name if isinstance(err, ModuleNotFoundError) else None
    named = re.match(r"cannot import name '(\w+)' from '(helpers[\w.]*)'", str(err))  # `from . import x`
    if isinstance(err, ImportError) and named and _module_file(named[2]).with_suffix("").is_dir() and \
            not _module_file(f"{named[2]}.{named[1]}").exists():  # a package's module, not a name in a module
        missing = f"{named[2]}.{named[1]}"
    if missing and missing.startswith("helpers"):
        return f"{_as_file(missing)} is missing"
    attribute = re.match(r"module '(helpers[\w.]*)' has no attribute", str(err))  # `x.y` where x lost y
    module = named[2] if named else attribute[1] if attribute else None
    if module and _module_file(module).is_file():  # emptied or cut short: it imports, without the names others use
        return f"{_as_file(module)} is damaged (other modules no longer find the names they use in it)"
    if isinstance(err, SyntaxError) and err.filename and "/helpers/" in Path(err.filename).as_posix():
        return f"helpers/{Path(err.filename).as_posix().rsplit('/helpers/', 1)[1]} is broken ({err.msg}, line {err.lineno})"
    return f"{_as_file(name)} cannot be imported ({type(err).__name__}: {err})"


def _as_file(module: str) -> str:
    return module.replace(".", "/") + ".py"


def _module_file(module: str) -> Path:
    return FIGURES_DIR.parent.parent / _as_file(module)


def _notebook_problems(root: Path) -> list[str]:
    problems = []
    for name in NOTEBOOKS:
        where, path = f"notebooks/{name}", root / "notebooks" / name
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells")
            if not isinstance(cells, list) or not cells:
                problems.append(f"✗ {where} has no cells: {RESTORE_CODE.format(where)}.")
        except FileNotFoundError:
            problems.append(f"✗ {where} is missing: {RESTORE_CODE.format(where)}.")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError) as err:
            problems.append(f"✗ {where} is not a readable notebook ({_reason(err)}): {RESTORE_CODE.format(where)}.")
    return problems


def _facade_problems(failed: set[str]) -> list[str]:
    """Each name the notebooks call as `H.name` is still in its module: an emptied or cut file imports, without them."""
    missing: dict[str, list[str]] = {}  # the module's file -> the names it lost
    for name in H.__all__:
        try:
            getattr(H, name)
        except AttributeError as err:
            where = _as_file(getattr(err.obj, "__name__", "helpers"))
            if where not in failed:  # a module that does not import is named once, by _module_problems
                missing.setdefault(where, []).append(name)
        except Exception:  # noqa: BLE001, S112 - a module that does not import: _module_problems named it
            continue
    return [f"✗ {where} is damaged: it no longer defines {', '.join(names[:3])}{' …' if len(names) > 3 else ''}, "
            f"which the notebooks call: {RESTORE_CODE.format(where)}." for where, names in missing.items()]


def _check_call_problems(root: Path) -> list[str]:
    """Every exercise's notebook still calls its check (a cell edited in class loses it: answers go unchecked)."""
    try:
        entries = importlib.import_module("helpers.exercises.catalogue").entries()
    except Exception:  # noqa: BLE001 - the module is named by _module_problems
        return []
    problems = []
    for entry in entries:
        name = next(n for n in NOTEBOOKS if n.startswith(entry.notebook))
        try:
            cells = json.loads((root / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c.get("cell_type") == "code")
        except Exception:  # noqa: BLE001, S112 - a missing or broken notebook: _notebook_problems named it
            continue
        if f"H.{entry.check}(" not in code:
            where = f"notebooks/{name}"
            problems.append(f"✗ {where} no longer calls H.{entry.check}(…) (its exercise “{entry.title}”), so "
                            f"that exercise is never checked: {RESTORE_CODE.format(where)}.")
    return problems


def check_code(root: Path = FIGURES_DIR.parent.parent) -> tuple[list[str], str]:
    """(problems, summary): every lesson notebook is there and reads as a notebook with cells, and every module of
    helpers/ imports (a copy damaged by a bad merge or a half-finished download fails here, not in front of the class)."""
    problems = _notebook_problems(root)
    if not (root / "helpers" / "__init__.py").is_file():
        return problems + [f"✗ helpers/__init__.py is missing: {RESTORE_CODE.format('helpers/__init__.py')}."], ""
    # the grader's modules are left to --grading: they use POSIX calls a Windows laptop does not have
    modules = [m.name for m in pkgutil.walk_packages(H.__path__, "helpers.")
               if not m.name.endswith("__main__") and not m.name.startswith("helpers.grade")]
    broken = _module_problems(modules)
    failed = {word for line in broken for word in line.split() if word.startswith("helpers/")}
    problems += broken + _facade_problems(failed) + _check_call_problems(root)
    return problems, (f"{len(NOTEBOOKS)} notebooks read, each exercise's check called, and {len(modules)} helper "
                      f"modules imported")


CHECKS = (check_versions, check_widget_front_end, check_data, check_page_files, check_code, check_map)
GRADERS = {"nbgrader": "0.9", "otter-grader": "7"}  # pyproject.toml's extra `grading`
GRADING_EXTRA = 'pip install -e ".[grading]"'


def check_fork() -> tuple[list[str], str]:
    """(problems, summary): `python -m helpers.grade` grades each submission in a fresh worker process:
    forked from a forkserver on Linux, spawned elsewhere; the worker confines itself with POSIX calls."""
    if not hasattr(os, "fork") or not hasattr(os, "setsid"):
        return [f"✗ This Python cannot start a confined worker ({sys.platform}): grade the class in WSL, on Linux "
                f"or macOS, or in the container of docs/teaching.md."], ""
    method = "forkserver" if sys.platform.startswith("linux") else "spawn"
    bwrap = "found: --sandbox bwrap" if shutil.which("bwrap") else "not installed: --sandbox none"
    return [], f"one fresh worker per submission ({method}, {sys.platform}); bubblewrap {bwrap}"


EXPORT = ("import sys; from helpers.grade import nbgrader, otter; "
          "print(len(nbgrader.write_source(sys.argv[1])), len(otter.write_source(sys.argv[2])))")


def check_export(timeout: float = 120) -> tuple[list[str], str]:
    """(problems, summary): lessons 01-07 export for nbgrader and otter-grader (what `python -m helpers.grade
    --nbgrader` and `--otter` write), into a temporary folder, in a process of their own."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = subprocess.run([sys.executable, "-c", EXPORT, str(Path(tmp) / "nbgrader"), str(Path(tmp) / "otter")],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return [f"✗ Exporting the lessons took over {timeout:g} s: run `python -m helpers.grade --nbgrader "
                    f"FOLDER` to see why."], ""
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        if "git checkout" in last:  # a lesson's own line: which notebook, and how to restore it
            return [f"✗ Exporting the lessons for nbgrader and otter-grader failed. {last.split(': ', 1)[-1]}"], ""
        damaged = re.search(r"module '(helpers[\w.]*)' has no attribute", last)
        fix = RESTORE_CODE.format(_as_file(damaged[1])) if damaged else INSTALL
        return [f"✗ Exporting the lessons for nbgrader and otter-grader failed ({last}): {fix}."], ""
    return [], f"lessons exported for nbgrader and otter-grader ({done.stdout.split()[0]} notebooks each)"


def check_graders(required: dict[str, str] = GRADERS) -> tuple[list[str], str]:
    """(problems, summary): nbgrader and otter-grader, when installed, are new enough and can start."""
    problems, found = _packages(required, f"to grade with it run `{GRADING_EXTRA}` (python -m helpers.grade "
                                          f"itself does not need it)", f"run `{GRADING_EXTRA}`")
    if "nbgrader" in " ".join(found) and shutil.which("alembic") is None:  # nbgrader runs it to open its database
        problems.append("✗ nbgrader runs `alembic`, which is not on PATH: activate the virtual environment "
                        "(`source .venv/bin/activate`) before running nbgrader (`python -m helpers.grade` does not "
                        "need it).")
    return problems, ", ".join(found)


GRADER_MODULES = ("classroom", "confine", "definitions", "lessons", "pool", "preload", "results", "runner",
                  "submissions", "wire", "worker")  # what `python -m helpers.grade` cannot run without (tested)


def check_grader_code() -> tuple[list[str], str]:
    """(problems, summary): the lessons' notebooks the grader reads are there, and every module of the grader
    (helpers/grade/) imports, and every other module of helpers/ too: the lessons' setups the grader runs
    import them (a damaged helpers/analysis/captions.py failed every grading while this said ✓)."""
    names = ["helpers.grade", *(f"helpers.grade.{m.name}" for m in pkgutil.iter_modules(
        [str(FIGURES_DIR.parent / "grade")]) if m.name != "__main__")]
    missing = [f"helpers.grade.{m}" for m in GRADER_MODULES if f"helpers.grade.{m}" not in names]
    others = [m.name for m in pkgutil.walk_packages(H.__path__, "helpers.")
              if not m.name.endswith("__main__") and not m.name.startswith("helpers.grade")]
    root = FIGURES_DIR.parent.parent
    problems = _notebook_problems(root) + _check_call_problems(root) + _module_problems(missing + names + others)
    return problems, (f"the lessons' notebooks read, the grader's {len(names)} modules and the {len(others)} other "
                      f"helper modules imported")


GRADING_CHECKS = (check_grader_code, check_data, check_fork, check_export, check_graders)  # data: 05-08's setups
# load the models (a missing one failed those lessons in every worker while this said ready)


def diagnose(checks=CHECKS) -> list[str]:
    """Every line the doctor prints: ✓ for a check that passed, ✗ and the fix for each problem."""
    lines = []
    for check in checks:
        problems, summary = check()
        lines += problems or [f"✓ {summary}"]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.doctor", description="Check this machine before class.")
    parser.add_argument("--grading", action="store_true", help="check what grading a class needs instead")
    parser.add_argument("--record-page-files", action="store_true",
                        help=f"after editing the offline page's scripts on purpose: record their checksums "
                             f"({PAGE_SUMS})")
    args = parser.parse_args(argv)
    if args.record_page_files:
        record_page_sums()
        print(f"Recorded the checksums of {', '.join(PAGE_FILES)} in helpers/figures/{PAGE_SUMS}.")
        return 0
    grading = args.grading
    start = time.perf_counter()
    # a console that cannot show ✓ (PYTHONIOENCODING=ascii, a redirected Windows cp1252 one) gets "?" instead
    sys.stdout.reconfigure(errors="replace")
    lines = diagnose(GRADING_CHECKS if grading else CHECKS)
    problems = [line for line in lines if line.startswith("✗")]
    print("\n".join(lines))
    seconds = time.perf_counter() - start
    print(f"{len(problems)} problem{'' if len(problems) == 1 else 's'} found in {seconds:.1f} s" if problems
          else f"All good in {seconds:.1f} s: this machine is ready {'to grade a class' if grading else 'for class'}.")
    return len(problems)


if __name__ == "__main__":
    sys.exit(main())
