"""The package's shape: layers that import downwards only, one idea per module, an explicit facade.

The layer rules themselves are import-linter contracts in pyproject.toml; this file runs them
and checks what a contract cannot say (a module's stated idea and size, imports hidden in
functions, the facade).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import helpers as H
from helpers.grade.lessons import VERDICT_OF

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "helpers"
MODULES = sorted(PACKAGE.rglob("*.py"))
LONG = 400  # past this a module is worth a second look: is it still one idea?
LONG_MODULES: dict[str, str] = {  # "figures/x.py": why it is one idea all the same
    "exercises/sandbox.py": "running a student's function so it cannot stop the notebook or fool the check: "
                            "copies, time limit, exit(), patches and notebook variables put back, in one path",
    "exercises/diagnosis.py": "what a wrong answer is beyond the catalogue: relations, fitted constants, errors "
                              "in words, a notebook variable read, and the evidence for 'fixed to the first input'",
    "exercises/grading.py": "the verdict on one answer, in the order a check decides it: outcomes read, the catalogue "
                            "of named mistakes matched, a slip diagnosed, each verdict's line worded",
    "doctor.py": "one command's checks of a copy before class or grading: versions, widget front end, data, page "
                 "files, notebooks, exercise checks and modules, each one line naming the file and its fix",
    "grade/confine.py": "what a grading worker may reach: its namespaces, mounts and limits, the pids cgroup "
                        "around it and the bubblewrap that may hold them",
    "grade/definitions.py": "what is taken from a notebook to grade and why the rest is not: the cells read as "
                            "Jupyter runs them, the exercise's statement as written and plain definitions around it, "
                            "each refusal in one line",
    "train.py": "training a recipe from the command line: the recipes, the loop, the seeds and snapshots a run "
                "records, and --out checked before the first step",
    "grade/runner.py": "the process a submission's code runs in, and the worker's side of it: started, asked for "
                       "a verdict, called again for the confirming check, and how it ended said in words",
    "grade/submissions.py": "a class's files as bytes and whose each one is: zips (nested, damaged, climbing out), "
                            "folders, and the platforms' ways of naming a student, each a line in a row, never a crash",
}


def test_the_layer_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_the_tree_has_the_five_layers_and_the_training_command():
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    commands = {"grade"}  # a command on top of the layers, like train.py and doctor.py (python -m helpers.grade)
    assert layers - commands == {"core", "analysis", "figures", "widgets", "exercises"}
    assert (PACKAGE / "train.py").is_file() and (PACKAGE / "README.md").is_file()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_says_its_one_idea(path):
    """A module is split by idea, never to meet a line count; its docstring names the idea."""
    assert (ast.get_docstring(ast.parse(path.read_text())) or "").strip()


def test_a_long_module_is_listed_with_its_reason():
    """Over ~400 lines is a prompt, not a rule: a long module stays when its reason is written down."""
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in MODULES}
    assert sorted(m for m, n in lines.items() if n > LONG and m not in LONG_MODULES) == []
    assert sorted(m for m in LONG_MODULES if lines.get(m, 0) <= LONG) == []  # no stale entries


def _imports_inside_functions(tree: ast.AST) -> list[str]:
    found = []
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("helpers")):
                    found.append(f"{func.name}: from {'.' * node.level}{node.module or ''}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_of_ours_is_imported_inside_a_function(path):
    """Such an import is how a cycle hides; optional third-party packages may still load late."""
    assert _imports_inside_functions(ast.parse(path.read_text())) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_crosses_a_subpackage(path):
    tree = ast.parse(path.read_text())
    crossing = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level >= 2
                for alias in node.names if alias.name.startswith("_")]
    assert crossing == []


def test_core_loads_neither_matplotlib_nor_ipywidgets():
    code = ("import sys, helpers.core.run, helpers.core.walkthrough, helpers.analysis.relations, helpers.train; "
            "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'IPython') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def _names_used_in_lessons() -> set[str]:
    """`H.name` in the notebooks, the README, data/README.md and the guide, and the verdicts the grader's exported
    test cells call (`H.knockout_verdict(…)[0]`, grade/lessons.py)."""
    texts = [json.dumps(json.loads(p.read_text())["cells"]) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    texts += [(ROOT / f).read_text() for f in ("README.md", "docs/teaching.md", "data/README.md")]
    found = {name for text in texts for name in re.findall(r"\bH\.([A-Za-z_]\w*)\(?", text)}
    return found | set(VERDICT_OF.values())


def test_every_name_a_lesson_uses_is_in_the_facade():
    missing = sorted(_names_used_in_lessons() - set(H.__all__))
    assert missing == []
    for name in H.__all__:
        assert getattr(H, name) is not None


def _names_used_in_scripts() -> set[str]:
    """`H.name` in the code (not the docstrings) of bench/ and tools/: each must be in the facade."""
    trees = [ast.parse(p.read_text()) for folder in ("bench", "tools") for p in sorted((ROOT / folder).glob("*.py"))]
    return {node.attr for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "H"}


def test_every_name_a_bench_or_tool_uses_is_in_the_facade():
    """Else the script breaks only when someone runs it (bench_model.py once stopped at H.shipped_models)."""
    assert sorted(_names_used_in_scripts() - set(H.__all__)) == []


STUDENT_NAMES = {"recombination_matrix"}  # 03's recombine answers call it (tests/data/blind_round4.py)


def test_the_facade_holds_only_what_lessons_call():
    """The facade is what a notebook, the README or the guide calls; tests and scripts import from the
    modules. A name a student reaches for in an answer stays too (see STUDENT_NAMES)."""
    assert len(H.__all__) == len(set(H.__all__))
    unused = sorted(set(H.__all__) - _names_used_in_lessons() - STUDENT_NAMES)
    assert unused == []
    assert set(dir(H)) >= set(H.__all__)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        H.no_such_name
