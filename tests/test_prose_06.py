"""Notebook 06's head types, and notebook 05's labelled grid, asserted on the shipped classroom model.

Position first (Clark et al. 2019): a head is typed by a grammar relation only when it beats the best
fixed-offset baseline of 06's table; otherwise it is "offset", a positional type. Each test names the
sentence it backs.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import helpers as H
from helpers.analysis import relations as S
from helpers.core.catalog import manifest

pytestmark = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no classroom model")


NOTEBOOK = next((Path(__file__).resolve().parent.parent / "notebooks").glob("06_*.ipynb"))


def cell(cell_id: str) -> str:
    """One cell of 06, whitespace flattened so a sentence can be found across line breaks."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    return " ".join("".join(next(c["source"] for c in cells if c.get("id") == cell_id)).split())


@pytest.fixture(scope="module")
def lm():
    return H.load_model("classroom")


@pytest.fixture(scope="module")
def typed(lm):
    return H.head_types(lm)


@pytest.fixture(scope="module")
def beyond(lm):
    return H.relation_scores(lm, beyond_previous=True)


def test_06_type_counts_put_position_first(typed):
    """06 §4: "Two heads are typed previous …, 23 offset … and 12 resting: 37 heads whose pattern position
    explains. 13 are typed by a grammar job that position cannot explain (5 agreement, 2 pronoun, 6 induction),
    and 94 of the 144 heads get no type at all. No head is typed "determiner", "object" or "subject"."""
    types, _ = typed
    assert "13 are typed by a grammar job that position cannot explain (5 agreement, 2 pronoun, 6 induction)" in cell("types-read")
    assert H.type_counts(types) == {"previous": 2, "offset": 23, "resting": 12, "agreement": 5, "pronoun": 2,
                                    "induction": 6, "none": 94}
    assert list(H.type_counts(types))[:3] == ["previous", "offset", "resting"]  # positional types first


def test_06_the_offset_heads_are_the_object_and_subject_heads_and_l6_h11(lm, typed, beyond):
    """06 §4: "23 offset (22 object and subject heads, and L6 H11, whose agreement score 0.54 is no better
    than always looking 3 words back)"; the issue counted object 14 and subject 9 as having a job."""
    types, _ = typed
    offset = {tuple(map(int, x)) for x in np.argwhere(types == "offset")}
    old, _ = S.best_head_types(beyond)  # grammar before baselines: what 06 used to count as a job
    assert sum(t in S.GRAMMAR for t in old.ravel()) == 36
    was = {head: str(old[head]) for head in offset}
    assert sorted(was.values()).count("object") == 14 and sorted(was.values()).count("subject") == 8
    assert was[(6, 11)] == "agreement" and round(float(beyond["agreement"][6, 11]), 2) == 0.54
    stories, _ = H.scored_stories(lm)
    k, baseline = S.offset_baseline(stories, "agreement", beyond_previous=True)
    assert k == 3 and round(baseline, 2) == 0.54 and beyond["agreement"][6, 11] <= baseline


def test_06_offset_heads_do_not_look_a_fixed_distance_back_everywhere(lm, typed, beyond):
    """06 §4 back-code / back-read: "Looking 2 back or 3 back, none of the 23 gives a quarter of its attention
    to either word; to the two words together, up to 0.37 (L4 H10)"; "22 of the 23 score 0.5 or more on one of
    them" (objects or subjects). It used to say "none ... more than a quarter ... 2 or 3 back", false for the
    two together."""
    assert "none of the 23 puts more than a quarter of its attention 2 or 3 back" not in cell("back-read")
    assert "none of the 23 gives a quarter of its attention to either word; to the two words together, up to 0.37 (L4 H10)" in cell("back-read")
    assert "22 of the 23 score 0.5 or more on one of them" in cell("back-read")
    types, _ = typed
    offset = types == "offset"
    stories, attn = H.scored_stories(lm)
    back = H.back_scores(lm, (2, 3))
    for k in (2, 3):  # the helper is the plain measurement: mean attention k back over every word with one
        plain = S.pair_scores(attn, [(b, q, q - k) for b, s in enumerate(stories) for q in range(k, len(s.tokens))])
        assert np.allclose(back[k], plain) and back[k][offset].max() < 0.25, (k, back[k][offset].max())
    assert (f"{back[2][offset].max():.2f}", f"{back[3][offset].max():.2f}") == ("0.22", "0.16")
    together = np.where(offset, back[2] + back[3], -1)
    assert f"{together.max():.2f}" == "0.37" and np.unravel_index(together.argmax(), together.shape) == (4, 10)
    assert together.max() > 0.25  # "more than a quarter 2 or 3 back" is true of the two together
    high = [tuple(map(int, x)) for x in np.argwhere(offset) if max(beyond["object"][tuple(x)], beyond["subject"][tuple(x)]) >= 0.5]
    assert len(high) == 22 and offset.sum() == 23 and (6, 11) not in high


def test_06_grammar_heads_margins_over_the_baseline_and_their_noise(lm, typed):
    """06 §4 margins-code / margins-read: "Eleven heads beat position by more than the noise: the 6 induction
    heads by 0.37 to 0.71, 4 agreement heads by 0.12 to 0.42 and the pronoun head L6 H0 by 0.12, each with its
    whole interval above 0. Two beat it by less than the noise: L6 H10 (agreement, by 0.04 on 107 pairs,
    interval −0.06 to +0.14) and L10 H0 (pronoun, by 0.02 on 100 pairs, −0.09 to +0.13)." The count of 11
    holds for every bootstrap seed tried, not only the one on screen."""
    text = cell("margins-read")
    for said in ("Eleven heads beat position by more than the noise", "the 6 induction heads by 0.37 to 0.71",
                 "4 agreement heads by 0.12 to 0.42", "the pronoun head L6 H0 by 0.12",
                 "L6 H10 (agreement, by 0.04 on 107 pairs, interval −0.06 to +0.14)",
                 "L10 H0 (pronoun, by 0.02 on 100 pairs, −0.09 to +0.13)", "count 11 heads with a grammar job"):
        assert said in text, said
    types, _ = typed
    rows = H.grammar_margins(lm)
    assert sorted(r["head"] for r in rows) == sorted(tuple(map(int, x)) for x in np.argwhere(np.isin(types.astype(str), S.GRAMMAR)))
    report = {r["relation"]: r for r in H.relation_report(lm)}
    for r in rows:  # the margin is the score table's number minus 06's baseline column
        assert np.isclose(r["score"], S.relation_scores(lm, beyond_previous=True)[r["relation"]][r["head"]], atol=1e-6)
        assert r["baseline"] == report[r["relation"]]["baseline"] and r["low"] < r["margin"] < r["high"]
    within = {r["head"]: r for r in rows if not r["clear"]}
    assert sorted(within) == [(6, 10), (10, 0)]
    a, p = within[(6, 10)], within[(10, 0)]
    assert (a["relation"], a["pairs"], f"{a['margin']:.2f}", f"{a['low']:+.2f}", f"{a['high']:+.2f}") == ("agreement", 107, "0.04", "-0.06", "+0.14")
    assert (p["relation"], p["pairs"], f"{p['margin']:.2f}", f"{p['low']:+.2f}", f"{p['high']:+.2f}") == ("pronoun", 100, "0.02", "-0.09", "+0.13")
    clear = [r for r in rows if r["clear"]]
    by = {rel: [r["margin"] for r in clear if r["relation"] == rel] for rel in S.GRAMMAR}
    assert len(clear) == 11 and len(by["induction"]) == 6 and len(by["agreement"]) == 4 and len(by["pronoun"]) == 1
    assert (f"{min(by['induction']):.2f}", f"{max(by['induction']):.2f}") == ("0.37", "0.71")
    assert (f"{min(by['agreement']):.2f}", f"{max(by['agreement']):.2f}") == ("0.12", "0.42")
    assert [r["head"] for r in clear if r["relation"] == "pronoun"] == [(6, 0)] and f"{by['pronoun'][0]:.2f}" == "0.12"
    for seed in range(1, 5):  # another draw of the resamples puts the same heads within the noise
        assert sorted(r["head"] for r in H.grammar_margins(lm, seed=seed) if not r["clear"]) == [(6, 10), (10, 0)]


def test_06_the_report_types_object_as_offset_and_subjects_best_head_as_pronoun(lm, beyond):
    """06 §4's table and reading: object and subject keys beyond the previous word sit at one offset
    (baseline 1.00), so their heads are typed offset; "The subject row's best head, L6 H0, is typed pronoun
    … on pronouns it scores 0.66, beyond the fixed offset's 0.54"."""
    report = {row["relation"]: row for row in H.relation_report(lm)}
    assert report["object"]["type"] == "offset" and report["object"]["baseline"] == 1.0
    assert report["subject"]["head"] == (6, 0) and report["subject"]["type"] == "pronoun"
    assert round(float(beyond["pronoun"][6, 0]), 2) == 0.66 and round(report["pronoun"]["baseline"], 2) == 0.54
    for relation in ("agreement", "pronoun", "induction"):
        assert report[relation]["type"] in S.GRAMMAR


def test_06_prints_the_decks_speaker_note(typed):
    """06 §4 prints H.types_caption(types); the deck's "06_head_types" slide speaks the same sentence."""
    types, _ = typed
    assert H.types_caption(types) == ("Of the 144 heads, 37 follow position (2 previous, 23 offset, 12 resting), "
                                      "13 have a grammar job position cannot explain (5 agreement, 2 pronoun, "
                                      "6 induction) and 94 get no type.")


def test_05_grid_labels_agree_with_06(typed):
    """05 §5: L9 H8 is labelled "agreement"; "No head is labelled "object" or "subject": L0 H8 … puts 0.54 of
    its attention on subject keys, but a head that always looks 3 words back would score 1.00 there, so it is
    labelled "offset"."""
    types, best = typed
    assert types[9, 8] == "agreement" and types[0, 8] == "offset" and round(float(best[0, 8]), 2) == 0.54
    assert not {"object", "subject"} & {str(t) for t in types.ravel()}
