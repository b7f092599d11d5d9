"""Every notebook: committed clean, navigation fresh, runs top to bottom headless, same text twice.

Each notebook is executed three times per test run: once for the error check (that run's outputs are
shared by every test that reads them), once more for the determinism check, once with the solutions
pasted in. The runs the selected tests need start together when this module starts, two at a time
(each kernel is its own process: a 2-core machine runs two at once); each test waits only for its own.
"""

import ast
import html
import re
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from conftest import execute_once_started

from helpers.exercises import solutions

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LESSONS = [p for p in NOTEBOOKS if p.name[:2].isdigit()]  # 01-08, not the app
IMAGES = ("image/png", "image/gif", "image/jpeg")  # the image outputs a notebook can show
CELL_TIMEOUT = 600  # seconds; generous for a busy 2-core machine
_runs: dict[Path, list[list[str]]] = {}
_executed: dict[Path, nbformat.NotebookNode] = {}  # the first run's notebook, outputs included
_POOL = ThreadPoolExecutor(2)  # notebook runs at once
_started: dict[tuple[str, Path], Future] = {}  # (kind of run, notebook) -> its one run
_LOCKS: dict[Path, threading.Lock] = {}  # one per notebook


def test_there_are_notebooks():
    names = [p.name for p in NOTEBOOKS]
    assert names[:3] == ["01_single_head_attention.ipynb", "02_shrinking_the_head.ipynb",
                         "03_decompression_and_recombination.ipynb"]


def _text_outputs(nb) -> list[list[str]]:
    """The text each code cell printed or returned, with memory addresses blanked out.

    Consecutive stream outputs are joined: the kernel may cut the same printout into chunks differently."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for out in cell.outputs:
            if out.output_type == "stream":
                if texts and texts[-1].startswith(f"{out.name}: "):
                    texts[-1] += out.text
                else:
                    texts.append(f"{out.name}: {out.text}")
            elif out.output_type in ("execute_result", "display_data"):
                texts.append(out.get("data", {}).get("text/plain", ""))
            elif out.output_type == "error":
                texts.append(f"error: {out.ename}: {out.evalue}")
        cells.append([re.sub(r"0x[0-9a-fA-F]+", "0x…", t) for t in texts])
    return cells


def _execute(path: Path, nb=None) -> list[list[str]]:
    nb = nbformat.read(path, as_version=4) if nb is None else nb
    try:
        execute_once_started(lambda: NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                                    resources={"metadata": {"path": str(path.parent)}}))
    except CellExecutionError as err:
        pytest.fail(f"{path.name} failed:\n{str(err)[-3000:]}", pytrace=False)
    outputs = _text_outputs(nb)
    for texts in outputs:
        for text in texts:
            assert "Traceback" not in text, f"{path.name} printed a traceback:\n{text[-2000:]}"
    return outputs


def _first(path: Path) -> list[list[str]]:
    nb = nbformat.read(path, as_version=4)
    outputs = _execute(path, nb)
    _executed[path] = nb  # the first run's notebook, read by every test of its outputs (not the second run's)
    return outputs


def _solved(path: Path) -> nbformat.NotebookNode:
    """The notebook run with every exercise's solution pasted over its stub (the rest of each cell kept)."""
    nb = nbformat.read(path, as_version=4)
    for cell, node in list(_exercise_cells(nb)):
        lines = cell.source.splitlines()
        cell.source = "\n".join(lines[:node.lineno - 1] + solutions.source(node.name).splitlines()
                                 + lines[node.end_lineno:])
    _execute(path.with_name("solved_" + path.name), nb)
    return nb


RUNS = {"first": _first, "second": _execute, "solved": _solved}
NEEDS = {"test_runs_top_to_bottom": ("first",), "test_same_text_output_twice": ("first", "second"),
         "test_figures_render_as_images": ("first",), "test_every_figure_a_notebook_shows_has_alt_text": ("first",),
         "test_every_check_says_not_attempted_with_the_stubs": ("first",),
         "test_every_check_says_pass_with_the_solutions": ("solved",)}


def _alone(kind: str, path: Path):
    """One run of `path`, never beside another run of the same notebook: they would write the same figure files."""
    with _LOCKS.setdefault(path, threading.Lock()):
        return RUNS[kind](path)


def _run(kind: str, path: Path) -> Future:
    """The one run of this kind of this notebook: started now unless it already was."""
    if (kind, path) not in _started:
        _LOCKS.setdefault(path, threading.Lock())  # made here, in the main thread, before any worker asks
        _started[kind, path] = _POOL.submit(_alone, kind, path)
    return _started[kind, path]


@pytest.fixture(scope="module", autouse=True)
def _start_the_runs(request):
    """Start the runs the selected tests of this module need, first runs first; cancel unstarted ones at the end."""
    wanted = [(kind, item.callspec.params["path"]) for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")
              for kind in NEEDS.get(item.originalname, ())]
    for order in RUNS:
        for kind, path in dict.fromkeys(wanted):
            if kind == order:
                _run(kind, path)
    yield
    for future in _started.values():
        future.cancel()  # a stopped session (-x) does not wait for runs nobody will read


def _first_run(path: Path) -> list[list[str]]:
    if path not in _runs:
        _runs[path] = _run("first", path).result()
    return _runs[path]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs_and_with_a_kernel(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: set the python3 kernelspec"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name} cell {i} carries outputs; clear them before committing"
            assert cell.execution_count is None, f"{path.name} cell {i} carries an execution count"


def test_navigation_is_fresh():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "make_nav.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_runs_top_to_bottom(path):
    _first_run(path)


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_same_text_output_twice(path):
    first = _first_run(path)
    second = _run("second", path).result()
    for i, (a, b) in enumerate(zip(first, second)):
        assert a == b, f"{path.name}: code cell {i} printed different text on the second run:\n{a}\n---\n{b}"


@pytest.fixture(scope="session")
def executed():
    """executed(path) -> the notebook after its first run, outputs included. Every test that reads a
    notebook's outputs shares that one run (the determinism test adds the only second one)."""
    def get(path: Path) -> nbformat.NotebookNode:
        _first_run(path)
        return _executed[path]
    return get


def _shows_a_figure(source: str) -> bool:
    """A cell whose last line returns a figure (H.plot_…(…), H.prediction_bars(…), fig, H.show_figure(…)) or that
    calls plt.show()."""
    try:
        body = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))).body
    except SyntaxError:
        return False
    if "plt.show()" in source:
        return True
    if not body or not isinstance(body[-1], ast.Expr):
        return False
    value = body[-1].value
    if isinstance(value, ast.Name):
        return value.id == "fig"
    name = getattr(getattr(value, "func", None), "attr", "") or getattr(getattr(value, "func", None), "id", "")
    return name.startswith("plot_") or name in ("prediction_bars", "show_figure")


@pytest.mark.notebook
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_figure_a_notebook_shows_has_alt_text(path, executed):
    """Every image output (PNG, GIF, JPEG) carries alt text, in its metadata and as <img alt> in text/html
    (JupyterLab draws the HTML; nbconvert reads the metadata): tests/test_alt_text.py has the rest."""
    nb, shown, missing = executed(path), [], []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for out in cell.outputs:
            mime = next((m for m in IMAGES if m in out.get("data", {})), None)
            if mime is None:
                continue
            alt = out.get("metadata", {}).get(mime, {}).get("alt", "")
            tag = re.search(r'<img [^>]*alt="([^"]+)"', out["data"].get("text/html", ""))
            (shown if alt and tag and html.unescape(tag[1]) == alt else missing).append((i, alt[:120]))
    print(f"{path.name}: {len(shown)} images with alt text, e.g. {shown[:1]}")
    assert not missing, f"{path.name}: images without alt text (code cell, alt): {missing}"
    showing = sum("H.show_figure(" in c.source or "_animation(" in c.source for c in nb.cells if c.cell_type == "code")
    assert len(shown) >= showing > 0, f"{path.name}: {len(shown)} images for {showing} cells that show one"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_figures_render_as_images(path, executed):
    """JupyterLab, VS Code and nbconvert show a figure only as image/png; '<Figure size …>' text means it was lost."""
    figure_cells = 0
    for i, cell in enumerate(executed(path).cells):
        if cell.cell_type != "code":
            continue
        data = [out.get("data", {}) for out in cell.outputs if out.output_type in ("execute_result", "display_data")]
        # a figure's output carries text/plain "<Figure size …>" beside its image/png; shown alone, that text is all a reader gets
        texts = [d.get("text/plain", "") for d in data if "image/png" not in d] + [out.get("text", "") for out in cell.outputs]
        assert not any("<Figure size" in t for t in texts), f"{path.name} cell {i} shows a figure as text: {texts}"
        if _shows_a_figure(cell.source):
            figure_cells += 1
            assert any("image/png" in d for d in data), f"{path.name} cell {i} returns a figure but shows no image"
    if path.name[:2] in ("04", "05", "06"):
        assert figure_cells >= 2, f"{path.name}: only {figure_cells} figure cells found"


def test_importing_helpers_leaves_the_backend_alone():
    """A notebook's backend is its own choice (%matplotlib inline): importing helpers neither sets one nor
    imports pyplot (which would pick one)."""
    code = ("import matplotlib, sys; matplotlib.use('svg'); import helpers; "
            "assert matplotlib.get_backend() == 'svg', matplotlib.get_backend(); "
            "assert 'matplotlib.pyplot' not in sys.modules, 'helpers imported pyplot'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_figure_test_recognises_figure_cells():
    assert _shows_a_figure("x = 1\nH.plot_all_heads(a, b)") and _shows_a_figure("fig = H.f()\nfig")
    assert _shows_a_figure("%matplotlib inline\nH.prediction_bars(lm, s, [])")
    assert _shows_a_figure("fig, ax = plt.subplots()\nplt.show()") and _shows_a_figure("H.show_figure(H.plot_head(m))")
    assert not _shows_a_figure("print(1)") and not _shows_a_figure("explorer.widget")
    assert not _shows_a_figure("fig = H.plot_head(m)")  # assigned, not shown


# Every number notebooks 01–03 state, as the notebooks print it.
STATED = {
    "01_single_head_attention.ipynb": [
        "embeddings: [4 × 768]", "layer input X = LayerNorm(embeddings): [4, 768]",
        "Q = X @ W_Q + b_Q: [4 × 768] · [768 × 768] -> [4 × 768]", "V = X @ W_V + b_V: [4 × 768] · [768 × 768] -> [4 × 768]",
        "scores = q(draw) @ K.T: [1 × 768] · [768 × 4] -> [1 × 4]", "weights of 'draw' [1 × 4]: I 0.37, like 0.43",
        "they add up to 1.00", "adding 10 to every score changes no weight: True",
        "all scores: [4 × 768] · [768 × 4] -> [4 × 4]", "the model's own head gives the same weights: True",
        "  draw:  0.37   0.43   0.06   0.14", "update(draw) = [0.81, 0.47, 1.35]", "the article's weights add up to 1.01",
        "update(draw) = w @ V: [4] · [4 × 768] -> [768]", "update = z(draw) @ W_O + b_O: [768] · [768 × 768] -> [768]",
        "new draw = embedding [768] + update [768] = [768]", "the same as the model's own layer: True",
        "each row sums to 1: True",
        "length of draw's embedding 1.15, of the layer's input X 25.65, of the update 25.04",
        "direction of the new draw against the update: cosine 0.999",
        "W_V · W_O folded into one matrix [768, 768]", "the layer is unchanged (difference below 1e-4): True",
        "the update is 22 times as long as the embedding it is added to",
        "after the LayerNorm that reads it next, every word's row has length 27.8 to 27.9",
        "next word after draw from the update alone:   my 0.98",
    ],
    "02_shrinking_the_head.ipynb": [
        "heads: 12, head size: 768 / 12 = 64", "query: [1 × 768] · [768 × 64] -> [1 × 64]",
        "keys: [4 × 768] · [768 × 64] -> [4 × 64]", "scores: [1 × 64] · [64 × 4] -> [1 × 4]",
        "weights after ÷ √64 = 8 and softmax: [1 × 4]", "values: [4 × 768] · [768 × 64] -> [4 × 64]",
        "update: [1 × 4] · [4 × 64] -> [1 × 64]", "same as the helpers' head 0: True",
        "RuntimeError: The size of tensor a (768) must match the size of tensor b (64)",
        "-> [4 × 768] -> split -> [12 × 4 × 64]", "equals its own [768 × 64] product: True",
        "one head of 768, draw looks at: I 0.37, like 0.43, to 0.06, draw 0.14",
        "5 of 12 heads put more than half of draw's attention on 'I'",
        "we follow head 0: I 0.90, like 0.09, to 0.01, draw 0.00",
        "they differ by 94% of its length", "rows of W_Q[0] that are not all zero: 768 of 768",
        "head  1: on the subject 0.19 (sentence opens the story), 0.03 (later);  on the story's first word 0.00",
    ],
    "03_decompression_and_recombination.ipynb": [
        "head 0: update @ W_O[0]: [1 × 64] · [64 × 768] -> [1 × 768]", "now they fit",
        "concatenated: [4 × 768]  (12 × 64 = 768)", "is its own update: True",
        "recombination: [768 × 768] = 12 blocks of [64 × 768]",
        "update = concat @ W_O: [4 × 768] · [768 × 768] -> [4 × 768]", "plus the bias b_O, the model's own update: True",
        "equal: True", "the same as the model's layer: True",
        "total 2,362,368", "the same: True", "this model's attention layer holds 2,362,368 numbers",
        "in:  [2, 10, 64]", "out: [2, 10, 64]",
        "each head works in 8 numbers (a projection of all 64); 8 heads × 8 = 64 side by side",
        "ValueError: heads=7 does not divide dim=64",
        "I: length   0.89 ->  49.98", "draw: length   0.88 ->  28.35",
        "block 5: [64 × 768], rank 64",
        "the update is 32 to 66 times as long as the embedding; finished rows against the update: cosine 0.9995 or more",
    ],
}


@pytest.mark.notebook
@pytest.mark.parametrize("name", list(STATED))
def test_walkthrough_notebooks_print_the_numbers_they_teach(name):
    text = "\n".join(t for cell in _first_run(ROOT / "notebooks" / name) for t in cell)
    for line in STATED[name]:
        assert line in text, f"{name} no longer prints {line!r}"
    assert "✗" not in text  # the unattempted exercises report "not attempted", never a wrong answer


# --- notebooks 04 and 05: what they print, and what they hold back until an exercise ----------
def _printed(cells) -> str:
    return "\n".join(t for cell in cells if cell.cell_type == "code" for t in _text_outputs(
        nbformat.v4.new_notebook(cells=[cell]))[0])


@pytest.mark.notebook
def test_04_counts_one_head_in_the_singular(executed):
    text = _printed(executed(ROOT / "notebooks" / "04_head_count_slider.ipynb").cells)
    assert not re.search(r"\b1 heads\b", text), "04 prints '1 heads'"
    assert " 1 head:" in text and " 1 head  of 96" in text and "trained with  1 head " in text


@pytest.mark.notebook
def test_05_keeps_exercise_9s_answer_and_06s_type_counts_back(executed):
    """Before Exercise 9 nothing printed names the previous-word head (L0 H9, also the determiner row's
    best); notebook 06 asks students to count the head types, so 05 prints no counts of them."""
    cells = executed(ROOT / "notebooks" / "05_all_144_heads.ipynb").cells
    exercise = next(i for i, c in enumerate(cells) if c.source.startswith("## 9. Exercise"))
    before, after = _printed(cells[:exercise]), _printed(cells[exercise:])
    assert "L0 H9" not in before and "previous:" not in before and "determiner:" not in before
    assert "'none'" not in before + after
    assert "previous: L0 H9" in after and "determiner: L0 H9" in after


def test_05_going_further_sections_start_folded_and_findings_are_markdown():
    """05 (issue 48): each "Going further" heading sits alone in its cell with JupyterLab's collapsed flag, so
    the cells under it start folded and the core path reads on; no finding is composed by H.describe_*."""
    nb = nbformat.read(ROOT / "notebooks" / "05_all_144_heads.ipynb", as_version=4)
    further = [c for c in nb.cells if c.cell_type == "markdown" and re.match(r"#+ .*going further", c.source, re.I)]
    assert len(further) >= 5
    for cell in further:
        assert cell.source.count("\n") == 0, f"text beside a folded heading stays visible: {cell.source!r}"
        assert cell.metadata.get("jp-MarkdownHeadingCollapsed") is True, cell.source
    assert not any("describe_" in c.source for c in nb.cells if c.cell_type == "code")


def test_06_going_further_sections_start_folded_and_findings_are_markdown():
    """06 (issue 48): each "Going further" heading sits alone in its cell with JupyterLab's collapsed flag, and
    a core cell follows each folded section under a heading of its own (else JupyterLab folds it too); no
    finding is composed in Python (no H.describe_*, no printed H.types_caption: the counts are markdown)."""
    nb = nbformat.read(ROOT / "notebooks" / "06_what_each_head_learns.ipynb", as_version=4)
    headings = [(i, len(m.group(1)), m.group(2)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                for m in [re.match(r"(#+) (.*)", c.source)] if m]
    further = [(i, level) for i, level, title in headings if re.search("going further", title, re.I)]
    assert len(further) >= 6
    for i, level in further:
        cell = nb.cells[i]
        assert cell.source.count("\n") == 0, f"text beside a folded heading stays visible: {cell.source!r}"
        assert cell.metadata.get("jp-MarkdownHeadingCollapsed") is True, cell.source
        ends = next((j for j, lvl, _ in headings if j > i and lvl <= level), len(nb.cells))
        folded = [c for c in nb.cells[i + 1:ends] if c.cell_type == "code"]
        assert not any(_shows_widget(c.source) for c in folded), "a widget hidden in a folded section"
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert not any("describe_" in s or "types_caption" in s for s in code)


def _shows_widget(source: str) -> bool:
    return bool(re.search(r"Explorer\(|\.widget\b", source))


# --- exercises: stubs say "not attempted", the solutions from helpers/exercises/solutions.py say ✓ ----------
def _exercise_cells(nb):
    """(cell, def/class node) for every code cell that defines what an exercise asks for."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:  # a cell with an IPython magic (%matplotlib inline) holds no exercise
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in solutions.SOLUTIONS:
                yield cell, node


def _check_lines(cell) -> list[str]:
    """The lines a check printed in an executed exercise cell."""
    text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
    return [line for line in text.splitlines() if line[:1] in "✓✗…"]


def _exercises(path: Path) -> list:
    cells = list(_exercise_cells(nbformat.read(path, as_version=4)))
    checked = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and "H.check_" in c.source]
    assert len(checked) == len(cells), f"{path.name}: every cell with a check needs its solution in helpers/exercises/solutions.py"
    return cells


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_check_says_not_attempted_with_the_stubs(path):
    _first_run(path)
    names = [node.name for _, node in _exercises(path)]
    found = [(cell, node.name) for cell, node in _exercise_cells(_executed[path])]
    assert [n for _, n in found] == names
    for cell, name in found:
        lines = _check_lines(cell)
        assert len(lines) == 1 and "not attempted" in lines[0], f"{path.name} {name}: {lines}"
        assert not any(out.output_type == "execute_result" for out in cell.outputs), f"{name} echoes a value"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_check_says_pass_with_the_solutions(path):
    nb = _run("solved", path).result()
    for cell, node in _exercise_cells(nb):
        lines = _check_lines(cell)
        assert len(lines) == 1 and lines[0].startswith("✓"), f"{path.name} {node.name}: {lines}"


def test_make_nav_writes_links_and_detects_staleness(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_nav
    finally:
        sys.path.pop(0)
    (tmp_path / "notebooks").mkdir()
    for name, title in [("01_a.ipynb", "01 · First"), ("02_b.ipynb", "02 · Second"), ("10_c.ipynb", "10 · Last")]:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nOne line about it.\n\n- a point"),
                    nbformat.v4.new_code_cell("1 + 1")]
        nbformat.write(nb, tmp_path / "notebooks" / name)
    (tmp_path / "README.md").write_text("intro\n<!-- notebooks:start -->\nold\n<!-- notebooks:end -->\nend\n")
    assert make_nav.main(["--check", "--root", str(tmp_path)]) == 1
    assert make_nav.main(["--root", str(tmp_path)]) == 0
    assert make_nav.main(["--check", "--root", str(tmp_path)]) == 0
    middle = nbformat.read(tmp_path / "notebooks" / "02_b.ipynb", as_version=4)
    assert middle.cells[0].source == middle.cells[-1].source
    assert "< [01 · First](01_a.ipynb)" in middle.cells[0].source and "[10 · Last](10_c.ipynb) >" in middle.cells[0].source
    assert len(middle.cells) == 4 and middle.cells[1].source.startswith("# 02")
    readme = (tmp_path / "README.md").read_text()
    assert "- [02 · Second](notebooks/02_b.ipynb): One line about it." in readme and "old" not in readme
    # a renamed title makes the neighbours stale
    first = nbformat.read(tmp_path / "notebooks" / "01_a.ipynb", as_version=4)
    first.cells[1].source = "# 01 · Renamed"
    nbformat.write(first, tmp_path / "notebooks" / "01_a.ipynb")
    assert make_nav.main(["--check", "--root", str(tmp_path)]) == 1
    assert make_nav.main(["--root", str(tmp_path)]) == 0 and make_nav.main(["--check", "--root", str(tmp_path)]) == 0
