"""Every exercise check (notebooks 01-06): the reference solution passes, each known wrong answer is
caught and named, and nothing a student writes (a constant, NaN, a string, exit()) stops the notebook.

The wrong-answer tables of every exercise are in test_mistakes_01_03.py and test_mistakes_04_06.py;
the cases a student's code must not be able to fool are in test_check_integrity.py.
"""

import contextlib
import io
import math
import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from IPython.core.formatters import DisplayFormatter
import numpy as np
import torch

import helpers as H
from helpers.exercises.verdict import Verdict
from helpers.exercises import attention_checks as C
from helpers.exercises import multihead_checks as MH
from helpers.exercises import head_checks, sandbox
from helpers.exercises import head_checks as explorer
from helpers.exercises import headcount_checks as headcount
from helpers.exercises import solutions as S


def sdpa(Q, K, dim=-1, scaled=True):
    scores = Q @ K.T
    return (scores / math.sqrt(Q.shape[-1]) if scaled else scores).softmax(dim)


def future(T):
    return torch.ones(T, T, dtype=torch.bool).triu(1)


@pytest.fixture(scope="module")
def list_run():
    lm = H.load_model("classroom")
    return H.run_sentence(lm, "list : red mat old fox . again : red mat old fox .")


def nobias(dim, heads):
    m = S.MyMultiHead(dim, heads)
    m.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
    return m


# check, how to call it with an answer, the reference answer
CHECKS = {
    "attention_weights": (C.check_attention_weights, S.attention_weights),
    "masked_weights": (C.check_masked_weights, S.masked_weights),
    "weighted_sum": (C.check_weighted_sum, S.weighted_sum),
    "one_head": (MH.check_one_head, S.one_head),
    "split_heads": (MH.check_split_heads, S.split_heads),
    "merge_heads": (MH.check_merge_heads, S.merge_heads),
    "recombine": (MH.check_recombine, S.recombine),
    "MyMultiHead": (H.check_multihead, S.MyMultiHead),
    "head_size_and_params": (headcount.check_head_size_and_params, S.head_size_and_params),
    "concat_shape": (headcount.check_concat_shape, S.concat_shape),
    "previous_word_head": ("previous_word_head", S.previous_word_head),
    "predict_induction": ("predict_induction", S.predict_induction),
}


def run_check(name, answer, list_run):
    check = CHECKS[name][0]
    if check == "previous_word_head":
        return explorer.check_previous_word_head(answer, list_run.attentions)
    if check == "predict_induction":
        return explorer.check_induction_prediction(answer, list_run)
    return check(answer)


def test_every_exercise_has_a_solution():
    assert set(CHECKS) | {"my_prediction"} <= set(S.SOLUTIONS)


def one_line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


@pytest.mark.parametrize("name", list(CHECKS))
def test_reference_solution_passes_and_returns_a_verdict_a_notebook_does_not_echo(name, list_run, capsys):
    verdict = run_check(name, CHECKS[name][1], list_run)
    assert one_line(capsys).startswith("✓")
    assert isinstance(verdict, Verdict) and verdict.passed and verdict.code.endswith(".right")
    # a check as a cell's last line: IPython shows nothing more than the printed line
    assert DisplayFormatter().format(verdict) == ({}, {})


def _exits(*args):
    exit()


def _sys_exits(*args):
    sys.exit(3)


def _raises(*args):
    raise IndexError("list index out of range")


ODD = [
    (lambda *a: None, "not attempted yet"),
    (lambda *a: ..., "not attempted yet"),
    (_raises, "raised IndexError: list index out of range"),
    (_exits, "called exit()"),
    (_sys_exits, "called exit()"),
    (lambda *a: "a string", "expected"),
    (lambda *a: {"a": 1}, "expected"),
    ("not a function", "expected a function"),
]


@pytest.mark.parametrize("name", [n for n in CHECKS if n != "MyMultiHead"])
@pytest.mark.parametrize("answer, message", ODD, ids=["none", "ellipsis", "raises", "exit", "sys.exit", "str",
                                                      "dict", "not-callable"])
def test_odd_answers_never_raise_or_exit(name, answer, message, list_run, capsys):
    assert isinstance(run_check(name, answer, list_run), Verdict)
    out = one_line(capsys)
    assert message in out and out[0] in "✗…", out


@pytest.mark.parametrize("name", ["attention_weights", "masked_weights", "weighted_sum", "one_head", "split_heads",
                                  "merge_heads", "recombine", "grouped_attention"])
@pytest.mark.parametrize("container", ["numpy", "list"])
def test_the_right_numbers_pass_in_any_container(name, container):
    """The rule docs/mistakes.md states once: a check judges numbers, not their container, since no later
    cell uses the student's function. Half precision is named instead (test_mistakes_01_03)."""
    reference = S.grouped_attention if name == "grouped_attention" else CHECKS[name][1]
    check = H.check_grouped_attention if name == "grouped_attention" else CHECKS[name][0]
    convert = (lambda t: t.detach().numpy()) if container == "numpy" else (lambda t: t.tolist())
    with contextlib.redirect_stdout(io.StringIO()):
        verdict = check(lambda *args: convert(reference(*args)))
    assert verdict and verdict.code == f"{verdict.exercise}.right", verdict.line


@pytest.mark.parametrize("name", ["attention_weights", "masked_weights", "weighted_sum", "one_head", "split_heads",
                                  "merge_heads", "recombine"])
def test_nan_and_constants_are_caught(name, list_run, capsys):
    def nan(*args):
        return torch.full_like(CHECKS[name][1](*args), math.nan)

    run_check(name, nan, list_run)
    assert "NaN" in one_line(capsys)
    first = {}

    def constant(*args):  # the first answer, remembered: right on input 1 only
        first.setdefault("answer", CHECKS[name][1](*args))
        return first["answer"]

    run_check(name, constant, list_run)
    out = one_line(capsys)
    assert out.startswith("✗") and "your function raised" not in out and "numbers differ" not in out, out


def test_capstone_odd_answers(capsys):
    class Stub(torch.nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

        def forward(self, x):
            ...

    class Exits(Stub):
        def forward(self, x):
            exit()

    H.check_multihead(Stub)
    out = one_line(capsys)
    assert "not attempted yet" in out and "forward returned None" in out and "function" not in out
    H.check_multihead(Exits)
    assert "called exit()" in one_line(capsys)
    H.check_multihead(S.MyMultiHead(768, 12))
    assert "pass the class itself" in one_line(capsys)
    H.check_multihead(lambda d, h: torch.nn.Linear(d, d))
    assert "self.qkv" in one_line(capsys)


def test_knockout_prediction_reads_numbers_and_explains_the_rest(monkeypatch, capsys):
    monkeypatch.setattr(head_checks, "forced_accuracy", lambda lm, rel, heads=(), mode="zero": 0.8 if heads else 1.0)
    for guess, message in [("50%", "not the text '50%'"), (50, "looks like a percentage"), (-1, "not an accuracy"),
                           (math.nan, "write a number"), ([0.5], "expected a number"), (True, "expected a number"),
                           (lambda: 1 / 0, "raised ZeroDivisionError"), (_exits, "called exit()"),
                           (lambda: None, "not attempted yet"), (0.1, "matter more than it does"), (0.75, "✓"), (0.95, "predicted no effect"),
                           (Fraction(4, 5), "✓"), (Decimal("0.75"), "✓")]:  # numbers too (sweep 22, B2)
        measured = head_checks.check_knockout_prediction(guess, None, "induction", [(0, 0)])
        assert measured == 0.8
        assert message in one_line(capsys)


def test_solution_prints_the_reference_and_rejects_unknown_names(capsys):
    assert H.solution("attention_weights") is None
    assert "def attention_weights(Q, K):" in capsys.readouterr().out
    with pytest.raises(ValueError, match="choose one of"):
        H.solution("attention")


@pytest.mark.notebook
def test_exit_in_a_real_kernel_is_a_cross_and_the_kernel_lives_on():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "import sys\nimport helpers as H",
        "def attention_weights(Q, K):\n    exit()\n\n\nH.check_attention_weights(attention_weights)",
        "def attention_weights(Q, K):\n    quit()\n\n\nH.check_attention_weights(attention_weights)",
        "H.check_weighted_sum(lambda w, V: sys.exit(1))",
        "import helpers.exercises.sandbox\nhelpers.exercises.sandbox.TIME_LIMIT_S = 0.5\nH.check_one_head(lambda *a: [x for x in iter(int, 1)])",
        "print('still alive')")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    texts = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert all("called exit()" in t for t in texts[1:4]), texts
    assert "ran for more than 0.5 s" in texts[4], texts
    assert texts[5] == "still alive\n"
    assert not any(o.output_type == "execute_result" for cell in nb.cells for o in cell.outputs)


def test_a_function_stopped_while_its_memory_grows_is_told_so(list_run, monkeypatch, capsys):
    """A loop keeping 1 GB tensors was told "an endless loop?" when a busy machine filled them past the limit
    (sweep 28, F01). The process's peak memory is read before and at the stop (stood in for here: a test that
    really filled gigabytes would cost the machine)."""
    assert sandbox.peak_memory() > 10 << 20  # this process has loaded torch: tens of MB at least
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)
    peaks = iter([1 << 30, 3 << 30])
    monkeypatch.setattr(sandbox, "peak_memory", lambda: next(peaks, 3 << 30))

    def endless(*args):
        while True:
            pass

    run_check("attention_weights", endless, list_run)
    assert "ran for more than 0.3 s while its memory grew by 2.0 GB, and was stopped: does it keep every tensor " \
           "it makes?" in one_line(capsys)
    assert sandbox.too_slow(5, 1 << 29) == "your function ran for more than 5 s (an endless loop?) and was stopped."


@pytest.mark.parametrize("name", ["attention_weights", "head_size_and_params", "predict_induction"])
def test_an_endless_function_is_stopped_with_a_cross(name, list_run, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)

    def endless(*args):
        while True:
            pass

    run_check(name, endless, list_run)
    assert "ran for more than 0.3 s (an endless loop?)" in one_line(capsys)
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 60.0)  # a busy machine may need more than 0.3 s for a right one
    run_check(name, CHECKS[name][1], list_run)  # the timer is gone: the next check runs normally
    assert one_line(capsys).startswith("✓")


# --- the verdict engine names a slip only when it explains every input ---------------------------------
def _toy(mistakes):
    """An exercise on two inputs whose reference doubles its input."""
    from helpers.exercises.verdict import Exercise, Mistake
    cases = [("x [3]", (torch.tensor([1.0, 2.0, 3.0]),)), ("x [4]", (torch.tensor([1.0, -1.0, 2.0, 5.0]),))]
    return Exercise("toy", cases, lambda x: 2 * x, [Mistake(says, fn) for says, fn in mistakes])


def _grade(mistakes, answer):
    from helpers.exercises.grading import grade
    return grade(_toy(mistakes), answer).line


def test_a_slip_that_agrees_on_one_input_only_gives_way_to_one_that_explains_both():
    first_only = ("adds 1 (agrees on x [3] only)", lambda x: x + 1 if len(x) == 3 else x)
    both = ("adds 1", lambda x: x + 1)
    assert "adds 1" == _grade([first_only, both], lambda x: x + 1).split(": ", 1)[1].rstrip(".")


def test_two_slips_at_once_are_named_with_the_input_they_match_on():
    first_only = ("adds 1", lambda x: x + 1)
    line = _grade([first_only], lambda x: x + 1 if len(x) == 3 else x + 1.2)  # near the slip on x [4] too
    assert "possibly this: adds 1 — that explains your answer on x [3], but not on x [4], where something else " \
           "differs too." in line, line


def test_a_slip_contradicted_by_an_input_the_student_got_right_is_not_named():
    """Right on x [3], x + 1 on x [4]: adding 1 would have been wrong on x [3] too, so it is not this slip."""
    line = _grade([("adds 1", lambda x: x + 1)], lambda x: 2 * x if len(x) == 3 else x + 1)
    assert "adds 1" not in line and "numbers differ" in line, line


def test_printing_instead_of_returning_is_named_and_a_silent_stub_is_not_attempted(capsys):
    C.check_weighted_sum(lambda w, V: print(w @ V))
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("✗ weighted sum: your function printed")
    C.check_weighted_sum(lambda w, V: None)
    assert "not attempted" in capsys.readouterr().out


def test_a_tuple_holding_the_answer_is_told_to_return_one_thing(capsys):
    C.check_attention_weights(lambda Q, K: (Q @ K.T, sdpa(Q, K)))
    assert "returned 2 things (a tuple)" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [lambda Q, K: (Q @ K.T).softmax(-1).sum(), lambda Q, K: 1.0,
                                    lambda Q, K: np.float32(3.0)], ids=["sum", "float", "numpy scalar"])
def test_one_number_for_a_tensor_answer_is_said_not_raised(answer, capsys):
    """Any one-number answer raised TypeError inside the check (numpy's ndarray.all on a numpy scalar)."""
    verdict = H.check_attention_weights(answer)
    assert verdict.code == "attention_weights.wrong_shape" and "one number (shape []), expected [5, 5]" in verdict.line


@pytest.mark.parametrize("device_or_dtype, words", [("meta", "on the 'meta' device"), ("complex", "complex numbers")])
def test_a_meta_or_complex_tensor_is_named(device_or_dtype, words):
    """A meta tensor was 'expected a tensor, got Tensor'; a complex one passed with a cast warning."""
    def answer(Q, K):
        weights = (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)
        return torch.empty_like(weights, device="meta") if device_or_dtype == "meta" else weights.to(torch.complex64)
    verdict = H.check_attention_weights(answer)
    assert not verdict.passed and words in verdict.line, verdict.line


class _CapstoneLayers(torch.nn.Module):
    """A capstone answer's __init__ (the fused projection and the output one); each test writes its forward."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.size = heads, dim // heads
        self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)


def test_a_capstone_slip_is_named_without_computing_every_pair_of_slips():
    """The first check of a class with one slip computed all 800-odd catalogued variants (0.9 s, much more on a
    busy laptop); the first variant that explains every input wins, so the pairs wait until no single slip does."""
    from helpers.exercises import capstone

    class NoMask(_CapstoneLayers):
        def forward(self, x):
            B, T, D = x.shape
            q, k, v = (t.reshape(B, T, self.heads, self.size).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
            weights = (q @ k.transpose(-2, -1) / self.size ** 0.5).softmax(-1)
            return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))
    capstone.exercise.cache_clear()  # a fresh catalogue: nothing computed by an earlier test
    try:
        verdict = H.check_multihead(NoMask)
        computed = [key for key in capstone.exercise().answers if key[0] == 0 and isinstance(key[1], int)]
    finally:
        capstone.exercise.cache_clear()
    assert verdict.code.endswith(".no_mask")
    assert len(computed) < len(capstone.slip_lines()[0]) < len(capstone.exercise().mistakes)


def test_a_check_runs_on_one_torch_thread_and_gives_the_kernel_its_threads_back(capsys):
    """Small products on two threads wait on each other when the laptop is busy (a capstone check took 14 s
    beside four busy processes, 3.7 s on one thread); the kernel's own setting comes back after the check."""
    seen = []

    def attention_weights(Q, K):
        seen.append(torch.get_num_threads())
        return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        H.check_attention_weights(attention_weights)
        after = torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    assert "✓" in capsys.readouterr().out and seen and set(seen) == {1} and after == 2


@pytest.mark.parametrize("cell, words", [
    ("torch = 1", "`torch` is 1 in this notebook, not the module: a cell set `torch = …`, which hides it; run `import torch`"),
    ("import torch\nnp = [1, 2, 3]", "`np` is a list of 3 items in this notebook, not the module"),
])
def test_a_module_name_a_cell_reused_for_a_variable_is_named(cell, words):
    """After `torch = 1` the line read "compute this from them (T, d = Q.shape)": the slip is the cell, not the function."""
    space = {}
    exec(cell + "\ndef attention_weights(Q, K):\n"
         "    return torch.softmax(np.asarray(Q @ K.T) / Q.shape[-1] ** 0.5, dim=-1)\n", space)
    verdict = H.check_attention_weights(space["attention_weights"])
    assert verdict.line.startswith("✗") and words in verdict.line and "Q.shape" not in verdict.line


def test_an_exception_whose_message_cannot_be_written_is_the_students_not_the_checks():
    """It read "the check could not grade it (RuntimeError: str raised)": the student's exception was the one."""
    class Broken(Exception):
        def __str__(self):
            raise RuntimeError("str raised")
        __repr__ = __str__

    def attention_weights(Q, K):
        raise Broken()
    verdict = H.check_attention_weights(attention_weights)
    assert verdict.outcome == "raised" and "message cannot be written (class 'Broken'" in verdict.line


def test_a_capstone_that_answers_every_sentence_of_a_batch_with_the_first_is_told_about_the_batch_not_heads():
    """It read "every head of your answer is the same: each of the 2 heads …": the capstone's [B, T, D] answer was
    read as (heads, T, D), so the batch's two sentences were called heads (sweep 22, B1)."""
    class FirstSentenceOnly(_CapstoneLayers):
        def forward(self, x):
            B, T, D = x.shape
            q, k, v = (t[:1].reshape(1, T, self.heads, self.size).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
            s = (q @ k.transpose(-2, -1) / self.size ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1),
                                                                          float("-inf"))
            return self.out((s.softmax(-1) @ v).transpose(1, 2).reshape(1, T, D)).expand(B, T, D)
    line = H.check_multihead(FirstSentenceOnly).line
    assert "of the batch's sentences, sentence 0 is right and sentence 1 is not" in line and "head" not in line


def test_half_precision_inside_a_function_is_named_not_listed_column_by_column():
    """The capstone computed in float16 and returned float32 read "columns 7, 16, 21, … are right, columns 0–6,
    8–15, … are not: follow how those are computed (a loop's range, …)", 853 characters (sweep 22, W1)."""
    def weighted_sum(weights, V):
        return (weights.half() @ V.half()).float()
    line = H.check_weighted_sum(weighted_sum).line
    assert "right to about three digits everywhere" in line and "half precision" in line and "column" not in line


def test_an_integer_tensor_where_the_answer_has_fractions_is_named():
    """A .long() answer read 'numbers differ everywhere: 0 where 0.9968 is right'; .half() was named already."""
    verdict = H.check_attention_weights(lambda Q, K: (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1).long())
    assert verdict.code == "attention_weights.integer_dtype" and "whole numbers (torch.int64)" in verdict.line


def test_a_capstone_whose_layers_sit_in_a_module_inside_it_is_told_where_they_are():
    """The layers at self.core.qkv got "with a bias; got nothing"."""
    from helpers.exercises import solutions

    class MyMultiHead(torch.nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.core = solutions.MyMultiHead(dim, heads)

        def forward(self, x):
            return self.core(x)
    assert "got nothing there, but core.qkv holds one: put it on MyMultiHead itself" in H.check_multihead(MyMultiHead).line


def test_a_tuple_holding_the_answer_is_one_code_in_every_lesson():
    """A tuple (answer, weights) was returned_several in 01 and unreadable in 02 (sweep 14, B18): one slip, one code
    in the class report."""
    one = MH.check_one_head(lambda *a: (S.one_head(*a), None))
    weights = H.check_attention_weights(lambda Q, K: (S.attention_weights(Q, K), K))
    assert one.code == "one_head.returned_several" and weights.code == "attention_weights.returned_several"
    assert "returned 2 things (a tuple" in one.line


def test_a_device_the_machine_lacks_and_numpys_shape_error_are_told_in_words():
    """`.to('mps')` gave torch's raw "not linked with support for mps devices"; numpy's "shapes (5,5) and (8,5) not
    aligned" was raw where torch's own words got the transpose hint (sweep 15, W36/W38)."""
    import numpy as np
    from helpers.exercises.diagnosis import translate_error
    line, code = translate_error(RuntimeError("PyTorch is not linked with support for mps devices"), "Q, K")
    assert code == "error.device_missing" and "keep them where the inputs are" in line
    try:
        np.ones((5, 5)).dot(np.ones((8, 5)))
    except ValueError as err:
        line, code = translate_error(err, "weights, V")
    assert code == "error.matmul_shapes" and line.startswith("a matrix product of [5 × 5] and [8 × 5] does not fit")
    try:
        np.ones((5, 5)) @ np.ones((8, 5))
    except ValueError as err:
        line, code = translate_error(err, "weights, V")
    assert code == "error.matmul_shapes" and line.startswith("a matrix product whose inner sizes differ (5 and 8)")


def test_recombine_without_w_o_is_named():
    """`z.sum(0)` got "wrong shape [5, 4], expected [5, 6]" with no word of W_O (sweep 15, W13)."""
    summed = H.check_recombine(lambda z, W_O: z.sum(0))
    merged = H.check_recombine(lambda z, W_O: z.transpose(0, 1).reshape(z.shape[1], -1))
    assert summed.code == "recombine.no_w_o" and "left out W_O" in summed.line
    assert merged.code == "recombine.merged_no_w_o" and "multiply by the stacked W_O" in merged.line


def test_concat_shape_reads_the_two_numbers_in_a_tensor_or_an_array():
    """np.array([T, D]) and torch.tensor([T, D]) were refused as "expected a tuple of whole numbers" (sweep 16)."""
    import numpy as np
    assert H.check_concat_shape(lambda n_tokens, width, n_heads: np.array([n_tokens, width])).passed
    assert H.check_concat_shape(lambda n_tokens, width, n_heads: torch.tensor([n_tokens, width])).passed
    assert not H.check_concat_shape(lambda n_tokens, width, n_heads: torch.tensor([n_tokens, width / 1])).passed


def test_an_index_past_the_end_and_a_loop_from_one_are_named():
    """`for h in range(12)` over 3 heads raised a bare IndexError; `range(1, H)` was "numbers differ" (sweep 16)."""
    def fixed(z, W_O):
        return sum(z[h] @ W_O[h] for h in range(12))
    past = H.check_recombine(fixed)
    assert past.code == "recombine.error.index_past_end" and "a count written in (range(12))" in past.line
    skips = H.check_recombine(lambda z, W_O: sum(z[h] @ W_O[h] for h in range(1, z.shape[0])))
    assert skips.code == "recombine.loop_skips_first"


def test_grouped_attention_slips_a_new_class_made_are_named():
    """A fixed 8, no mask and no scale together, and heads reversed were "numbers differ" or a layout line
    (sweep 16, F05/W26/W28)."""
    from helpers.exercises import kv_checks

    def attend(Q, K, V, scale=None, mask=True):
        g = Q.shape[0] // K.shape[0]
        K, V = K.repeat_interleave(g, 0), V.repeat_interleave(g, 0)
        s = Q @ K.transpose(-2, -1) * (Q.shape[-1] ** -0.5 if scale is None else scale)
        if mask:
            s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(1), float("-inf"))
        return s.softmax(-1) @ V
    assert kv_checks.check_grouped_attention(lambda Q, K, V: attend(Q, K, V, scale=1 / 8)).code == \
        "grouped_attention.fixed_scale_8"
    assert kv_checks.check_grouped_attention(lambda Q, K, V: attend(Q, K, V, scale=1.0, mask=False)).code == \
        "grouped_attention.two_slips.no_mask+no_scale"
    assert kv_checks.check_grouped_attention(lambda Q, K, V: attend(Q, K, V).flip(0)).code == \
        "grouped_attention.heads_reversed"


def test_an_object_posing_as_a_tensor_or_an_array_is_told_it_is_not_one():
    """`__class__ = torch.Tensor` fools isinstance, and `__array__` numpy: such an answer was told "your tensor holds
    complex numbers", or named as a class mistake in the report (sweep 24, W1 and W2). type() cannot be faked."""
    from helpers.exercises.verdict import read_tensor

    class Fake:
        __class__ = torch.Tensor

        def __getattr__(self, name):
            return lambda *a, **k: True

    class Liar:
        def __array__(self, dtype=None, copy=None):
            return np.ones((4, 4))

    for answer, name in ((Fake(), "Fake"), (Liar(), "Liar")):
        assert read_tensor(answer, ()) == (None, f"expected a tensor, got {name}; return the result of the tensor maths.")
    assert read_tensor(np.float32(2.0), ())[0] == 2.0 and read_tensor([[1, 2]], ())[0].shape == (1, 2)
