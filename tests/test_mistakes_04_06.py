"""Notebooks 04-06: for every exercise, wrong answers each asserting the named mistake, and unusual
but correct answers asserting ✓ (issue 22's tables). Rows as in test_mistakes_01_03.py."""

import math

import numpy as np
import pytest
import torch

import helpers as H
from helpers.exercises import head_checks
from helpers.exercises import solutions as S

P = H.attention_param_count
UNNAMED = ("numbers differ", "your function raised", "wrong shape", "per head 3·(width·d + d)", "wrong for ",
           "rows are tokens, columns are heads × head size", "puts only")


@pytest.fixture(scope="module")
def list_run():
    return H.run_sentence(H.load_model("classroom"), "list : red mat old fox . again : red mat old fox .")


@pytest.fixture(scope="module")
def measured():
    """The real knock-out of L0 H9 on the classroom model, measured once: (with all heads, without it)."""
    lm = H.load_model("classroom")
    return H.forced_accuracy(lm, "induction"), H.forced_accuracy(lm, "induction", [(0, 9)])


@pytest.fixture(autouse=True)
def _measured_once(measured, monkeypatch):
    base, without = measured
    monkeypatch.setattr(head_checks, "forced_accuracy", lambda lm, rel, heads=(), mode="zero": without if heads else base)


def _diag(a, offset=-1):
    return a.diagonal(offset=offset, dim1=-2, dim2=-1)


def _flat(table):
    i = int(table.argmax())
    return i // table.shape[1], i % table.shape[1]


def _pattern(tokens, key):
    T = len(tokens)
    out = [[0.0] * T for _ in range(T)]
    for q in range(T):
        copies = [k for k in range(q) if tokens[k] == tokens[q]]
        if copies:
            out[q][min(max(key(q, copies), 0), T - 1)] = 1.0
    return out


LIST_TOKENS = "<bos> list : red mat old fox . again : red mat old fox .".split()

WRONG = [
    # --- 04: head size and parameters
    ("head_size_and_params", lambda w, n: (w // n, 4 * w * w), "left out the biases", True),
    ("head_size_and_params", lambda w, n: (n, P(w, n)), "that is the number of heads", True),
    ("head_size_and_params", lambda w, n: (w // n, 3 * (w * (w // n) + w // n) + (w // n) * w), "one head's share", True),
    ("head_size_and_params", lambda w, n: (w // n, P(w, n) - w), "left out the output bias", True),
    ("head_size_and_params", lambda w, n: (w // n, 3 * w * w + 3 * w), "left out the output projection", True),
    ("head_size_and_params", lambda w, n: (w // n, n * (4 * w * w + 4 * w)), "heads split the width", True),
    ("head_size_and_params", lambda w, n: (w // n, 4 * w * w + w), "counted only the output bias", True),
    ("head_size_and_params", lambda w, n: (w // n, P(w, n) + (n - 1) * w), "once per head", True),
    ("head_size_and_params", lambda w, n: (P(w, n), w // n), "wrong order", True),
    ("head_size_and_params", lambda w, n: (w / n, P(w, n)), "use whole-number division", True),
    ("head_size_and_params", lambda w, n: (w * n, P(w, n)), "width × heads is not the head size", True),
    ("head_size_and_params", lambda w, n: w // n, "got the single number", True),
    ("head_size_and_params", lambda w, n: (24, 37248), "right on the first input", True),  # right on (96, 4) only
    ("head_size_and_params", lambda w, n: (w // n, 4 * w * w + 4 * w + 1), "per head 3·(width·d + d)", False),
    # --- 04: the shape of the concatenation
    ("concat_shape", lambda T, w, n: (T, w // n), "one head's output", True),
    ("concat_shape", lambda T, w, n: (n, T, w // n), "heads first", True),
    ("concat_shape", lambda T, w, n: (T, n, w // n), "keeps a heads axis", True),
    ("concat_shape", lambda T, w, n: (w, T), "rows and columns swapped", True),
    ("concat_shape", lambda T, w, n: (T, w * n), "not width × heads", True),
    ("concat_shape", lambda T, w, n: (T, n), "one column per head", True),
    ("concat_shape", lambda T, w, n: (T * n, w // n), "heads stacked as rows", True),
    ("concat_shape", lambda T, w, n: (T + 1, w), "one token too many", True),
    ("concat_shape", lambda T, w, n: (T - 1, w), "one token too few", True),
    ("concat_shape", lambda T, w, n: torch.zeros(T, w), "expected a tuple of whole numbers", True),
    ("concat_shape", lambda T, w, n: (5, 96), "right on the first input", True),
    # --- 05, exercise 1: the previous-word head
    ("previous_word_head", lambda a: (0, 9), "not a fixed head", True),
    ("previous_word_head", lambda a: S.previous_word_head(a)[::-1], "swapped layer and head", True),
    ("previous_word_head", lambda a: _flat(_diag(a, 0).mean(-1)), "looks at the word itself", True),
    ("previous_word_head", lambda a: _flat(_diag(a, 1).mean(-1)), "word after (offset=+1)", True),
    ("previous_word_head", lambda a: _flat(_diag(a, -2).mean(-1)), "two words back", True),
    ("previous_word_head", lambda a: _flat(a[..., 0].mean(-1)), "rests on the first token", True),
    ("previous_word_head", lambda a: divmod(int(_diag(a).mean(-1).argmax()), a.shape[0]), "number of layers", True),
    ("previous_word_head", lambda a: _flat(-_diag(a).mean(-1)), "argmin", True),
    ("previous_word_head", lambda a: int(_diag(a).mean(-1).argmax()), "one number (a flat index?)", True),
    ("previous_word_head", lambda a: "L0 H9", "expected (layer, head)", True),
    ("previous_word_head", lambda a: (0.0, 9.0), "two whole numbers", True),
    # --- 05, exercise 2: the induction pattern
    ("predict_induction", lambda t: _pattern(t, lambda q, c: c[-1]), "earlier copy itself", True),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: q - 1), "previous word", True),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: q), "the word itself", True),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: c[0] + 1), "*first* copy", True),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: c[-1] + 2), "two words past", True),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: q + 1), "cannot look ahead", True),
    ("predict_induction", lambda t: np.array(S.predict_induction(t)).T, "rows and columns swapped", True),
    ("predict_induction", lambda t: S.predict_induction(t[1:]), "dropped <bos>", True),
    ("predict_induction", lambda t: torch.full((len(t), len(t)), math.nan), "NaN", True),
    ("predict_induction", lambda t: "pattern", "expected a (T, T) array", True),
    ("predict_induction", lambda t: S.predict_induction(LIST_TOKENS), "uses the notebook's `LIST_TOKENS`", True),
    ("predict_induction", lambda t: np.eye(len(t))[::-1].copy(), "wrong for ", False),
]
# --- 06: the knock-out prediction (measured 84 % of 100 %), as plain numbers
WRONG += [("my_prediction", guess, words, named) for guess, words, named in [
    (0.95, "predicted no effect", True), (0.99, "predicted no effect", True), (1.0, "predicted no effect", True),
    (0.16, "that is the drop", True), (0.0, "breaks completely", True), (0.02, "breaks completely", True),
    (0.5, "matter more than it does", True), (84, "looks like a percentage", True), ("84%", "not the text", True),
    (0.92, "matter less than it does", True)]]

CORRECT = [
    ("head_size_and_params", lambda w, n: [w // n, 4 * w * w + 4 * w]),
    ("head_size_and_params", lambda w, n: (np.int64(w) // n, np.int64(P(w, n)))),
    ("head_size_and_params", lambda w, n: (torch.tensor(w) // n, 4 * (w * w + w))),
    ("concat_shape", lambda T, w, n: torch.zeros(T, n, w // n).flatten(1).shape),
    ("concat_shape", lambda T, w, n: [T, (w // n) * n]),
    ("concat_shape", lambda T, w, n: tuple(np.array([T, w]))),
    ("previous_word_head", lambda a: tuple(int(i) for i in np.unravel_index(int(_diag(a).mean(-1).argmax()), a.shape[:2]))),
    ("previous_word_head", lambda a: (_diag(a).mean(-1).argmax() // a.shape[1], _diag(a).mean(-1).argmax() % a.shape[1])),
    ("previous_word_head", lambda a: list(np.unravel_index(np.argmax(_diag(a).mean(-1).numpy()), a.shape[:2]))),
    ("predict_induction", lambda t: torch.tensor(S.predict_induction(t))),
    ("predict_induction", lambda t: np.array(S.predict_induction(t)) * 0.9 + 0.01),
    ("predict_induction", lambda t: _pattern(t, lambda q, c: c[-1] + 1)),  # first-seen rows left empty
    ("my_prediction", 0.84), ("my_prediction", np.float32(0.8)), ("my_prediction", lambda: 0.9),
]


def verdict(name, answer, list_run, capsys) -> str:
    if name == "head_size_and_params":
        H.check_head_size_and_params(answer)
    elif name == "concat_shape":
        H.check_concat_shape(answer)
    elif name == "previous_word_head":
        H.check_previous_word_head(answer, list_run.attentions)
    elif name == "predict_induction":
        H.check_induction_prediction(answer, list_run)
    else:
        assert H.check_knockout_prediction(answer, None, "induction", [(0, 9)]) == pytest.approx(0.84, abs=0.005)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


@pytest.mark.parametrize("name, answer, words, named", WRONG, ids=[f"{n}-{w}" for n, _, w, _ in WRONG])
def test_a_wrong_answer_is_named(name, answer, words, named, list_run, capsys):
    out = verdict(name, answer, list_run, capsys)
    assert out.startswith("✗") and words in out, out
    assert named == ("right on the first input" in out or not any(raw in out for raw in UNNAMED)), out


@pytest.mark.parametrize("name, answer", CORRECT, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CORRECT)])
def test_an_unusual_correct_answer_passes(name, answer, list_run, capsys):
    assert verdict(name, answer, list_run, capsys).startswith("✓")


NAMES = ["head_size_and_params", "concat_shape", "previous_word_head",
         "predict_induction", "my_prediction"]


def test_every_exercise_has_eight_wrong_and_three_unusual_correct_answers():
    for name in NAMES:
        assert sum(n == name for n, *_ in WRONG) >= 8, name
        assert sum(n == name for n, _ in CORRECT) >= 3, name


def test_named_share():
    shares = {name: np.mean([named for n, _, _, named in WRONG if n == name]) for name in NAMES}
    print({name: f"{share:.0%}" for name, share in shares.items()})
    assert np.mean([named for *_, named in WRONG]) >= 0.85 and min(shares.values()) >= 0.8, shares


def test_the_knockout_verdict_says_what_the_number_means(list_run, capsys):
    out = verdict("my_prediction", 0.95, list_run, capsys)
    assert "84% without L0 H9" in out and "16% of its induction predictions needed L0 H9" in out, out


def test_no_wrong_prediction_passes(monkeypatch, capsys):  # the autouse fixture's real numbers replaced
    """Only 0.77 .. 0.91 around a measured 0.84 pass; 0.95 and 0.99 ("barely matters") do not."""
    monkeypatch.setattr(head_checks, "forced_accuracy", lambda lm, rel, heads=(), mode="zero": 0.84 if heads else 1.0)
    for guess in range(0, 101):
        head_checks.check_knockout_prediction(guess / 100, None, "induction", [(0, 9)])
        out = capsys.readouterr().out
        assert out.startswith("✓") == (77 <= guess <= 91), (guess, out)
        assert out.startswith("✓") or "✗" in out


def test_planted_maps_give_every_slip_its_own_head():
    maps = head_checks.planted_maps()
    answers = [tuple(int(x) for x in m.answer(maps)) for m in head_checks.PREVIOUS_WORD_HEAD_MISTAKES]
    right = tuple(S.previous_word_head(maps))
    assert len(set(answers)) == len(answers) and right not in answers, (answers, right)


def test_a_float_head_size_is_shown_with_the_numbers_of_its_own_input(capsys):
    """Sweep 17, hp_w4: on width 96 and 4 heads the line said "width / n_heads gives 8.0" (another input's)."""
    verdict = H.check_head_size_and_params(lambda width, n_heads: (width / n_heads, 4 * width * width + 4 * width))
    assert "(24.0, 37248) holds a float (width / n_heads gives 24.0, not 24)" in verdict.line


def test_the_example_of_a_tuple_is_this_inputs_answer():
    """A dict {'size': 24, 'params': 37248} was told "such as (8, 37248)": the head size of 12 heads beside the
    parameters of 4 (found probing answers a new class writes)."""
    line = H.check_head_size_and_params(lambda w, n: {"size": w // n, "params": 4 * w * w + 4 * w}).line
    assert "such as (24, 37248), got dict" in line, line


def test_a_float_head_size_is_coded_float_size_as_in_07():
    """width / n_heads in 04 was coded `unreadable`, the same slip in 07 `float_size`: a teacher counting codes
    split one slip in two (sweep 31, WEAK-1)."""
    verdict = H.check_head_size_and_params(lambda width, n_heads: (width / n_heads, 4 * width * width + 4 * width))
    assert verdict.code == "head_size_and_params.float_size" and "only their type is not" in verdict.line
