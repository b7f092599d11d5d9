"""The setup files agree: pyproject.toml is the one list of dependencies, environment.yml and
README follow it, and .ci/run runs exactly the README's test command."""

import os
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib") if sys.version_info < (3, 11) else __import__("tomllib")


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def environment():
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def minimum(requirements, name):
    for req in requirements:
        m = re.fullmatch(rf"{name}\s*>=\s*([\d.]+)", req.strip())
        if m:
            return m.group(1)
    raise AssertionError(f"no '{name}>=…' in {requirements}")


def test_environment_installs_the_project_with_pip():
    deps = environment()["dependencies"]
    pip_sections = [d["pip"] for d in deps if isinstance(d, dict) and "pip" in d]
    # the project itself, nothing else, with the extras an online environment (Binder) can use
    assert pip_sections == [["-e .[gpt2,slides]"]], "environment.yml must install the project itself with pip"
    assert "pip" in deps
    assert environment()["channels"] == ["conda-forge"]


def test_environment_and_pyproject_agree_on_python_and_torch():
    project = pyproject()["project"]
    conda = [d for d in environment()["dependencies"] if isinstance(d, str)]
    assert project["requires-python"] == ">=3.10"
    assert minimum(conda, "python") == "3.10"
    assert minimum(conda, "pytorch-cpu") == minimum(project["dependencies"], "torch")
    # conda installs only python, pip and torch; every other package comes from pyproject via pip
    names = {re.split(r"[<>=\s]", d)[0] for d in conda}
    assert names == {"python", "pip", "pytorch-cpu"}


def test_pyproject_declares_the_package_and_its_dependencies():
    data = pyproject()
    names = {re.split(r"[<>=\[\s]", d)[0].lower() for d in data["project"]["dependencies"]}
    assert {"numpy", "torch", "matplotlib", "ipywidgets", "jupyterlab", "ipykernel", "tqdm"} <= names
    # the package and every layer under it (a plain ["helpers"] would install no subpackage)
    assert data["tool"]["setuptools"]["packages"]["find"]["include"] == ["helpers", "helpers.*"]
    test_extra = {re.split(r"[<>=\s]", d)[0].lower() for d in data["project"]["optional-dependencies"]["test"]}
    assert {"pytest", "hypothesis", "nbclient", "nbformat", "pypdf"} <= test_extra


def readme_commands():
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith("python3 -m venv")]


def test_readme_has_exactly_two_fresh_machine_commands():
    commands = readme_commands()
    assert len(commands) == 2
    lab, tests = commands
    for command in commands:
        assert "torch==2.13.0" in command and "--index-url" not in command  # CPU build, never CUDA
    assert "jupyter lab" in lab and "notebooks" in lab
    assert tests.endswith("-m pytest -n 2 --dist loadfile --no-loadscope-reorder") and '".[test]"' in tests  # whole files per worker


def test_ci_runs_the_readme_test_command():
    ci = ROOT / ".ci" / "run"
    text = ci.read_text()
    assert os.access(ci, os.X_OK)
    assert "set -euo pipefail" in text and "apt-get install" in text and "/usr/bin/chromium" in text
    pattern = re.search(r"grep -m1 -E '(.+?)' README.md", text).group(1)
    assert re.search(pattern, readme_commands()[1]) and not re.search(pattern, readme_commands()[0])
    assert "|| true" not in text and "set +e" not in text


def test_the_slowest_files_conftest_starts_first_exist():
    from conftest import SLOWEST_FILES

    assert SLOWEST_FILES and all((ROOT / "tests" / name).is_file() for name in SLOWEST_FILES), SLOWEST_FILES
    assert len(set(SLOWEST_FILES)) == len(SLOWEST_FILES)


def test_a_kernel_that_died_while_starting_gets_one_more_start_and_a_failing_cell_none():
    from conftest import KERNEL_START_RACE, execute_once_started

    class Client:
        def __init__(self, errors):
            self.errors = errors

        def execute(self, **kwargs):
            if self.errors:
                raise self.errors.pop(0)
            return "ran"
    died = [RuntimeError(KERNEL_START_RACE)]
    assert execute_once_started(lambda: Client(died)) == "ran" and not died
    with pytest.raises(RuntimeError, match="a cell failed"):
        execute_once_started(lambda: Client([RuntimeError("a cell failed")]))
