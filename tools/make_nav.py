"""Write the navigation of the notebooks and the notebook list in README.md.

Every notebooks/NN_*.ipynb gets a navigation cell at the very top and the very bottom
(previous · contents · next, titles from each notebook's first `#` heading), and
README.md gets the list of notebooks between its marker comments.

    python tools/make_nav.py           # rewrite what is stale
    python tools/make_nav.py --check   # exit 1 and name what is stale; change nothing
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!--NAVIGATION-->"
README_START, README_END = "<!-- notebooks:start -->", "<!-- notebooks:end -->"
NOTEBOOK_RE = re.compile(r"^\d\d_.+\.ipynb$")


def notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if NOTEBOOK_RE.match(p.name))


def _is_nav(cell) -> bool:
    return cell.cell_type == "markdown" and (cell.source.startswith(MARKER) or not cell.source.strip())


def title_and_blurb(nb) -> tuple[str, str]:
    """The first `# ` heading, and the first plain line after it (the notebook's one-line summary)."""
    for cell in nb.cells:
        if cell.cell_type != "markdown" or _is_nav(cell):
            continue
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("# "):
                rest = [x.strip() for x in lines[i + 1:] if x.strip() and not x.lstrip().startswith(("#", "-", "*", "<"))]
                return line[2:].strip(), (rest[0] if rest else "")
    return "", ""


def nav_source(prev: tuple[str, str] | None, nxt: tuple[str, str] | None) -> str:
    parts = [f"< [{prev[1]}]({prev[0]})" if prev else "", "[Contents](../README.md#notebooks)",
             f"[{nxt[1]}]({nxt[0]}) >" if nxt else ""]
    return MARKER + "\n" + " | ".join(p for p in parts if p)


def with_nav(nb, source: str):
    """Put `source` in the first and last cell, reusing existing navigation (or empty) cells."""
    cells = list(nb.cells)
    if not cells or not _is_nav(cells[0]):
        cells.insert(0, nbformat.v4.new_markdown_cell(source, id="nav-top"))
    if len(cells) == 1 or not _is_nav(cells[-1]):
        cells.append(nbformat.v4.new_markdown_cell(source, id="nav-bottom"))
    cells[0].source = cells[-1].source = source
    nb.cells = cells
    return nb


def readme_section(entries: list[tuple[str, str, str]]) -> str:
    lines = [README_START]
    lines += [f"- [{title}](notebooks/{name})" + (f": {blurb}" if blurb else "") for name, title, blurb in entries]
    return "\n".join(lines + [README_END])


def plan(root: Path = ROOT) -> dict[Path, str]:
    """Path -> the text it should have, for every file whose text would change."""
    paths = notebooks(root / "notebooks")
    books = {p: nbformat.read(p, as_version=4) for p in paths}
    info = {}
    for p, nb in books.items():
        title, blurb = title_and_blurb(nb)
        if not title:
            raise SystemExit(f"{p}: no '# ' title heading found; start the notebook with a '# NN · Title' cell.")
        info[p] = (title, blurb)
    changes = {}
    for i, p in enumerate(paths):
        prev = (paths[i - 1].name, info[paths[i - 1]][0]) if i > 0 else None
        nxt = (paths[i + 1].name, info[paths[i + 1]][0]) if i + 1 < len(paths) else None
        old = nbformat.writes(books[p])
        new = nbformat.writes(with_nav(books[p], nav_source(prev, nxt)))
        if new != old:
            changes[p] = new + "\n" if not new.endswith("\n") else new
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if README_START in text and README_END in text:
            head, rest = text.split(README_START, 1)
            tail = rest.split(README_END, 1)[1]
            entries = [(p.name, *info[p]) for p in paths]
            new_text = head + readme_section(entries) + tail
            if new_text != text:
                changes[readme] = new_text
    return changes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if anything is stale; write nothing")
    parser.add_argument("--root", type=Path, default=ROOT, help="the project folder (default: this repository)")
    args = parser.parse_args(argv)
    changes = plan(args.root)
    if args.check:
        for path in changes:
            print(f"stale navigation: {path.relative_to(args.root)} (run `python tools/make_nav.py`)")
        return 1 if changes else 0
    for path, text in changes.items():
        path.write_text(text)
        print(f"updated {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
