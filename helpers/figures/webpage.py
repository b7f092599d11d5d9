"""The one writer of self-contained web pages: the 144-head page and the class report.

Every page this project writes follows the same rules, kept here once:
- everything inline (script, styles, data, pictures as data: URLs), so it opens from a USB
  stick or `file://` and asks no host for anything;
- a strict Content-Security-Policy: `default-src 'none'`, and the page's own script allowed by
  its sha256 hash, so no other script (an injected one, `eval`) can run;
- data travels as JSON in `<script type="application/json">`, escaped so no text in it can
  close the tag; every text the page shows from data is put in as text by its script, or
  escaped with `text()` when it is written into the HTML here;
- the file appears whole or not at all (`core.files.atomic_write`).

    text = fill(template, {"__TITLE__": text("My page"), "__DATA__": script_json(data)})
    write_page(text, page_path("report", folder="figures"))   # -> figures/report.html
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

from ..core.files import atomic_write
from .export import check_folder, check_plain_name

CSP_MARKER = "__CSP__"  # where a template takes its Content-Security-Policy
INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)  # a script the page runs (no type, no src)
MARKER = re.compile(r"__[A-Z][A-Z_]*__")


def text(value) -> str:
    """Any value as HTML text: `<`, `&` and quotes escaped, so it shows as written."""
    return html.escape(str(value), quote=True)


def script_json(data) -> str:
    """Data as JSON that is safe inside <script type="application/json">: no `<` survives, so
    `</script>` in a student's code or a model's name stays text."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return payload.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def read_script_json(page: str, element_id: str):
    """The JSON a page holds in <script id=element_id type="application/json"> (tests read pages back)."""
    found = re.search(rf'<script id="{re.escape(element_id)}" type="application/json">(.*?)</script>', page, re.S)
    if not found:
        raise ValueError(f"the page holds no <script id={element_id!r}> data; pass a page this project wrote.")
    return json.loads(found.group(1))


def script_hashes(page: str) -> list[str]:
    """The CSP source of each script the page runs: 'sha256-…' of its exact text."""
    return [f"'sha256-{base64.b64encode(hashlib.sha256(body.encode('utf-8')).digest()).decode()}'"
            for body in INLINE_SCRIPT.findall(page)]


def policy(page: str) -> str:
    """The Content-Security-Policy of a page: nothing from anywhere, its own scripts by hash,
    inline styles, pictures only as data: URLs."""
    scripts = " ".join(script_hashes(page)) or "'none'"
    return f"default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; img-src data:"


def fill(template: str, values: dict[str, str]) -> str:
    """The template with every marker replaced in ONE pass (a value holding a marker stays text),
    then its Content-Security-Policy computed from the scripts it ended with."""
    if template.count(CSP_MARKER) != 1:
        raise ValueError(f"the page template needs exactly one {CSP_MARKER} (in its Content-Security-Policy "
                         f"meta tag); it has {template.count(CSP_MARKER)}.")
    missing = set(MARKER.findall(template)) - set(values) - {CSP_MARKER}
    if missing:
        raise ValueError(f"the page template needs values for {sorted(missing)}; pass them to fill().")
    before, after = (MARKER.sub(lambda m: values[m.group()], half) for half in template.split(CSP_MARKER))
    return before + policy(before + after) + after


def page_path(name: str, folder: str | Path = "figures", example: str = "page") -> Path:
    """folder/name.html after checking both (call it before any slow work, so a typo costs nothing)."""
    name = check_plain_name(name[:-5] if isinstance(name, str) and name.endswith(".html") else name,
                            example=example)
    return check_folder(folder) / f"{name}.html"


def write_page(page: str, path: Path) -> Path:
    """Write the page whole or not at all (a kill mid-write leaves the old file); returns the path."""
    atomic_write(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    return path
