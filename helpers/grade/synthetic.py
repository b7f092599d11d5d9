"""A synthetic class for the grader's tests and bench: lesson notebooks with known answers put in.

Each exercise cell of a pristine lesson gets one of: the reference solution ("right"), the stub left
as it is ("blank"), a function that raises ("raised"), an answer no slip explains ("generic"), or a
catalogued mistake written as a student would (its code, e.g. "sqrt_of_T"). `expected` says what grades.csv must show for each.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from ..exercises import solutions
from .lessons import lessons, read_lesson

# Catalogued mistakes written as student code: (exercise, code) -> the function.
MISTAKES = {
    ("attention_weights", "sqrt_of_T"): "def attention_weights(Q, K):\n    return (Q @ K.T / Q.shape[0] ** 0.5).softmax(dim=-1)\n",
    ("attention_weights", "no_scale"): "def attention_weights(Q, K):\n    return (Q @ K.T).softmax(dim=-1)\n",
    ("masked_weights", "no_mask"): "def masked_weights(scores):\n    return scores.softmax(dim=-1)\n",
    ("weighted_sum", "weights_transposed"): "def weighted_sum(weights, V):\n    return weights.T @ V\n",
    ("one_head", "no_scale"): ("def one_head(X, W_Q, W_K, W_V):\n    Q, K, V = X @ W_Q, X @ W_K, X @ W_V\n"
                               "    return (Q @ K.T).softmax(dim=-1) @ V\n"),
    ("split_heads", "reshape_without_transpose"): ("def split_heads(x, n_heads):\n    T, D = x.shape\n"
                                                   "    return x.reshape(n_heads, T, D // n_heads)\n"),
    ("merge_heads", "reshape_without_transpose"): ("def merge_heads(z):\n    n, T, d = z.shape\n"
                                                   "    return z.reshape(T, n * d)\n"),
    ("recombine", "head_0_only"): "def recombine(z, W_O):\n    return z[0] @ W_O[0]\n",
    ("concat_shape", "rows_columns_swapped"): "def concat_shape(n_tokens, width, n_heads):\n    return (width, n_tokens)\n",
    ("head_size_and_params", "no_biases"): ("def head_size_and_params(width, n_heads):\n    d = width // n_heads\n"
                                            "    return d, n_heads * (3 * width * d + d * width)\n"),
    ("formation_step", "strictly_above"): ("def formation_step(steps, scores, tokens_per_step):\n"
                                           "    for step, score in zip(steps, scores):\n        if score > 0.5:\n"
                                           "            return step\n    return None\n"),
    # (the drops, 8 % - 4 % and 100 % - 1 %, for the accuracies left: on 08's run a swapped pair is within the tolerance)
    ("my_knockout_prediction", "drop_not_accuracy"): "def my_knockout_prediction():\n    return 0.04, 0.99\n",
    ("kv_cache_bytes", "missing_factor_2"): (
        "def kv_cache_bytes(config, n_tokens):\n    d = config['hidden_size'] // config['num_attention_heads']\n"
        "    return config['num_hidden_layers'] * config['num_key_value_heads'] * d * 2 * n_tokens\n"),
}
RAISES = "def {name}(*args):\n    raise LookupError('synthetic: this function always raises')\n"
# Answers no catalogued slip explains (the check says the numbers differ): exercise -> the function.
GENERIC = {
    "attention_weights": "def attention_weights(Q, K):\n    return torch.full((Q.shape[0], K.shape[0]), 0.5)\n",
    "kv_cache_bytes": "def kv_cache_bytes(config, n_tokens):\n    return 12345 * n_tokens\n",  # (a number written in alone is named)
}
KINDS_PLAIN = {"right": "✓", "blank": "not attempted", "raised": "raised", "generic": "generic"}


def kinds_for(name: str) -> list[str]:
    """What the class hands in for exercise `name`, in a fixed rotation (right, blank, raised, its mistakes)."""
    raised = ["raised"] if name != "MyMultiHead" else []  # a class that raises is the capstone's build_failed
    generic = ["generic"] if name in GENERIC else []
    return ["right", "blank", "right"] + raised + [code for ex, code in MISTAKES if ex == name] + generic


def expected(kind: str) -> str:
    """What grades.csv shows for an injected answer."""
    return KINDS_PLAIN.get(kind, kind)


def answer_source(name: str, kind: str) -> str | None:
    """The student's definition for this answer; None for the stub (blank)."""
    if kind == "blank":
        return None
    if kind == "right":
        return solutions.source(name)
    if kind == "raised":
        return RAISES.format(name=name)
    if kind == "generic":
        return GENERIC[name]
    return MISTAKES[name, kind]


def _replace(source: str, name: str, new: str) -> str:
    """The cell with its `def name` / `class name` replaced by `new`, the rest (inputs, check call) kept."""
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
    lines = source.splitlines()
    return "\n".join(lines[:node.lineno - 1] + new.rstrip("\n").splitlines() + lines[node.end_lineno:])


def notebook(lesson_path: Path, answers: dict[str, str]) -> dict:
    """The pristine lesson as JSON with the given answers (exercise name -> kind) put into its cells."""
    nb = json.loads(json.dumps(read_lesson(lesson_path)))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for name, kind in answers.items():
            new = answer_source(name, kind)
            if new is not None and any(getattr(n, "name", None) == name for n in _body(source)):
                source = _replace(source, name, new)
        cell["source"] = source
    return nb


def _body(source: str) -> list:
    try:
        return ast.parse(source).body
    except SyntaxError:
        return []


def write_class(folder: Path, students: int = 30, numbers: tuple[str, ...] | None = None,
                missing: dict[int, str] | None = None) -> dict[tuple[str, str], str]:
    """Write student NN's notebooks as folder/studentNN_<lesson>.ipynb; {(student, column): expected text}.
    `missing`: student number -> a lesson that student does not hand in ("not submitted")."""
    known = lessons()
    numbers = numbers or tuple(known)
    folder.mkdir(parents=True, exist_ok=True)
    want = {}
    for s in range(1, students + 1):
        student = f"student{s:02d}"
        for e_offset, number in enumerate(numbers):
            lesson = known[number]
            kinds = {name: kinds_for(name)[(s + 3 * e_offset + j) % len(kinds_for(name))]
                     for j, name in enumerate(lesson.names)}
            handed_in = (missing or {}).get(s) != number
            for name, kind in kinds.items():
                want[student, f"{number} {name}"] = expected(kind) if handed_in else "not submitted"
            if handed_in:
                nb = notebook(lesson.path, kinds)
                (folder / f"{student}_{number}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return want
