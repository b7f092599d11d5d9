"""Wrap every figure a notebook cell shows in H.show_figure, so it carries its words as alt text.

Run once after adding a figure cell: `python tools/add_alt_text.py`. A cell whose last line is a
helpers figure call (`H.plot_…(…)`, `H.prediction_bars(…)`, `H.kv_slide(…)`) or the name `fig` gets
`H.show_figure(…)` around it; `plt.show()` becomes `H.show_figure(fig)`. Cells already wrapped stay.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
FIGURE_CALLS = ("plot_", "prediction_bars", "kv_slide")


def shows_a_figure(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "fig"
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "H"
            and func.attr.startswith(FIGURE_CALLS))


def wrapped(source: str) -> str:
    """The cell's source with its shown figure wrapped; unchanged when it shows none."""
    source = source.replace("plt.show()", "H.show_figure(fig)")
    try:
        last = ast.parse(source).body[-1]
    except (SyntaxError, IndexError):  # a magic (%matplotlib) or an empty cell shows no figure
        return source
    if not (isinstance(last, ast.Expr) and shows_a_figure(last.value)):
        return source
    lines = source.splitlines()
    first, last_line = last.lineno - 1, last.end_lineno - 1
    end = last.end_col_offset + (len("H.show_figure(") if first == last_line else 0)  # past the call
    lines[first] = lines[first][:last.col_offset] + "H.show_figure(" + lines[first][last.col_offset:]
    lines[last_line] = lines[last_line][:end] + ")" + lines[last_line][end:]
    return "\n".join(lines)


def main(paths) -> None:
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        changed = 0
        for cell in nb.cells:
            if cell.cell_type == "code":
                new = wrapped(cell.source)
                changed += new != cell.source
                cell.source = new
        if changed:
            nbformat.write(nb, path)
        print(f"{path.name}: {changed} cells wrapped")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or sorted(NOTEBOOKS.glob("0[1-7]_*.ipynb")))
