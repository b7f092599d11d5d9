"""What 04, 07, 08 and the guide say about trained variants rests on the recorded seed runs (issue 49).

The numbers each sentence quotes are checked in tests/claims_04.py, claims_07.py and claims_08.py. Here: the seed
tables the notebooks print read the same recorded runs as those checks, and no sentence speaks of "every run",
"always" or "never" about trained variants, except as "all n of our n runs" with n >= 16 (seeds.MANY)."""

import re
from pathlib import Path

import pytest

import claims
import helpers as H
from helpers.analysis import seeds as S

ROOT = Path(__file__).resolve().parent.parent
HEADS = [f"heads-{h}" for h in (1, 2, 3, 4, 6, 12)]
KV = [f"kv-{n}" for n in (1, 2, 3, 4, 6, 12)]
ABOUT_RUNS = re.compile(r"\b(every run|in every|always|never)\b[^.]*\b(run|seed|model|head count|layout)s?\b", re.I)
ALL_OF = re.compile(r"\ball (\d+) of our (\d+) runs\b")


@pytest.mark.parametrize("names", [HEADS, KV])
def test_the_seed_table_prints_the_recorded_runs(names):
    """04 §5 and 07 §4 print H.seed_table(names): its counts and means are the recorded seeds'."""
    rows = {line.split()[0]: line for line in H.seed_table(names).splitlines()[1:]}
    for name in names:
        k, n = S.learned(name)
        assert rows[name].split()[1:3] == [str(n), str(k)], rows[name]
        assert S.mean_text(S.spread(name, "list_accuracy").values.values(), percent=True) in rows[name]
        assert S.mean_text(S.spread(name, "held_out_loss").values.values()) in rows[name]


def sentences_about_runs() -> list[tuple[str, str]]:
    out = [(nb, s) for nb in ("04", "07", "08") for s in claims.sentences(claims.markdown(nb))]
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    return out + [("guide", s) for s in claims.sentences(guide)]


def test_no_every_run_always_or_never_about_trained_variants():
    """"Every run", "always", "never" over runs only as "all n of our n runs" with n >= 16."""
    bad = [f"{where}: {s[:120]}" for where, s in sentences_about_runs() if ABOUT_RUNS.search(s)
           and "never seen in training" not in s and "never trained" not in s]
    assert not bad, "\n".join(bad)
    for where, s in sentences_about_runs():
        for k, n in ALL_OF.findall(s):
            assert k == n and int(n) >= S.MANY, f"{where}: {s}"
