"""Nothing fools a check (the third fault sweep, §1 and §2): the student's function runs in a forked child,
so what it replaces in math, torch, numpy or helpers is refused and does not leak into the next check;
os._exit, a loop that swallows every exception and GeneratorExit each end in one verdict line within
the time limit plus a second; a notebook cell's own patches are put back before anything is computed."""

import math
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import helpers as H
from helpers.core import attention as A
from helpers.core import model as core_model
from helpers.exercises import grading, integrity, isolation, sandbox
from helpers.exercises import solutions as S
from test_checks import CHECKS, list_run, run_check  # noqa: F401 (list_run is a fixture)

pytestmark = pytest.mark.skipif(not isolation.CAN_FORK, reason="the child-process sandbox needs os.fork")


def _patches():
    """(name, what the student's code does) for every patch the sweep found earning a ✓."""
    return {
        "math.sqrt": lambda: setattr(math, "sqrt", lambda x: 1.0),
        "torch.Tensor.softmax": lambda: setattr(torch.Tensor, "softmax", lambda self, dim=-1, **kw: self),
        "torch.Tensor.__truediv__": lambda: setattr(torch.Tensor, "__truediv__", lambda a, b: a),
        "softmax_over_keys": lambda: setattr(A, "softmax_over_keys", lambda scores: scores),
        "grading.close": lambda: setattr(grading, "close", lambda *a, **kw: True),
        "SelfAttention.forward": lambda: setattr(core_model.SelfAttention, "forward", lambda self, *a, **kw: None),
    }


@pytest.fixture(autouse=True)
def nothing_leaks():
    """Whatever a check lets through, this process is put back afterwards, and the test fails if it had to."""
    before = integrity.Snapshot()
    yield
    leaked = integrity.changes(before)
    integrity.restore(before)
    assert leaked == [], f"a patch reached the notebook's process: {leaked}"


def _patching(answer, patch):
    """The right answer, computed first, then a patch: a ✓ here would mean the check can be fooled."""
    if isinstance(answer, type):  # the capstone: a class whose forward patches as it runs
        class Patching(answer):
            def forward(self, x):
                out = super().forward(x)
                patch()
                return out
        return Patching
    def patched(*args):
        out = answer(*args)
        patch()
        return out
    return patched


@pytest.mark.parametrize("patch", list(_patches()))
@pytest.mark.parametrize("name", list(CHECKS))
def test_a_function_that_patches_is_refused_and_the_next_check_is_unharmed(name, patch, list_run, capsys):
    verdict = run_check(name, _patching(CHECKS[name][1], _patches()[patch]), list_run)
    assert verdict.outcome == "patched" and verdict.code == f"{verdict.exercise}.patched", verdict.line
    assert "the check puts it back and does not accept this answer" in verdict.line
    assert run_check(name, CHECKS[name][1], list_run).passed  # the next check: the reference is still right
    unscaled = H.check_attention_weights(lambda Q, K: (Q @ K.T).softmax(-1))
    assert unscaled.code == "attention_weights.no_scale", unscaled.line


@pytest.mark.parametrize("patch", ["math.sqrt", "torch.Tensor.softmax", "torch.Tensor.__truediv__", "softmax_over_keys",
                                   "grading.close"])
def test_a_wrong_answer_that_patches_the_reference_into_agreeing_is_refused(patch):
    def unscaled_and_patched(Q, K):
        _patches()[patch]()
        return (Q @ K.T).softmax(-1)
    assert H.check_attention_weights(unscaled_and_patched).outcome == "patched"
    def grouped(Q, K, V):
        math.sqrt = lambda x: 1.0
        return S.grouped_attention(Q, K, V)
    assert H.check_grouped_attention(grouped).outcome == "patched"


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
    def pops(config, n_tokens):
        config.pop("num_key_value_heads")
        return S.kv_cache_bytes({**config, "num_key_value_heads": 8}, n_tokens)
    H.check_kv_cache(pops)
    assert H.check_kv_cache(S.kv_cache_bytes).passed  # nothing the student did to a config stays


def _fresh(script: str, limit: float) -> tuple[str, float]:
    """Run a check in a fresh Python process (a fault that kills or hangs one must not take pytest along)."""
    code = "import helpers as H, os, time\nimport helpers.exercises.sandbox as sb\nsb.TIME_LIMIT_S = 1.0\n" + \
        textwrap.dedent(script) + "\nprint('alive')\n"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    assert done.returncode == 0 and done.stdout.rstrip().endswith("alive"), done.stdout + done.stderr
    return done.stdout, took


@pytest.mark.parametrize("body, words", [
    ("os._exit(0)", "ended the Python process running it"),
    ("os.kill(os.getpid(), 9)", "crashed the Python process running it"),
    ("while True:\n        try:\n            time.sleep(1)\n        except BaseException:\n            pass",
     "ran for more than 1 s"),
    ("raise GeneratorExit", "raised GeneratorExit"),
    ("raise KeyboardInterrupt", "stopped before your function finished"),
])
def test_exits_unstoppable_loops_and_base_exceptions_end_in_one_line_within_the_limit(body, words):
    script = f"def f(Q, K):\n    {body}\nt = time.monotonic()\nv = H.check_attention_weights(f)\n" \
             f"print(v.outcome, round(time.monotonic() - t, 2))"
    out, _ = _fresh(script, 1.0)
    line, timing = out.splitlines()[0], out.splitlines()[1]
    assert words in line, out
    assert float(timing.split()[1]) < 1.0 + 1.0, out  # within the limit plus one second


def test_a_process_the_function_leaves_running_does_not_hold_the_check_up(tmp_path):
    """It inherits the pipe the answers come back through, so the pipe stays open: the check reads until
    every answer is in, not until the pipe closes (it waited for the whole time limit, 8 s here)."""
    pids = tmp_path / "pids"
    script = f"""
        import signal
        sb.TIME_LIMIT_S = 8.0
        def f(Q, K):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            open({str(pids)!r}, "a").write(f"{{pid}}\\n")
            return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)
        t = time.monotonic()
        v = H.check_attention_weights(f)
        print(v.outcome, round(time.monotonic() - t, 2))
        for pid in open({str(pids)!r}).read().split():
            os.kill(int(pid), signal.SIGKILL)
    """
    out, _ = _fresh(script, 8.0)
    outcome, seconds = out.splitlines()[-2].split()
    assert outcome == "right" and float(seconds) < 4.0, out
    assert len(pids.read_text().split()) >= 1  # the function did fork


def test_the_sandbox_docs_say_where_the_child_process_holds():
    assert "Windows" in isolation.__doc__ and "os.fork" in isolation.__doc__
    assert sandbox.TIME_LIMIT_S == 10.0


@pytest.mark.notebook
def test_in_a_real_kernel_os_exit_and_an_unstoppable_loop_leave_the_kernel_alive():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "import os, time, math\nimport helpers as H\nimport helpers.exercises.sandbox as sb\nsb.TIME_LIMIT_S = 1.0",
        "H.check_attention_weights(lambda Q, K: os._exit(0))",
        "def f(Q, K):\n    while True:\n        try:\n            time.sleep(1)\n        except BaseException:\n            pass\n"
        "H.check_attention_weights(f)",
        "def g(Q, K):\n    math.sqrt = lambda x: 1.0\n    return (Q @ K.T).softmax(-1)\nH.check_attention_weights(g)",
        "print(math.sqrt(4.0))")]
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    texts = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert "ended the Python process running it" in texts[1], texts
    assert "ran for more than 1 s" in texts[2], texts
    assert "replaced `math.sqrt`" in texts[3] and texts[4] == "2.0\n", texts


def test_an_answer_that_is_nan_everywhere_is_told_so_and_a_slip_only_as_a_possibility():
    verdict = H.check_attention_weights(lambda Q, K: torch.full((Q.shape[0], K.shape[0]), math.nan))
    assert "every number of your answer is NaN; one slip that gives exactly that" in verdict.line
    assert not verdict.sure  # said as a possibility, not as the diagnosis
    verdict = H.check_weighted_sum(lambda w, V: torch.full(V.shape, math.nan))
    assert verdict.code == "weighted_sum.nan_everywhere" and verdict.line.count("NaN") == 2, verdict.line


def test_a_library_rewrapping_its_own_function_is_not_called_a_patch():
    """torch._dynamo (imported by an optimizer's first step, among others) wraps torch.manual_seed: that is
    torch's doing, and no verdict may say a cell replaced it."""
    before = integrity.Snapshot()
    import torch._dynamo  # noqa: F401
    assert integrity.changes(before) == []
    assert "put the original back" not in H.check_attention_weights(S.attention_weights).line
