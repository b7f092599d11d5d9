"""Reading one notebook's bytes into cells, inside the worker that grades it (never in the grading process).

Any failure is one line that says what was wrong and the fix: not JSON (truncated), nested past what a
parser can follow, no cells, an nbformat other than 4 (the number 4 written as text is read), too many
cells. JSON in UTF-8 (with or without a BOM), UTF-16 or UTF-32 is read. Only the cells' types, sources
and metadata are kept; outputs are dropped as the file is read.
"""

from __future__ import annotations

import json

MAX_CELLS = 20_000


def _nbformat(nb: dict) -> int | None:
    """The notebook's major version, read as a number also when it is written as text ("4")."""
    try:
        value = float(str(nb.get("nbformat")).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def _parsed(data: bytes) -> tuple[object, str]:
    try:
        return json.loads(data), ""  # json finds UTF-8, UTF-8 with a BOM, UTF-16 and UTF-32 by itself
    except RecursionError:
        return None, "is nested too deeply to read (JSON past Python's recursion limit); hand in the lesson's .ipynb"
    except MemoryError:
        return None, "is too large to read in the worker's memory; hand in the lesson's .ipynb without outputs"
    except (UnicodeDecodeError, ValueError):
        return None, "is not a notebook (not JSON: truncated or damaged); open it in Jupyter and save it again"


def _cell(cell: dict) -> dict:
    source = cell.get("source", "")
    source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    return {"cell_type": str(cell.get("cell_type", "")), "source": source, "metadata": meta}


def cells_of(data: bytes) -> tuple[list[dict] | None, str]:
    """(the cells: type, source, metadata; or None and one line saying why the notebook cannot be read)."""
    nb, problem = _parsed(data)
    if problem:
        return None, problem
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", nb.get("worksheets")), list):
        return None, "is JSON but not a notebook (no cells); hand in the lesson's .ipynb file"
    major = _nbformat(nb)
    if major != 4:
        shown = major if major is not None else repr(nb.get("nbformat"))[:40]
        return None, (f"is a notebook of nbformat {shown} (this grader reads nbformat 4); open it in Jupyter "
                      f"(version 4 or later) and save it again")
    if not isinstance(nb.get("cells"), list):
        return None, "is JSON but not a notebook (no cells); hand in the lesson's .ipynb file"
    if len(nb["cells"]) > MAX_CELLS:
        return None, f"has {len(nb['cells'])} cells, more than {MAX_CELLS}; hand in the lesson's notebook"
    return [_cell(c) for c in nb["cells"] if isinstance(c, dict)], ""
