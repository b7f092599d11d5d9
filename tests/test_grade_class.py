"""`python -m helpers.grade` on a synthetic class of 30 students × 7 lessons (known answers put in from the
catalogue: right, blank, raised, named mistakes, a lesson not handed in) plus a hostile class, graded in
ONE run, so the suite pays each lesson's setup once (in the grader's forkserver). That run took 79 s on the shared 2-core machine
at a load average of 2-4, and 252-659 s while other suites loaded it (load 5-15); bench/bench_grade.py
says where the time goes.

grades.csv and the report's counts must equal what was put in, exactly; each hostile submission must
leave the others' results, the output folder, $HOME and the other submissions as they were.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from helpers.figures.webpage import read_script_json
from helpers.grade.lessons import lessons
from helpers.grade.synthetic import notebook, write_class

pytestmark = pytest.mark.slow  # one class of 30 graded end to end, in workers: minutes on 2 cores

ROOT = Path(__file__).resolve().parent.parent
STUDENTS, MISSING = 30, {29: "07", 30: "05"}
RIGHT = "    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)\n"
MARKER = "SECRET-MARKER-of-student01"


def _hostile_functions(paths: dict[str, str]) -> dict[str, str]:
    """case -> the cell that defines attention_weights (lesson 01), each doing one hostile thing."""
    c, o, h, s, port = (repr(paths[k]) for k in ("class", "out", "home", "shared", "port"))
    head = "def attention_weights(Q, K):\n    import os, glob, time, socket, subprocess, torch\n"
    return {
        "reads": head + f"    for p in glob.glob({c} + '/*') + glob.glob({o} + '/*') + glob.glob({h} + '/*'):\n"
                        "        print(open(p).read()[:100000])\n" + RIGHT,
        "writes": head + f"    for folder in ({o}, {h}, {c}):\n        try:\n"
                         "            open(folder + '/pwned.txt', 'w').write('pwned')\n"
                         "        except OSError as e:\n            print(e)\n" + RIGHT,
        "deletes": head + f"    for p in glob.glob({c} + '/*') + glob.glob({h} + '/*'):\n        try:\n"
                          "            os.remove(p)\n        except OSError as e:\n            print(e)\n" + RIGHT,
        "socket": head + f"    for address in (('127.0.0.1', {paths['port']}), ('1.1.1.1', 53)):\n        try:\n"
                         "            socket.create_connection(address, timeout=1).sendall(b'pwned')\n"
                         "            print('connected', address)\n"
                         "        except OSError as e:\n            print('refused', e)\n" + RIGHT,
        "subprocess": head + f"    subprocess.run(['sh', '-c', 'echo pwned > ' + {h} + '/sub.txt'])\n" + RIGHT,
        "forks": head + "    child = os.fork()\n    if child == 0:\n"
                        f"        open('/proc/self/comm', 'w').write('gf' + str({port}))\n"
                        "        while True:\n            time.sleep(0.05)\n    print('forked', child > 0)\n" + RIGHT,
        "loops": head + "    while True:\n        try:\n            while True:\n                pass\n"
                        "        except BaseException:\n            pass\n",
        "memory": head + "    x = torch.ones(2 ** 30)  # 4 GB\n" + RIGHT,
        "prints": head + "    print('x' * 100_000_000)\n" + RIGHT,
        "exits": head + "    os._exit(3)\n",
        "patches": head + "    torch.Tensor.softmax = lambda self, dim=None: self\n    return (Q @ K.T).softmax(dim=-1)\n",
        "helpers": ("import helpers as H\nH.check_masked_weights = lambda f: print('✓ masked weights')\n"
                    "torch.Tensor.softmax = None\n") + head + "    return (Q @ K.T).softmax(dim=-1)\n",
        "default": "def attention_weights(Q, K, _=setattr(torch, 'softmax', None)):\n" + RIGHT,
        "edits": head + "    return (Q @ K.T / Q.shape[0] ** 0.5).softmax(dim=-1)\n\n\n"
                        "H.check_attention_weights(lambda Q, K: (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1))\n",
        "removes": head + "    return (Q @ K.T / Q.shape[0] ** 0.5).softmax(dim=-1)\n",
        "fake": head + "    return (Q @ K.T / Q.shape[0] ** 0.5).softmax(dim=-1)\n\n\n"
                       "print('✓ attention weights: correct on 3 inputs of different sizes')\n",
    }


# case -> what grades.csv must show for (attention_weights, masked_weights, weighted_sum)
HOSTILE = {"reads": ("✓", "✓", "✓"), "writes": ("✓", "✓", "✓"), "deletes": ("✓", "✓", "✓"),
           "socket": ("✓", "✓", "✓"), "subprocess": ("✓", "✓", "✓"), "forks": ("✓", "✓", "✓"),
           "loops": ("too slow", "✓", "✓"), "memory": ("raised", "✓", "✓"), "prints": ("✓", "✓", "✓"),
           "exits": ("raised", "✓", "✓"), "patches": ("patched", "✓", "✓"), "helpers": ("no_scale", "no_mask", "✓"),
           "default": ("✓", "✓", "✓"), "edits": ("sqrt_of_T", "✓", "✓"), "removes": ("sqrt_of_T", "✓", "✓"),
           "fake": ("sqrt_of_T", "✓", "✓"), "outputs": ("not attempted", "✓", "✓"), "twice": ("no_scale", "✓", "✓"),
           "later": ("✓", "✓", "✓"), "cells": ("✓", "✓", "✓"), "big": ("✓", "✓", "✓"), "zipped": ("✓", "✓", "✓")}


def _lesson01(aw_cell: str | None, masked: str = "right") -> dict:
    nb = notebook(lessons()["01"].path, {"attention_weights": "blank", "masked_weights": masked, "weighted_sum": "right"})
    if aw_cell is not None:
        cell = next(c for c in nb["cells"] if c["metadata"].get("exercise") == "attention_weights")
        cell["source"] = aw_cell
    return nb


def _code(source: str, outputs=()) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": list(outputs), "execution_count": 1}


def _write(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb), encoding="utf-8")


def _hostile_class(folder: Path, paths: dict) -> None:
    for case, cell in _hostile_functions(paths).items():
        _write(folder / f"hostile-{case}_01.ipynb", _lesson01(cell, "no_mask" if case == "helpers" else "right"))
    shown = _lesson01(None)  # every output claims ✓: outputs are never read
    for cell in shown["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "✓ correct on every input\n"}]
    _write(folder / "hostile-outputs_01.ipynb", shown)
    twice = _lesson01("def attention_weights(Q, K):\n" + RIGHT)
    twice["cells"].append(_code("def attention_weights(Q, K):\n    return (Q @ K.T).softmax(dim=-1)\n"))
    _write(folder / "hostile-twice_01.ipynb", twice)
    later = _lesson01(None)
    later["cells"].append(_code("def attention_weights(Q, K):\n" + RIGHT))
    _write(folder / "hostile-later_01.ipynb", later)
    many = _lesson01("def attention_weights(Q, K):\n" + RIGHT)
    many["cells"] += [_code(f"x = {i}") for i in range(10_000)]
    _write(folder / "hostile-cells_01.ipynb", many)
    big = _lesson01("def attention_weights(Q, K):\n" + RIGHT)
    big["cells"].append(_code("print('x')", [{"output_type": "stream", "name": "stdout", "text": "x" * (50 << 20)}]))
    _write(folder / "hostile-big_01.ipynb", big)
    good = json.dumps(_lesson01("def attention_weights(Q, K):\n" + RIGHT))
    with zipfile.ZipFile(folder / "platform.zip", "w") as z:
        z.writestr("hostile-zipped_01.ipynb", good)
        z.writestr("../../hostile-slip_01.ipynb", good)
        z.writestr("/tmp/hostile-absolute_01.ipynb", good)
    with zipfile.ZipFile(folder / "bomb.zip", "w") as z:
        for i in range(10_000):
            z.writestr(f"f{i}.ipynb", "{}")
    text = json.dumps(_lesson01(None))
    (folder / "broken-truncated_01.ipynb").write_text(text[: len(text) // 2])
    _write(folder / "broken-nbformat3_01.ipynb", {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []})
    _write(folder / "broken-nolesson_01.ipynb", {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                 "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Hi"}]})
    merged = _lesson01(None)
    merged["cells"] += notebook(lessons()["02"].path, {})["cells"]
    _write(folder / "broken-merged_01.ipynb", merged)
    _write(folder / "O'Brien; \"Zoë\" <b>Ñandú_01.ipynb", _lesson01("def attention_weights(Q, K):\n" + RIGHT))


class _Listener:
    """A TCP server on 127.0.0.1 that records every connection (none may arrive from a worker)."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port, self.connections, self.stop = self.sock.getsockname()[1], [], False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                self.connections.append(self.sock.accept()[1])
            except OSError:
                pass


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("grade")
    folder, out, home, shared = base / "class", base / "out", base / "home", base / "shared"
    for d in (home, shared):
        d.mkdir()
    (home / "teacher.txt").write_text("the teacher's file")
    want = write_class(folder, STUDENTS, missing=MISSING)
    first = folder / "student01_01.ipynb"
    nb = json.loads(first.read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": MARKER})
    first.write_text(json.dumps(nb))
    listener = _Listener()
    _hostile_class(folder, {"class": str(folder), "out": str(out), "home": str(home), "shared": str(shared),
                            "port": listener.port})
    before = sorted(p.name for p in folder.iterdir())
    env = dict(os.environ, HOME=str(home))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "helpers.grade", str(folder), "--out", str(out), "--workers", "2"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    listener.stop = True
    time.sleep(1.0)
    alive = [p for p in Path("/proc").glob("[0-9]*/comm") if _comm(p) == f"gf{listener.port}"]
    return dict(done=done, out=out, home=home, folder=folder, shared=shared, want=want, before=before,
                listener=listener, seconds=seconds, alive=alive)


def _comm(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _rows(graded) -> dict[str, dict[str, str]]:
    text = (graded["out"] / "grades.csv").read_text(encoding="utf-8-sig")
    return {row["student"]: row for row in csv.DictReader(text.splitlines())}


def _verdicts(graded) -> dict[str, dict]:
    data = json.loads((graded["out"] / "verdicts.json").read_text(encoding="utf-8"))
    return {s["student"]: s for s in data["students"]}


def test_the_command_finishes_and_writes_every_file(graded):
    assert graded["done"].returncode == 0, graded["done"].stderr[-3000:]
    names = sorted(p.name for p in graded["out"].iterdir() if not p.name.startswith("."))  # .grading: kept results
    assert names == ["class_report.html", "class_report.pdf", "class_report.png", "class_report.svg", "grades.csv",
                     "verdicts.json"]
    print(f"graded {STUDENTS} × 7 + the hostile class in {graded['seconds']:.0f} s")


def test_grades_csv_equals_what_was_put_in_exactly(graded):
    rows = _rows(graded)
    got = {(s, c): rows[s][c] for s, c in graded["want"]}
    assert got == graded["want"]
    kinds = Counter(graded["want"].values())
    assert kinds["✓"] > 100 and kinds["generic"] > 0 and kinds["not submitted"] > 0  # a class, not a handful


def test_totals_count_the_right_answers(graded):
    rows = _rows(graded)
    for s in range(1, STUDENTS + 1):
        student = f"student{s:02d}"
        right = sum(v == "✓" for (who, _), v in graded["want"].items() if who == student)
        assert float(rows[student]["total"]) == right


def test_the_report_counts_equal_what_was_put_in(graded):
    facts = read_script_json((graded["out"] / "class_report.html").read_text(encoding="utf-8"), "data")
    hostile = {s for s in _rows(graded) if not s.startswith("student")}
    columns = [f"{n} {name}" for n, lesson in lessons().items() for name in lesson.names]  # in lesson order
    for ex in facts["exercises"]:
        want = Counter(v for (s, c), v in graded["want"].items() if c == ex["column"])
        shown = Counter({m["code"]: m["count"] for m in ex["mistakes"]})
        extra = _rows(graded)
        others = Counter(extra[s][ex["column"]] for s in hostile if extra[s][ex["column"]] != "not submitted")
        total = want + others
        assert ex["right"] == total["✓"]
        assert len(ex["not_attempted"]) == total["not attempted"]
        assert sum(g["count"] for g in ex["raised"]) == total["raised"]
        assert sum(g["count"] for g in ex["generic"]) == total["generic"] and ex["too_slow"] == total["too slow"]
        assert shown == Counter({k: n for k, n in total.items() if k not in
                                 ("✓", "not attempted", "raised", "too slow", "generic", "not submitted")})
    assert [ex["column"] for ex in facts["exercises"]] == columns


def test_the_top_three_follow_the_documented_rule(graded):
    facts = read_script_json((graded["out"] / "class_report.html").read_text(encoding="utf-8"), "data")
    n = len(facts["exercises"])
    scores = [(-m["count"] * (1 + (n - 1 - i) / n), i, m["code"], ex["column"])
              for i, ex in enumerate(facts["exercises"]) for m in ex["mistakes"]]
    best = [(c, code) for _, _, code, c in sorted(scores)[:3]]
    assert [(t["column"], t["code"]) for t in facts["top"]] == best
    assert all(t["says"] and t["example"] for t in facts["top"])


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_submission_gets_its_own_row_right(graded, case):
    row = _rows(graded)[f"hostile-{case}"]
    got = tuple(row[f"01 {name}"] for name in ("attention_weights", "masked_weights", "weighted_sum"))
    assert got == HOSTILE[case], _verdicts(graded)[f"hostile-{case}"]["verdicts"][0]["line"]


def test_a_default_value_that_patches_torch_runs_as_in_the_notebook_and_the_check_puts_torch_back(graded):
    """`def attention_weights(Q, K, _=setattr(torch, 'softmax', None))` was refused ("runs code as it is defined");
    the runner now runs the definition as the notebook did, and the check undoes the patch before it computes."""
    line = _verdicts(graded)["hostile-default"]["verdicts"][0]["line"]
    assert line.endswith("(A cell had replaced torch.softmax; the check put the original back.)"), line


def test_no_submission_reads_another_or_the_teachers_files(graded):
    verdicts = _verdicts(graded)["hostile-reads"]["verdicts"]
    assert MARKER not in json.dumps(verdicts) and "the teacher's file" not in json.dumps(verdicts)
    assert verdicts[0]["printed"] == ""  # the folders it globbed were empty where it ran


def test_nothing_is_written_into_the_output_folder_home_or_the_class(graded):
    assert not (graded["out"] / "pwned.txt").exists() and not (graded["home"] / "pwned.txt").exists()
    assert not (graded["folder"] / "pwned.txt").exists() and not (graded["home"] / "sub.txt").exists()
    written = [p for p in graded["home"].rglob("*") if p.is_file()]  # the grader's own caches (matplotlib) may be there
    assert not [p for p in written if b"pwned" in p.read_bytes()]


def test_deleting_files_deletes_nothing(graded):
    assert sorted(p.name for p in graded["folder"].iterdir()) == graded["before"]
    assert (graded["home"] / "teacher.txt").read_text() == "the teacher's file"


def test_no_connection_leaves_a_worker(graded):
    assert graded["listener"].connections == []
    printed = _verdicts(graded)["hostile-socket"]["verdicts"][0]["printed"]
    assert "refused" in printed and "connected" not in printed  # (printed once per input the check tries)


def test_a_forked_process_ends_with_its_worker(graded):
    printed = _verdicts(graded)["hostile-forks"]["verdicts"][0]["printed"]
    assert "forked True" in printed  # it forked …
    assert graded["alive"] == []  # … and nothing it started runs once its worker ended


def test_100_mb_of_printing_is_cut(graded):
    verdict = _verdicts(graded)["hostile-prints"]["verdicts"][0]
    assert len(verdict["printed"]) <= 2000 and (graded["out"] / "verdicts.json").stat().st_size < 20 << 20


def test_each_unreadable_notebook_is_one_line_in_its_row(graded):
    rows = _rows(graded)
    for name, words in (("broken-truncated", "not JSON"), ("broken-nbformat3", "nbformat 3"),
                        ("broken-nolesson", "is no lesson"), ("broken-merged", "lessons 01 and 02")):
        assert words in rows[name]["note"] and rows[name]["01 attention_weights"] == "not submitted"


def test_a_zip_with_bad_entries_and_a_zip_bomb_are_said_and_the_rest_graded(graded):
    inputs = json.loads((graded["out"] / "verdicts.json").read_text())["inputs"]
    assert any("../" in line for line in inputs) and any("absolute" in line for line in inputs)
    bomb = _rows(graded)["bomb"]  # a zip in the class folder is its name's student's: a row that says why
    assert bomb["01 attention_weights"] == "not submitted" and "10000 files" in bomb["note"]
    assert "hostile-slip" not in _rows(graded) and "hostile-absolute" not in _rows(graded)


def test_a_name_with_quotes_semicolons_and_markup_is_kept_as_written(graded):
    name = "O'Brien; \"Zoë\" <b>Ñandú"
    assert _rows(graded)[name]["01 attention_weights"] == "✓"
    page = (graded["out"] / "class_report.html").read_text(encoding="utf-8")
    assert "<b>Ñandú" not in page  # only inside the JSON, escaped


def test_the_protections_are_reported(graded):
    protections = json.loads((graded["out"] / "verdicts.json").read_text())["protections"]
    assert "no network (own network namespace)" in protections
    assert any(p.startswith("hidden: ") and p.endswith("/out") for p in protections)
