"""What the grader takes from a student's notebook for one exercise: plain definitions, nothing that runs.

For the exercise `name` the grader takes the LAST code cell that defines `name` at its top level (as
running the notebook top to bottom would leave it), and from that cell only:
- `import …` and `from … import …` lines;
- function definitions (`def`) whose default values are plain constants, with no decorator but
  @torch.no_grad(), @torch.inference_mode(), @staticmethod, @classmethod or @property;
- class definitions (`class X(nn.Module):`) whose body holds only such functions and constants;
- assignments of a plain constant to a name (`EPS = 1e-9`).
Everything else in the cell (the check call, prints, top-level code) is left out, and so are the
cell's outputs, so no code of the student runs until the check calls the function. A definition of
`name` that would run code as it is defined is refused in one line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .lessons import defined_names

ALLOWED_DECORATORS = {"torch.no_grad()", "torch.inference_mode()", "staticmethod", "classmethod", "property"}


@dataclass(frozen=True)
class Taken:
    """What was taken for one exercise: the code to run (or None) and, when refused, why."""

    name: str
    code: str | None  # the definitions to run before the check; None: nothing to grade
    problem: str = ""  # one line when the definition was refused or does not parse
    cell: str = ""  # the student's whole cell, shown in the report (never run)


def _constant(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _plain_function(node: ast.AST) -> bool:
    args = node.args
    defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
    return all(ast.unparse(d) in ALLOWED_DECORATORS for d in node.decorator_list) and all(map(_constant, defaults))


def _dotted(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) or isinstance(node, ast.Attribute) and _dotted(node.value)


def _plain_class(node: ast.ClassDef) -> bool:
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return not node.decorator_list and not node.keywords and all(map(_dotted, node.bases)) and \
        all(_plain(s) for s in body)


def _plain(node: ast.stmt) -> bool:
    """A statement that runs none of the student's code when it is executed."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return not any(alias.name == "*" for alias in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _plain_function(node)
    if isinstance(node, ast.ClassDef):
        return _plain_class(node)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and _constant(node.value)
    return False


def _defines(node: ast.stmt, name: str) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name


def take(cells: list[dict], name: str) -> Taken:
    """The definitions to grade for exercise `name` from a notebook's cells (see the module's rules)."""
    sources = [c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    found = [s for s in sources if name in defined_names(s)]
    if not found:
        return Taken(name, None)
    cell = found[-1]
    try:
        body = ast.parse(cell).body
    except (RecursionError, MemoryError) as err:  # nesting past what Python's parser can follow
        return Taken(name, None, f"the cell defining {name} cannot be parsed ({type(err).__name__}: nested too "
                                 f"deeply for Python's parser)", cell)
    except (SyntaxError, ValueError) as err:
        line = f" on line {err.lineno}" if getattr(err, "lineno", None) else ""
        return Taken(name, None, f"the cell defining {name} does not run: {type(err).__name__}{line} "
                                 f"({getattr(err, 'msg', err)})", cell)
    if not all(_plain(n) for n in body if _defines(n, name)):
        return Taken(name, None, f"the definition of {name} runs code as it is defined (a decorator, a default "
                                 f"value or a class body that is not plain definitions): the grader runs only "
                                 f"plain definitions", cell)
    kept = [n for n in body if _plain(n)]
    return Taken(name, ast.unparse(ast.Module(body=kept, type_ignores=[])), "", cell)
