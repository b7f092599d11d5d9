"""Every exercise check (notebooks 01-06): the reference solution passes, each known wrong answer is
caught and named, and nothing a student writes (a constant, NaN, a string, exit()) stops the notebook.

WRONG is the wrong-answer table: at least five wrong answers per exercise, each with the words
the check must print.
"""

import math
import sys

import pytest
import torch

import helpers as H
from helpers.exercises import attention_checks as C
from helpers.exercises import capstone, grading, head_checks
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


class _Module(torch.nn.Module):
    """A capstone answer built from capstone.reference with one switch flipped."""

    def __init__(self, dim, heads, **wrong):
        super().__init__()
        self.qkv, self.out, self.heads, self.wrong = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim), heads, wrong

    def forward(self, x):
        return capstone.reference(x, self.qkv, self.out, self.heads, **self.wrong)


def capstone_answer(**wrong):
    return type("Wrong", (_Module,), {"__init__": lambda self, d, h: _Module.__init__(self, d, h, **wrong)})


def nobias(dim, heads):
    m = S.MyMultiHead(dim, heads)
    m.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
    return m


# check, how to call it with an answer, the reference answer
CHECKS = {
    "attention_weights": (C.check_attention_weights, S.attention_weights),
    "masked_weights": (C.check_masked_weights, S.masked_weights),
    "weighted_sum": (C.check_weighted_sum, S.weighted_sum),
    "one_head": (C.check_one_head, S.one_head),
    "split_heads": (C.check_split_heads, S.split_heads),
    "merge_heads": (C.check_merge_heads, S.merge_heads),
    "recombine": (C.check_recombine, S.recombine),
    "MyMultiHead": (H.check_multihead, S.MyMultiHead),
    "head_size_and_params": (headcount.check_head_size_and_params, S.head_size_and_params),
    "concat_shape": (headcount.check_concat_shape, S.concat_shape),
    "my_previous_token_scores": (head_checks.check_previous_token_detector, S.my_previous_token_scores),
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


LIST_TOKENS = "<bos> list : red mat old fox . again : red mat old fox .".split()  # the run's tokens
W = lambda Q, K: (Q @ K.T / math.sqrt(Q.shape[-1]))  # noqa: E731  the scaled scores

WRONG = [
    # --- 01, exercise 1: attention weights
    ("attention_weights", lambda Q, K: sdpa(Q, K, scaled=False), "forgot the 1/√d scaling"),
    ("attention_weights", lambda Q, K: sdpa(Q, K, dim=0), "softmax over the wrong axis"),
    ("attention_weights", lambda Q, K: sdpa(K, Q), "queries and keys swapped"),
    ("attention_weights", lambda Q, K: Q @ K.T, "raw scores"),
    ("attention_weights", lambda Q, K: W(Q, K), "scaled scores before the softmax"),
    ("attention_weights", lambda Q, K: (Q @ K.T / Q.shape[-1]).softmax(-1), "divided by d_head instead of √d_head"),
    ("attention_weights", lambda Q, K: (Q @ K.T).softmax(-1) / math.sqrt(Q.shape[-1]), "scaled after the softmax"),
    ("attention_weights", lambda Q, K: W(Q, K).sigmoid(), "used a sigmoid"),
    ("attention_weights", lambda Q, K: (Q @ K.T / 4).softmax(-1), "right on the first input"),
    ("attention_weights", lambda Q, K: (Q @ K.T / 8).softmax(-1), "divided by a fixed 8 (√64"),
    ("attention_weights", lambda Q, K: (Q @ K.T / math.sqrt(768)).softmax(-1), "divided by a fixed √768"),
    ("attention_weights", lambda Q, K: W(Q, K).masked_fill(future(Q.shape[0]), -math.inf).softmax(-1), "no mask yet"),
    ("attention_weights", lambda Q, K: Q, "wrong shape"),
    # --- 01, exercise 2: the causal mask
    ("masked_weights", lambda s: s.softmax(-1), "no mask"),
    ("masked_weights", lambda s: s.masked_fill(future(s.shape[0]), 0.0).softmax(-1), "0 instead of -inf"),
    ("masked_weights", lambda s: s.softmax(-1).masked_fill(future(s.shape[0]), 0.0), "masked after the softmax"),
    ("masked_weights", lambda s: s.masked_fill(future(s.shape[0]).T, -math.inf).softmax(-1), "wrong triangle"),
    ("masked_weights", lambda s: s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(0), -math.inf).softmax(-1),
     "masked the diagonal too"),
    ("masked_weights", lambda s: s.masked_fill(future(s.shape[0]), -math.inf), "apply the softmax after the mask"),
    ("masked_weights", lambda s: s.masked_fill(future(5), -math.inf).softmax(-1), "right on the first input"),
    # --- 01, exercise 3: weighted sum
    ("weighted_sum", lambda w, V: w.T @ V, "transposed"),
    ("weighted_sum", lambda w, V: V.mean(0, keepdim=True).expand_as(V), "averaged"),
    ("weighted_sum", lambda w, V: V.sum(0, keepdim=True).expand_as(V), "without weighting"),
    ("weighted_sum", lambda w, V: (w @ V).T, "result transposed"),
    ("weighted_sum", lambda w, V: w, "returned the weights"),
    ("weighted_sum", lambda w, V: V, "value vectors unchanged"),
    ("weighted_sum", lambda w, V: w @ V + 1, "largest difference 1"),
    # --- 02, exercise 1: one head
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T).softmax(-1) @ (X @ c), "forgot the 1/√d scaling"),
    ("one_head", lambda X, a, b, c: sdpa(X @ a, X @ b, dim=0) @ (X @ c), "softmax over the wrong axis"),
    ("one_head", lambda X, a, b, c: sdpa(X @ b, X @ a) @ (X @ c), "queries and keys swapped"),
    ("one_head", lambda X, a, b, c: sdpa(X @ a, X @ b), "returned the attention weights"),
    ("one_head", lambda X, a, b, c: sdpa(X @ a, X @ b) @ X, "used the embeddings X as the values"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(X.shape[1])).softmax(-1) @ (X @ c), "√D"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / a.shape[1]).softmax(-1) @ (X @ c), "divided by d_head"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T).softmax(-1) / math.sqrt(a.shape[1]) @ (X @ c),
     "scaled after the softmax"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(a.shape[1])).sigmoid() @ (X @ c), "sigmoid"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / 2).softmax(-1) @ (X @ c),  # √d of the first input
     "right on the first input"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / 8).softmax(-1) @ (X @ c), "divided by a fixed 8 (√64"),
    ("one_head", lambda X, a, b, c: ((X @ a) @ (X @ b).T / 64 ** 0.5).softmax(-1) @ (X @ c), "here d = 4"),
    # --- 02, exercise 2: split heads
    ("split_heads", lambda x, n: x.reshape(n, x.shape[0], -1), "heads split in the wrong order"),
    ("split_heads", lambda x, n: x.reshape(x.shape[0], -1, n).permute(2, 0, 1), "contiguous"),
    ("split_heads", lambda x, n: x.reshape(x.shape[0], n, -1), "move the head axis first"),
    ("split_heads", lambda x, n: x.reshape(x.shape[0], n, -1).permute(1, 2, 0), "came out transposed"),
    ("split_heads", lambda x, n: x.expand(n, *x.shape), "every head all D features"),
    ("split_heads", lambda x, n: x.reshape(5, 3, 4).transpose(0, 1), "right on the first input"),
    # --- 03, exercise 1: merge heads
    ("merge_heads", lambda z: z.reshape(z.shape[1], -1), "heads merged in the wrong order"),
    ("merge_heads", lambda z: z.permute(1, 2, 0).reshape(z.shape[1], -1), "interleaved"),
    ("merge_heads", lambda z: z.sum(0), "added the heads"),
    ("merge_heads", lambda z: z.mean(0), "averaged the heads"),
    ("merge_heads", lambda z: z.transpose(0, 1), "flatten the last two axes"),
    ("merge_heads", lambda z: z, "returned z unchanged"),
    # --- 03, exercise 2: recombine
    ("recombine", lambda z, W_O: z @ W_O, "add them up over the heads"),
    ("recombine", lambda z, W_O: z[0] @ W_O[0], "used only head 0"),
    ("recombine", lambda z, W_O: (z @ W_O.flip(0)).sum(0), "wrong blocks"),
    ("recombine", lambda z, W_O: (z @ W_O).mean(0), "averaged the heads"),
    ("recombine", lambda z, W_O: z.sum(0) @ W_O.sum(0), "before decompressing"),
    ("recombine", lambda z, W_O: z.reshape(z.shape[1], -1) @ W_O.reshape(-1, W_O.shape[-1]), "wrong order"),
    # --- 03, exercise 3: the MultiHead capstone
    ("MyMultiHead", capstone_answer(transpose=False), "reshape without transpose"),
    ("MyMultiHead", capstone_answer(project=False), "no output projection"),
    ("MyMultiHead", capstone_answer(mask=False), "no mask"),
    ("MyMultiHead", capstone_answer(scale=math.sqrt(768)), "wrong scale: divide by √head_size (√64 = 8), not by √dim"),
    ("MyMultiHead", capstone_answer(scale=64.0), "not by head_size"),
    ("MyMultiHead", capstone_answer(scale=1.0), "forgot the scale"),
    ("MyMultiHead", capstone_answer(axis=-2), "softmax over the wrong axis"),
    ("MyMultiHead", capstone_answer(swap_qk=True), "queries and keys swapped"),
    ("MyMultiHead", nobias, "with a bias"),
    # --- 04: head size and parameters, concatenation shape
    ("head_size_and_params", lambda w, n: (w // n, 4 * w * w), "left out the biases"),
    ("head_size_and_params", lambda w, n: (n, H.attention_param_count(w, n)), "that is the number of heads"),
    ("head_size_and_params", lambda w, n: (w // n, 3 * (w * (w // n) + w // n) + (w // n) * w + w), "one head's share"),
    ("head_size_and_params", lambda w, n: (w // n, H.attention_param_count(w, n) - w), "left out the output bias"),
    ("head_size_and_params", lambda w, n: (w // n, 4 * w * w + 4 * w + 1), "per head 3·(width·d + d)"),
    ("head_size_and_params", lambda w, n: (24, 37248), "expected (96, 37248)"),
    ("head_size_and_params", lambda w, n: w // n, "expected a tuple of whole numbers"),
    ("concat_shape", lambda T, w, n: (T, w // n), "one head's output"),
    ("concat_shape", lambda T, w, n: (n, T, w // n), "keeps a heads axis"),
    ("concat_shape", lambda T, w, n: (w, T), "rows and columns swapped"),
    ("concat_shape", lambda T, w, n: (T, w * n), "width / heads long"),
    ("concat_shape", lambda T, w, n: (5, 96), "expected (9, 96)"),
    ("concat_shape", lambda T, w, n: 5, "expected a tuple of whole numbers"),
    ("concat_shape", lambda T, w, n: torch.zeros(T, w), "expected a tuple of whole numbers"),
    # --- 05/06: previous-token detector, previous-word head, induction pattern
    ("my_previous_token_scores", lambda a: a.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1), "token after"),
    ("my_previous_token_scores", lambda a: a.diagonal(dim1=-2, dim2=-1).mean(-1), "to itself"),
    ("my_previous_token_scores", lambda a: a.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1), "summed over"),
    ("my_previous_token_scores", lambda a: a.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / a.shape[-1], "divided by T"),
    ("my_previous_token_scores", lambda a: a.diagonal(offset=-1, dim1=-2, dim2=-1).amax(-1), "largest weight"),
    ("my_previous_token_scores", lambda a: a.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).T, "axes are swapped"),
    ("previous_word_head", lambda a: (0, 9), "second set of maps"),
    ("previous_word_head", (0, 9), "expected a function"),
    ("previous_word_head", lambda a: S.previous_word_head(a)[::-1], "swapped layer and head"),
    ("previous_word_head", lambda a: (a.shape[0], 0), "there is no head"),
    ("previous_word_head", lambda a: "L0 H9", "expected (layer, head)"),
    ("previous_word_head", lambda a: divmod(int(a.diagonal(dim1=-2, dim2=-1).mean(-1).argmax()), a.shape[1]),
     "looks at the word itself"),
    ("predict_induction", lambda t: torch.tensor(S.predict_induction(t)).roll(-1, dims=1), "earlier copy itself"),
    ("predict_induction", lambda t: torch.eye(len(t)).roll(-1, dims=1), "previous word"),
    ("predict_induction", lambda t: torch.eye(len(t)), "the word itself"),
    ("predict_induction", lambda t: torch.zeros(3, 3), "expected"),
    ("predict_induction", lambda t: S.predict_induction(LIST_TOKENS), "second input"),
    ("predict_induction", lambda t: torch.full((len(t), len(t)), math.nan), "NaN"),
    ("predict_induction", lambda t: "pattern", "expected a (T, T) array"),
]


def test_every_exercise_has_five_wrong_answers_and_a_solution():
    counts = {name: sum(1 for n, _, _ in WRONG if n == name) for name in CHECKS}
    assert min(counts.values()) >= 5, counts
    assert set(S.SOLUTIONS) == set(CHECKS) | {"my_prediction"}


def one_line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


@pytest.mark.parametrize("name", list(CHECKS))
def test_reference_solution_passes_and_returns_nothing(name, list_run, capsys):
    assert run_check(name, CHECKS[name][1], list_run) is None  # nothing for a notebook cell to echo
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("name, wrong, message", WRONG, ids=[f"{n}-{m}" for n, _, m in WRONG])
def test_known_mistake_is_caught_and_named(name, wrong, message, list_run, capsys):
    assert run_check(name, wrong, list_run) is None
    out = one_line(capsys)
    assert out.startswith("✗") and message in out, out


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
    assert run_check(name, answer, list_run) is None
    out = one_line(capsys)
    assert message in out and out[0] in "✗…", out


@pytest.mark.parametrize("name", ["attention_weights", "masked_weights", "weighted_sum", "one_head", "split_heads",
                                  "merge_heads", "recombine", "my_previous_token_scores"])
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
    assert out.startswith("✗") and ("right on the first input" in out or "wrong shape" in out), out


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
                           (lambda: None, "not attempted yet"), (0.1, "you predicted 10%"), (0.75, "✓")]:
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
        "import helpers.exercises.grading\nhelpers.exercises.grading.TIME_LIMIT_S = 0.5\nH.check_one_head(lambda *a: [x for x in iter(int, 1)])",
        "print('still alive')")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    texts = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert all("called exit()" in t for t in texts[1:4]), texts
    assert "ran for more than 0.5 s" in texts[4], texts
    assert texts[5] == "still alive\n"
    assert not any(o.output_type == "execute_result" for cell in nb.cells for o in cell.outputs)


@pytest.mark.parametrize("name", ["attention_weights", "head_size_and_params", "predict_induction"])
def test_an_endless_function_is_stopped_with_a_cross(name, list_run, monkeypatch, capsys):
    monkeypatch.setattr(grading, "TIME_LIMIT_S", 0.3)

    def endless(*args):
        while True:
            pass

    run_check(name, endless, list_run)
    assert "ran for more than 0.3 s (an endless loop?)" in one_line(capsys)
    run_check(name, CHECKS[name][1], list_run)  # the timer is gone: the next check runs normally
    assert one_line(capsys).startswith("✓")
