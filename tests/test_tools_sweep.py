"""tools/sweep.py: other seeds or settings of a recipe, each checked against the classroom bars."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import sweep  # noqa: E402

from helpers import train  # noqa: E402
from helpers.analysis.relations import SCORED_RELATIONS  # noqa: E402


def test_seed_ranges_and_lists():
    assert sweep.seed_list("1-3,7") == [1, 2, 3, 7]
    assert sweep.seed_list("5") == [5]


def test_overrides_take_the_type_of_the_recipe_field():
    recipe = train.RECIPES["classroom"]
    assert sweep.overrides(["lr=6e-3", "relay_steps=800"], recipe) == {"lr": 0.006, "relay_steps": 800}
    assert sweep.overrides(["bos=false"], recipe) == {"bos": False}
    with pytest.raises(SystemExit, match="one of the recipe's fields"):
        sweep.overrides(["learning_rate=1"], recipe)
    with pytest.raises(SystemExit, match="FIELD=VALUE"):
        sweep.overrides(["lr"], recipe)


@pytest.mark.slow  # trains
def test_a_sweep_trains_each_seed_and_names_the_bars_it_misses(tmp_path):
    out = tmp_path / "runs.jsonl"
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "sweep.py"), "--recipe", "tiny", "--seeds", "0-1",
                             "--set", "tokens=20000", "--out", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["seed   0", "seed   1"]
    runs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in runs] == [0, 1]
    for r in runs:  # a 2 × 2 model trained for seconds grows none of the classroom heads
        assert "previous" in r["missed"] and "resting" in r["missed"], r
        assert set(r["best"]) == set(SCORED_RELATIONS)
        assert 0.0 <= r["forced"] <= 1.0
