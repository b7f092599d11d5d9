"""Write the table of shipped models in data/README.md from data/models.json.

    python tools/data_readme.py          # rewrite the table
    python tools/data_readme.py --check  # exit 1 when the table is stale
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.core.catalog import DATA_DIR, manifest  # noqa: E402

README = DATA_DIR / "README.md"
START, END = "<!-- models:start -->", "<!-- models:end -->"


def table() -> str:
    rows = ["| file | what | size | held-out loss | sha256 | regenerate with |", "|---|---|---|---|---|---|"]
    for name, e in manifest().items():
        info = e["info"]
        rows.append(f"| `{e['file']}` | {info.get('note', name)} | {e['bytes'] / 1e6:.1f} MB | "
                    f"{info.get('held_out_loss', '')} | `{e['sha256']}` | `{e['command']}` |")
    return "\n".join(rows)


def rendered() -> str:
    text = README.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    if "--check" in sys.argv:
        stale = README.read_text() != rendered()
        print("data/README.md is stale: run python tools/data_readme.py" if stale else "data/README.md is up to date")
        sys.exit(1 if stale else 0)
    README.write_text(rendered())
