"""A student's function runs in the kernel's own process, one way on every OS (issue 51 §3): it gets
copies of its inputs, an input it edits in place is named, what it patches in math, torch, numpy or
helpers is put back and named, a loop is stopped at the time limit, and the notebook's variables are
as they were afterwards. Nothing in helpers/exercises forks. No test here measures a wall time."""

import copy
import inspect
import math
import threading
from pathlib import Path

import pytest
import torch

import helpers as H
from helpers.core import attention as A
from helpers.core import model as core_model
from helpers.exercises import attention_checks, formation_checks, grading, kv_checks, sandbox
from helpers.exercises import solutions as S
from test_checks import CHECKS, list_run, run_check  # noqa: F401 (list_run is a fixture)

EVERY_CHECK = {**CHECKS,
               "kv_cache": (kv_checks.check_kv_cache, S.kv_cache_bytes),
               "grouped_attention": (kv_checks.check_grouped_attention, S.grouped_attention),
               "formation_step": (formation_checks.check_formation_step, S.formation_step),
               "knockout_along": (formation_checks.check_knockout_along, S.my_knockout_prediction)}
NO_INPUTS = {"knockout_along"}  # a prediction takes no argument: there is nothing to edit in place
WHOLE_NUMBERS = {"head_size_and_params", "concat_shape"}  # ints only: nothing can be edited in place


def run_any(name, answer, list_run):
    if name in CHECKS:
        return run_check(name, answer, list_run)
    return EVERY_CHECK[name][0](answer)


@pytest.fixture(autouse=True)
def nothing_leaks():
    """Whatever a check lets through, this process is put back afterwards, and the test fails if it had to."""
    before = sandbox.Snapshot()
    yield
    leaked = sandbox.changes(before)
    sandbox.restore(before)
    assert leaked == [], f"a patch reached the notebook's process: {leaked}"


# --- the notebook: functions written in a cell, beside the notebook's own variables ----------------------
def notebook(reference) -> dict:
    """A namespace like a notebook's: its tensors, and three answers written in its cells, each built on the
    reference so that only the patch, the in-place edit or the loop is wrong."""
    cell = {"__name__": "__main__", "math": math, "torch": torch, "copy": copy, "reference": reference,
            "Q": torch.arange(6.0).reshape(2, 3), "config": {"layers": 2}, "steps": [0, 10]}
    if isinstance(reference, type):
        exec(CLASS_CELL, cell)
        return cell
    names = ", ".join(inspect.signature(reference).parameters)
    exec(FUNCTION_CELL.format(params=names, first=names.split(",")[0] or "None"), cell)
    return cell


FUNCTION_CELL = """
def patches({params}):
    out = reference({params})
    math.sqrt = lambda x: 1.0
    return out

def edits({params}):
    out = copy.deepcopy(reference({params}))  # not a view of the input: only the edit is wrong
    edit({first})
    return out

def loops({params}):
    while True:
        pass

def edit(arg):
    if isinstance(arg, torch.Tensor):
        arg.mul_(2)
    elif isinstance(arg, dict):
        arg["extra"] = 1
    elif isinstance(arg, list):
        arg.append(arg[-1])
"""

CLASS_CELL = """
class patches(reference):
    def forward(self, x):
        out = super().forward(x)
        math.sqrt = lambda x: 1.0
        return out

class edits(reference):
    def forward(self, x):
        out = super().forward(x)
        x.mul_(2)
        return out

class loops(reference):
    def forward(self, x):
        while True:
            pass
"""


def _same(cell: dict, kept: dict) -> bool:
    return cell.keys() == kept.keys() and all(
        torch.equal(cell[k], kept[k]) if isinstance(kept[k], torch.Tensor) else cell[k] == kept[k] for k in kept)


@pytest.mark.parametrize("name", list(EVERY_CHECK))
def test_every_check_names_a_patch_an_in_place_edit_and_a_loop_and_leaves_the_notebook_as_it_was(
        name, list_run, monkeypatch):
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 60.0)  # only the loop gets a short limit: a busy machine is slow
    cell = notebook(EVERY_CHECK[name][1])
    kept = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in cell.items() if k in ("Q", "config", "steps")}
    names = dict(cell)

    patched = run_any(name, cell["patches"], list_run)
    assert patched.outcome == "patched" and "`math.sqrt`" in patched.line and not patched, patched.line
    assert math.sqrt(4.0) == 2.0

    if name not in NO_INPUTS | WHOLE_NUMBERS:
        edited = run_any(name, cell["edits"], list_run)
        assert edited.code.endswith(".changed_input") and "changed `" in edited.line and not edited, edited.line

    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.5)
    looped = run_any(name, cell["loops"], list_run)
    assert looped.code.endswith(".too_slow") and "ran for more than 0.5 s" in looped.line, looped.line

    assert _same({k: cell[k] for k in kept}, kept) and cell.keys() == names.keys()
    assert all(cell[k] is names[k] for k in names)
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 60.0)
    assert run_any(name, EVERY_CHECK[name][1], list_run).passed  # the next check: the reference is still right


def test_the_in_place_line_names_the_students_own_parameter():
    def scale_in_place(Q, K):
        Q /= math.sqrt(Q.shape[-1])
        return (Q @ K.T).softmax(-1)
    verdict = H.check_attention_weights(scale_in_place)
    assert verdict.code == "attention_weights.changed_input" and "your function changed `Q` in place" in verdict.line

    def masks_in_place(scores):
        scores.masked_fill_(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
        return scores.softmax(-1)
    assert "changed `scores` in place" in H.check_masked_weights(masks_in_place).line


def test_a_wrong_answer_that_also_edits_in_place_gets_both_said():
    def unscaled_in_place(Q, K):
        Q.mul_(1.0)  # same numbers: not an edit
        K.add_(0.0)
        return (Q @ K.T).softmax(-1)
    assert H.check_attention_weights(unscaled_in_place).code == "attention_weights.no_scale"

    def unscaled_and_edits(Q, K):
        K.zero_()
        return (Q @ K.T).softmax(-1)
    verdict = H.check_attention_weights(unscaled_and_edits)
    assert verdict.outcome == "mistake" and "Also: your function changed `K` in place" in verdict.line, verdict.line


def test_a_notebook_tensor_the_function_edits_or_a_name_it_rebinds_is_put_back_and_named():
    cell = {"__name__": "__main__", "torch": torch, "math": math, "S": S, "walk": torch.ones(3)}
    exec("def f(Q, K):\n    walk.mul_(5)\n    return S.attention_weights(Q, K)\n"
         "def g(Q, K):\n    global walk\n    walk = None\n    return S.attention_weights(Q, K)\n", cell)
    kept = cell["walk"]
    for fn in (cell["f"], cell["g"]):
        verdict = H.check_attention_weights(fn)
        assert verdict.code == "attention_weights.changed_input" and "the notebook's `walk`" in verdict.line
        assert "leave walk to the notebook and use a local name inside the function (no `global walk`" in verdict.line
        assert "the notebook's `walk` = " not in verdict.line  # the fix read "the notebook's `walk` = the notebook's …"
        assert cell["walk"] is kept and torch.equal(kept, torch.ones(3))


@pytest.mark.parametrize("patch", ["math.sqrt", "torch.Tensor.softmax", "torch.Tensor.__truediv__", "softmax_over_keys",
                                   "grading.close", "SelfAttention.forward"])
def test_a_function_that_patches_is_refused_and_the_original_is_back_at_once(patch):
    patches = {
        "math.sqrt": lambda: setattr(math, "sqrt", lambda x: 1.0),
        "torch.Tensor.softmax": lambda: setattr(torch.Tensor, "softmax", lambda self, dim=-1, **kw: self),
        "torch.Tensor.__truediv__": lambda: setattr(torch.Tensor, "__truediv__", lambda a, b: a),
        "softmax_over_keys": lambda: setattr(A, "softmax_over_keys", lambda scores: scores),
        "grading.close": lambda: setattr(grading, "close", lambda *a, **kw: True),
        "SelfAttention.forward": lambda: setattr(core_model.SelfAttention, "forward", lambda self, *a, **kw: None),
    }

    def unscaled_and_patched(Q, K):
        patches[patch]()
        return (Q @ K.T).softmax(-1)
    before = sandbox.Snapshot()
    verdict = H.check_attention_weights(unscaled_and_patched)
    assert verdict.outcome == "patched" and "the check puts it back and does not accept this answer" in verdict.line
    assert sandbox.changes(before) == []  # put back before the check returned
    assert H.check_attention_weights(lambda Q, K: (Q @ K.T).softmax(-1)).code == "attention_weights.no_scale"


@pytest.mark.parametrize("name", ["len", "isinstance", "setattr", "print"])
def test_a_right_answer_that_replaces_a_builtin_is_told_so_and_the_builtin_is_back(name):
    """`builtins.len = lambda *a: 0` then the right answer: the grader blamed its own pipe or a crash (sweep 13,
    h06/h36); setattr and print are what the code after the call (redirect_stdout, the echo) looks up first."""
    import builtins
    original = getattr(builtins, name)

    def right_but_patching(Q, K):
        setattr(builtins, name, lambda *a, **kw: 0)
        return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)
    verdict = H.check_attention_weights(right_but_patching)
    assert getattr(builtins, name) is original
    assert verdict.outcome == "patched" and verdict.line == (
        f"✗ attention weights: your function replaced `builtins.{name}`; the check puts it back and does not accept "
        f"this answer: compute it with Python's builtins as they are."), verdict.line
    assert H.check_attention_weights(S.attention_weights).outcome == "right"


def test_a_function_that_replaces_dozens_of_names_is_told_five_and_how_many_more():
    import builtins
    names = ["abs", "all", "any", "ascii", "bin", "chr", "divmod", "hex"]
    originals = {n: getattr(builtins, n) for n in names}

    def patches_eight(Q, K):
        for n in names:
            setattr(builtins, n, lambda *a: 0)
        return (Q @ K.T).softmax(-1)
    line = H.check_attention_weights(patches_eight).line
    assert all(getattr(builtins, n) is f for n, f in originals.items())
    assert "replaced `builtins.abs`, `builtins.all`, `builtins.any`, `builtins.ascii`, `builtins.bin` and 3 more; " \
           "the check puts them back" in line, line


def test_a_notebook_cells_patch_is_put_back_before_the_check_computes_anything():
    cell = {"__name__": "__main__", "math": math}
    exec("math.sqrt = lambda x: 1.0", cell)  # a cell of the notebook, not the function
    verdict = H.check_attention_weights(lambda Q, K: (Q @ K.T).softmax(-1))
    assert verdict.code == "attention_weights.no_scale" and "the check put the original back" in verdict.line
    assert math.sqrt(4.0) == 2.0


def test_the_kv_check_hands_the_student_copies_of_its_configs():
    def edits_in_place(config, n_tokens):
        config["num_hidden_layers"] = 0
        return 0
    assert not H.check_kv_cache(edits_in_place).passed
    assert kv_checks.MISTRAL_7B["num_hidden_layers"] == 32

    def pops(config, n_tokens):
        config.pop("num_key_value_heads")
        return S.kv_cache_bytes({**config, "num_key_value_heads": 8}, n_tokens)
    assert "changed `config` in place" in H.check_kv_cache(pops).line
    assert H.check_kv_cache(S.kv_cache_bytes).passed  # nothing the student did to a config stays


LOOPS = {
    "a plain loop": "while True:\n        pass",
    "a loop that swallows every exception": "while True:\n        try:\n            time.sleep(0.05)\n"
                                            "        except BaseException:\n            pass",
    "a loop that swallows it in a helper of its own": "while True:\n        helper()",
}


@pytest.mark.parametrize("loop", list(LOOPS))
def test_a_loop_is_stopped_at_the_limit_and_the_timer_is_gone_afterwards(loop, monkeypatch):
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)
    cell = {"__name__": "__main__", "time": __import__("time")}
    exec("def helper():\n    try:\n        time.sleep(0.05)\n    except BaseException:\n        pass\n"
         f"def f(Q, K):\n    {LOOPS[loop]}\n", cell)
    verdict = H.check_attention_weights(cell["f"])
    assert verdict.code == "attention_weights.too_slow" and "ran for more than 0.3 s" in verdict.line
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 10.0)
    assert H.check_attention_weights(S.attention_weights).passed


def test_from_a_thread_without_alarm_signals_a_loop_is_stopped_by_the_timer_thread(monkeypatch):
    """Windows has no alarm signal, and a check called from a thread cannot use one: the timer thread
    raises StudentTooSlow in the function's thread (PyThreadState_SetAsyncExc)."""
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)
    got = []

    def endless(Q, K):
        while True:
            pass
    thread = threading.Thread(target=lambda: got.append(grading.grade(attention_checks.ATTENTION_WEIGHTS,
                                                                       endless)))
    thread.start()
    thread.join(60)
    assert got and got[0].code == "attention_weights.too_slow", got
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 60)  # the right answer is never too slow, even on a busy machine
    thread = threading.Thread(target=lambda: got.append(grading.grade(attention_checks.ATTENTION_WEIGHTS,
                                                                       S.attention_weights)))
    thread.start()
    thread.join(60)
    assert got[1].passed  # a late StudentTooSlow does not reach a later call


@pytest.mark.parametrize("body, words", [
    ("raise GeneratorExit", "raised GeneratorExit"),
    ("raise KeyboardInterrupt", "stopped before your function finished"),
    ("exit()", "called exit()"),
])
def test_base_exceptions_and_exit_end_in_one_line(body, words):
    cell = {"__name__": "__main__"}
    exec(f"def f(Q, K):\n    {body}\n", cell)
    assert words in H.check_attention_weights(cell["f"]).line


def test_nothing_in_the_exercises_forks_and_the_docs_say_what_os_exit_does():
    sources = {p.name: p.read_text() for p in Path(sandbox.__file__).parent.glob("*.py")}
    assert not [name for name, text in sources.items() if "os.fork" in text or "fork(" in text]
    assert "os._exit" in sandbox.__doc__ and "ends the kernel" in sandbox.__doc__
    assert "os._exit" in grading.__doc__
    assert sandbox.TIME_LIMIT_S == 10.0


@pytest.mark.notebook
def test_in_a_real_kernel_a_loop_a_patch_and_an_in_place_edit_leave_the_kernel_and_its_tensors_alone():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "import os, time, math, torch\nimport helpers as H\nimport helpers.exercises.sandbox as sb\n"
        "sb.TIME_LIMIT_S = 1.0\nQ = torch.ones(2, 2)",
        "def f(Q, K):\n    while True:\n        try:\n            time.sleep(0.1)\n        except BaseException:\n"
        "            pass\nH.check_attention_weights(f)",
        "def g(Q, K):\n    math.sqrt = lambda x: 1.0\n    return (Q @ K.T).softmax(-1)\nH.check_attention_weights(g)",
        "def h(Q, K):\n    Q /= math.sqrt(Q.shape[-1])\n    return (Q @ K.T).softmax(-1)\nH.check_attention_weights(h)",
        "print(math.sqrt(4.0), Q.sum().item())")]
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    texts = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert "ran for more than 1 s" in texts[1], texts
    assert "replaced `math.sqrt`" in texts[2], texts
    assert "changed `Q` in place" in texts[3], texts
    assert texts[4] == "2.0 4.0\n", texts


def test_an_answer_that_is_nan_everywhere_is_told_so_and_a_slip_only_as_a_possibility():
    verdict = H.check_attention_weights(lambda Q, K: torch.full((Q.shape[0], K.shape[0]), math.nan))
    assert "every number of your answer is NaN; one slip that gives exactly that" in verdict.line
    assert not verdict.sure  # said as a possibility, not as the diagnosis
    verdict = H.check_weighted_sum(lambda w, V: torch.full(V.shape, math.nan))
    assert verdict.code == "weighted_sum.nan_everywhere" and verdict.line.count("NaN") == 2, verdict.line


def test_a_library_rewrapping_its_own_function_is_not_called_a_patch():
    """torch._dynamo (imported by an optimizer's first step, among others) wraps torch.manual_seed: that is
    torch's doing, and no verdict may say a cell replaced it."""
    before = sandbox.Snapshot()
    import torch._dynamo  # noqa: F401
    assert sandbox.changes(before) == []
    assert "put the original back" not in H.check_attention_weights(S.attention_weights).line


def test_a_counter_of_the_students_own_is_put_back_without_a_word():
    """`calls = 0` and `global calls; calls += 1` in a right answer was "✗ … changed the notebook's `calls`"
    (sweep 27): only a rebound tensor or array is named, as later cells compute with it."""
    cell = {"__name__": "__main__", "torch": torch, "S": S, "calls": 0, "log": []}
    exec("def f(Q, K):\n    global calls, log\n    calls += 1\n    log = log + ['x']\n"
         "    return S.attention_weights(Q, K)\n", cell)
    assert H.check_attention_weights(cell["f"]).outcome == "right"
    assert cell["calls"] == 0 and cell["log"] == []  # put back all the same
