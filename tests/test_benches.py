"""Every bench still runs: each bench/*.py in its quick mode (`--quick`), so an import or API change that
breaks a bench fails the suite instead of the next person who measures. Figures are not asserted:
benches print numbers, tests assert behaviour (bench/run_all.py prints them against their targets).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import run_all  # noqa: E402
from helpers.analysis.seeds import cpu_kind  # noqa: E402

SCRIPTS = sorted(BENCH.glob("*.py"))  # every script, new ones included: a bench without --quick fails here
BENCHES = [p for p in SCRIPTS if p.name not in run_all.NOT_BENCHES]


def _param(path: Path):
    """Every bench is slow (all of them start together); one that drives Chromium carries the browser mark too."""
    browser = "chromium" in path.read_text()
    return pytest.param(path.stem, id=path.stem, marks=[pytest.mark.slow] + [pytest.mark.browser] * browser)


@pytest.fixture(scope="module")
def outcomes(request) -> dict[str, run_all.Outcome]:
    """Each selected bench run once with --quick, two at a time, as `run_all.py --quick` runs them (each in
    its own process, forked from one that has imported torch, matplotlib and helpers)."""
    wanted = {item.callspec.params["name"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec") and "name" in item.callspec.params}
    chosen = [p for p in BENCHES if p.stem in wanted]
    return {o.name: o for o in run_all.run_quick(chosen, jobs=2, timeout=600)}


@pytest.mark.parametrize("name", [_param(p) for p in BENCHES])
def test_every_bench_runs_in_quick_mode(outcomes, name):
    outcome = outcomes[name]
    assert not outcome.failed, f"python bench/{name}.py --quick failed (exit {outcome.status}):\n{outcome.tail}"
    for figure in outcome.figures:  # what run_all's table reads
        assert set(figure) == {"figure", "value", "unit", "target", "note"} and figure["figure"]


def test_the_runner_runs_every_script_but_itself_and_its_library():
    assert [p.name for p in run_all.benches()] == [p.name for p in BENCHES]
    assert {"run_all.py", "benchlib.py"} <= {p.name for p in SCRIPTS} and len(BENCHES) >= 12


@pytest.mark.parametrize("runner", ["its own python", "forked, as --quick runs it"])
def test_a_bench_that_fails_or_lacks_quick_fails_the_run(tmp_path, runner):
    benches = {"bench_broken.py": ("import helpers.no_such_module\n", 1, "No module named 'helpers.no_such_module'"),
               "bench_old.py": ("import argparse\nargparse.ArgumentParser().parse_args()\n", 2,
                                "unrecognized arguments"),
               "bench_says.py": ("import sys\nprint('half done')\nsys.exit('no data/ here')\n", 1, "no data/ here"),
               "bench_ends.py": ("import os\nprint('bye', flush=True)\nos._exit(3)\n", 3, "bye")}
    for name, (code, status, says) in benches.items():
        (tmp_path / name).write_text(code)
        path = tmp_path / name
        if runner == "its own python":
            outcome = run_all.run_bench(path, quick=True, timeout=120)
        else:
            outcome = run_all.run_quick([path], jobs=1, timeout=120)[0]
        assert (outcome.status, outcome.failed) == (status, True) and says in outcome.tail, (name, outcome)
        row = run_all.rows(outcome, quick=True)
        assert len(row) == 1 and "FAILED" in row[0] and "✗" in row[0]


def test_a_quick_bench_that_hangs_is_stopped_and_the_others_still_run(tmp_path):
    (tmp_path / "bench_hangs.py").write_text("import time\nprint('waiting', flush=True)\ntime.sleep(600)\n")
    (tmp_path / "bench_fine.py").write_text("print('fine')\n")
    hangs, fine = run_all.run_quick([tmp_path / "bench_hangs.py", tmp_path / "bench_fine.py"], jobs=2, timeout=3)
    assert (hangs.status, fine.status) == (124, 0)
    assert "waiting" in hangs.tail and "stopped after 3 s" in hangs.tail and fine.tail == "fine"


def test_the_table_shows_figures_targets_and_what_could_not_run(tmp_path):
    bench = tmp_path / "bench_two.py"
    bench.write_text(f"import sys; sys.path.insert(0, {str(BENCH)!r})\n"
                     "from benchlib import record, unavailable\n"
                     "record('grid ÷ naive', 0.04, '×', 0.05)\nrecord('new sentence', 120.0, 'ms', 100.0)\n"
                     "unavailable('browser', 'no Chromium at /usr/bin/chromium')\n")
    outcome = run_all.run_bench(bench, quick=False, timeout=120)
    assert not outcome.failed, outcome.tail
    text = run_all.table([outcome], quick=False, load=(0.5, 0.7))
    assert f"{cpu_kind().split(':')[0]}, {os.cpu_count()} cores" in text  # figures belong to one machine
    assert "| bench_two | grid ÷ naive | 0.040× | ≤ 0.050× | ✓ |" in text
    assert "| bench_two | new sentence | 120 ms | ≤ 100 ms | ✗ |" in text
    assert "| bench_two | browser | not measured (no Chromium at /usr/bin/chromium) |" in text
    quick = run_all.table([outcome], quick=True, load=(0.5, 0.7))
    assert "✓" not in quick.split("|---|")[1] and "(quick)" in quick  # quick numbers are never judged


def test_quick_never_writes_the_last_run_file():
    before = run_all.LAST_RUN.read_bytes() if run_all.LAST_RUN.exists() else None
    done = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--quick", "--write"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--quick measures nothing" in done.stderr
    assert (run_all.LAST_RUN.read_bytes() if run_all.LAST_RUN.exists() else None) == before


def test_a_bench_run_by_hand_writes_no_figures_file(tmp_path):
    script = (f"import json, sys; sys.path.insert(0, {str(BENCH)!r}); import benchlib; "
              "benchlib.record('x', 1, 's'); print(json.dumps(benchlib.FIGURES))")
    env = {k: v for k, v in os.environ.items() if k != "BENCH_FIGURES"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and list(tmp_path.iterdir()) == []
    assert json.loads(done.stdout)[0]["value"] == 1.0
