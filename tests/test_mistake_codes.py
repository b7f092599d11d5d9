"""Stable mistake codes (issue 30, "Verdicts as data"): every catalogued mistake has a code, unique
within its exercise and as a full code, the registry covers every exercise a notebook checks, the
model-built exercises carry the codes the registry lists, and docs/mistakes.md is fresh."""

import ast
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

import helpers as H
from helpers.exercises import attention_checks as A
from helpers.exercises import multihead_checks as MH
from helpers.exercises import capstone, catalogue, grading, head_checks, headcount_checks, kv_checks
from helpers.exercises.catalogue import Entry

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "helpers" / "exercises"
DOC = ROOT / "docs" / "mistakes.md"
# A key is the first half of every code of its exercise: renaming an exercise must not change it (set key=).
KEYS = ["attention_weights", "masked_weights", "weighted_sum", "one_head", "split_heads", "merge_heads", "recombine",
        "multihead_capstone", "head_size_and_params", "concat_shape", "previous_word_head", "induction_pattern",
        "knock_out_prediction", "kv_cache_bytes", "grouped_attention", "formation_step",
        "knock_out_along_training"]
NOT_EXERCISES = {"check_slide"}  # H.check_* names that judge no exercise
CODE_RE = re.compile(r"^[a-z0-9][A-Za-z0-9_+.]*$")  # snake_case; capitals only for maths symbols (sqrt_of_T)


def full_codes(entries: list[Entry]) -> list[str]:
    """Every "<key>.<code>" of the catalogue, mistakes and pairs, in order."""
    return [f"{e.key}.{code}" for e in entries for code, _ in e.mistakes + e.pairs]


def code_problems(entries: list[Entry], engine: dict | None = None) -> list[str]:
    """One line per broken rule: a mistake without a code, a code not snake_case, a code used twice
    in one exercise (or twice in a full code, or by the engine), a key used by two exercises."""
    engine = catalogue.engine_codes() if engine is None else engine
    problems = [f"exercise key {key!r} is used by {n} exercises" for key, n in Counter(e.key for e in entries).items()
                if n > 1]
    for e in entries:
        codes = [code for code, _ in e.mistakes + e.pairs]
        for code, says in e.mistakes + e.pairs:
            if not code:
                problems.append(f"{e.key}: a mistake has no code: {says[:70]!r}")
            elif not CODE_RE.match(code):
                problems.append(f"{e.key}: code {code!r} is not snake_case ({CODE_RE.pattern})")
            elif code in engine:
                problems.append(f"{e.key}: code {code!r} is also an engine outcome")
        problems += [f"{e.key}: code {code!r} is used by {n} mistakes" for code, n in Counter(codes).items()
                     if code and n > 1]
        lowered = Counter(code.lower() for code in set(codes))
        problems += [f"{e.key}: codes that differ only in capitals ({code})" for code, n in lowered.items() if n > 1]
    across = Counter(c for e in entries for c in set(full_codes([e])))  # a code reused within one is said above
    problems += [f"full code {c!r} is in {n} exercises" for c, n in across.items() if n > 1]
    return problems


def _tool():
    spec = importlib.util.spec_from_file_location("make_mistakes_doc", ROOT / "tools" / "make_mistakes_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def entries():
    return catalogue.entries()


def test_every_mistake_has_a_unique_snake_case_code(entries):
    assert code_problems(entries) == []
    full = full_codes(entries)
    assert len(full) == len(set(full)) and all(CODE_RE.match(c) for c in full)


def test_the_exercise_keys_stay_the_same(entries):
    assert [e.key for e in entries] == KEYS


def test_every_mistake_built_in_the_source_is_given_a_code():
    """An M(...) or Mistake(...) call without code= is a catalogued mistake without a code."""
    missing = []
    for path in sorted(EXERCISES.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("M", "Mistake")
                    and not any(k.arg == "code" for k in node.keywords)):
                missing.append(f"{path.name}:{node.lineno}")
    assert missing == []


def test_the_registry_holds_every_exercise_a_notebook_checks(entries):
    texts = [json.dumps(json.loads(p.read_text())["cells"]) for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    called = {name for text in texts for name in re.findall(r"\bH\.(check_\w+)\(", text)} - NOT_EXERCISES
    assert called and called <= {e.check for e in entries}
    for e in entries:  # the detector is in no notebook, so not in the facade either
        assert callable(getattr(H, e.check, None) or getattr(head_checks, e.check)), e.check


# --- the model-built exercises carry the codes the registry lists ----------------------------------------
@pytest.fixture
def built(monkeypatch):
    """The Exercise a check builds inside itself, caught on its way to grading.check."""
    caught = []
    monkeypatch.setattr(head_checks, "check", lambda ex, fn, *args, **kw: caught.append(ex))
    return caught


def _entry(entries, key):
    return next(e for e in entries if e.key == key)


def test_the_previous_word_head_and_induction_checks_use_the_registered_codes(entries, built):
    head_checks.check_previous_word_head(None, head_checks.planted_maps())
    head_checks.check_induction_prediction(None, SimpleNamespace(tokens=["<bos>", "a", "b", "a", "b"]))
    for ex, key in zip(built, ("previous_word_head", "induction_pattern")):
        e = _entry(entries, key)
        assert (ex.key, ex.name) == (e.key, e.title)
        assert [(m.code, m.says) for m in ex.mistakes] == list(e.mistakes)


def test_the_knockout_check_uses_the_registered_codes(entries, built, monkeypatch):
    base, measured, _ = catalogue.EXAMPLE_KNOCKOUT  # the doc's example: L0 H9
    monkeypatch.setattr(head_checks, "forced_accuracy", lambda lm, rel, heads=(), mode="zero": measured if heads else base)
    head_checks.check_knockout_prediction(0.5, None, "induction", [(0, 9)])
    e, (ex,) = _entry(entries, "knock_out_prediction"), built
    assert (ex.key, ex.name) == (e.key, e.title)
    assert [m.code for m in ex.mistakes] == [code for code, _ in e.mistakes]
    assert all(m.says.startswith(says) for m, (_, says) in zip(ex.mistakes, e.mistakes))


def test_the_capstone_uses_the_registered_codes(entries):
    ex, e = capstone.exercise(), _entry(entries, "multihead_capstone")
    assert (ex.key, ex.name) == (e.key, e.title)
    assert [(m.code, m.says) for m in ex.mistakes] == list(e.mistakes + e.pairs)


# --- docs/mistakes.md ------------------------------------------------------------------------------------------
def test_the_mistakes_doc_is_fresh():
    assert DOC.read_text() == _tool().render(ROOT), "stale docs/mistakes.md: run `python tools/make_mistakes_doc.py`"


def test_every_code_is_in_the_doc(entries):
    text = DOC.read_text()
    missing = [c for c in full_codes(entries) if f"`{c}`" not in text]
    missing += [c for c in catalogue.engine_codes() if f"`{c}`" not in text]
    assert missing == []


STATIC = [("check_attention_weights", A.ATTENTION_WEIGHTS), ("check_masked_weights", A.MASKED_WEIGHTS),
          ("check_weighted_sum", A.WEIGHTED_SUM), ("check_one_head", MH.ONE_HEAD), ("check_split_heads", MH.SPLIT_HEADS),
          ("check_merge_heads", MH.MERGE_HEADS), ("check_recombine", MH.RECOMBINE),
          ("check_head_size_and_params", headcount_checks.HEAD_SIZE_AND_PARAMS),
          ("check_concat_shape", headcount_checks.CONCAT_SHAPE), ("check_kv_cache", kv_checks.KV_CACHE),
          ("check_grouped_attention", kv_checks.GROUPED_ATTENTION)]


@pytest.mark.parametrize("check, ex", STATIC, ids=[ex.key for _, ex in STATIC])
def test_the_verdicts_of_a_check_carry_documented_codes(check, ex):
    """The reference, the stub, a wrong shape and the first and last catalogued slips, as a student's function:
    each verdict's code is in docs/mistakes.md (a mistake's own code, or an engine code of this exercise)."""
    text = DOC.read_text()
    fn = getattr(H, check)
    answers = [ex.reference, lambda *args: None, lambda *args: [[1.0]], ex.mistakes[0].answer, ex.mistakes[-1].answer]
    verdicts = [fn(answer) for answer in answers]
    if not all(hasattr(v, "code") for v in verdicts):
        pytest.skip("this engine's checks return no Verdict yet")
    for v in verdicts:
        key, rest = v.code.split(".", 1)
        assert key == ex.key and (f"`{v.code}`" in text or rest in catalogue.engine_codes()), v
    assert [v.code for v in verdicts[-2:]] == [f"{ex.key}.{ex.mistakes[0].code}", f"{ex.key}.{ex.mistakes[-1].code}"]


def test_engine_codes_are_snake_case():
    codes = catalogue.engine_codes()
    assert list(codes) == list(getattr(grading, "ENGINE_CODES", {}))
    assert all(CODE_RE.match(code) and meaning for code, (_, meaning) in codes.items())


def test_a_line_splits_into_the_mistake_and_the_fix():
    split = _tool().split_line
    assert split("no mask: set the scores (above: the diagonal) to -inf.") == ("no mask", "set the scores (above: the diagonal) to -inf.")
    assert split("torch.where(a: b) keeps it: swap them.") == ("torch.where(a: b) keeps it", "swap them.")
    assert split("that is the number of heads; the head size is width // heads.") == (
        "that is the number of heads", "the head size is width // heads.")
    assert split("two slips at once: no scale. And the axis: use dim=-1.") == (
        "two slips at once: no scale. And the axis: use dim=-1.", "")
    assert split("you took the largest weight.") == ("you took the largest weight.", "")


# --- a toy catalogue: the rules fail where they should -----------------------------------------------------------
def _toy(*mistakes, key="toy", pairs=()):
    return Entry("01", key, key.replace("_", " "), "check_toy", tuple(mistakes), tuple(pairs))


def test_a_reused_code_is_found():
    problems = code_problems([_toy(("no_scale", "a: b."), ("no_scale", "c: d."))], {})
    assert problems == ["toy: code 'no_scale' is used by 2 mistakes"]
    assert code_problems([_toy(("a", "x."), pairs=[("a", "y.")])], {}) == ["toy: code 'a' is used by 2 mistakes"]


def test_a_missing_or_malformed_code_is_found():
    problems = code_problems([_toy(("", "forgot the scale: divide."), ("Bad Code", "x."), ("ok", "y."))], {})
    assert problems == ["toy: a mistake has no code: 'forgot the scale: divide.'",
                        f"toy: code 'Bad Code' is not snake_case ({CODE_RE.pattern})"]


def test_clashes_between_exercises_and_with_the_engine_are_found():
    two = [_toy(("a", "x.")), _toy(("b", "y."))]
    assert "exercise key 'toy' is used by 2 exercises" in code_problems(two, {})
    assert "full code 'toy.a' is in 2 exercises" in code_problems([_toy(("a", "x.")), _toy(("a", "y."))], {})
    assert code_problems([_toy(("right", "x."))], {"right": ("right", "right on every input")}) == [
        "toy: code 'right' is also an engine outcome"]
    assert code_problems([_toy(("sqrt_of_T", "x."), ("sqrt_of_t", "y."))], {}) == [
        "toy: codes that differ only in capitals (sqrt_of_t)"]
    assert code_problems([_toy(("sqrt_of_T", "x."), ("two_slips.a+b", "y."))], {}) == []


def test_the_doc_tool_writes_a_toy_catalogue_and_sees_it_go_stale(tmp_path, monkeypatch):
    tool = _tool()
    toy = [_toy(("no_scale", "forgot the 1/√d scaling: divide by √d."), ("fill_zero", "filled <bos> | 0."),
                pairs=[("two_slips.no_scale+fill_zero", "two slips at once: …")], key="attention_weights")]
    monkeypatch.setattr(tool.catalogue, "entries", lambda: toy)
    monkeypatch.setattr(tool.catalogue, "engine_codes", lambda: {"not_attempted": ("not_attempted", "the function returned None")})
    assert tool.main(["--check", "--root", str(tmp_path)]) == 1
    assert tool.main(["--root", str(tmp_path)]) == 0 and tool.main(["--check", "--root", str(tmp_path)]) == 0
    text = (tmp_path / "docs" / "mistakes.md").read_text()
    assert "| `attention_weights.no_scale` | forgot the 1/√d scaling | divide by √d. |" in text
    assert "filled &lt;bos> \\| 0." in text
    assert "`attention_weights.two_slips.no_scale+fill_zero`" in text and "| `not_attempted` | not_attempted |" in text
    assert tool.render(tmp_path) == text  # the same text on every run
    toy[0] = _toy(("no_scaling", "forgot the 1/√d scaling: divide by √d."), key="attention_weights")  # a renamed code
    assert tool.main(["--check", "--root", str(tmp_path)]) == 1
