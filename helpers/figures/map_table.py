"""An attention map as a table a screen reader can read: words as row and column headers.

    H.map_table(run.attentions[1, 4], run.tokens)   # shown as an HTML table in a notebook

Each row is a query word, each column a key word, weights to two decimals, and the largest weight
of each row in bold with "(largest)" after it, so it is found by ear as well as by eye.
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np

from ..analysis.captions import head_caption
from .common import as_maps


class MapTable:
    """The table's HTML (`.html`), shown as a table by a notebook; `.rows` holds the same as text."""

    def __init__(self, html_text: str, rows: list[list[str]]):
        self.html, self.rows = html_text, rows

    def _repr_html_(self) -> str:
        return self.html


def map_table(attn, tokens: Sequence[str], caption: str | None = None) -> MapTable:
    """The map (T, T) as an HTML table: <th scope> headers, two decimals, each row's largest marked."""
    a = np.nan_to_num(as_maps(attn, 2))  # (T, T): a hidden (NaN) column reads as 0.00
    tokens = [str(t) for t in tokens]
    if len(tokens) != a.shape[0]:
        raise ValueError(f"The map has {a.shape[0]} rows but {len(tokens)} tokens were given; pass the tokens "
                         f"the map was computed from.")
    caption = caption or head_caption(a, tokens)
    head = "".join(f"<th scope='col'>{html.escape(t)}</th>" for t in tokens)
    rows, body = [], []
    for q, word in enumerate(tokens):
        top = int(a[q].argmax())
        cells = [f"{w:.2f}" + (" (largest)" if k == top else "") for k, w in enumerate(a[q])]
        rows.append([word, *cells])
        tds = "".join(f"<td><strong>{c}</strong></td>" if k == top else f"<td>{c}</td>" for k, c in enumerate(cells))
        body.append(f"<tr><th scope='row'>{html.escape(word)}</th>{tds}</tr>")
    text = (f"<table class='map-table'><caption>{html.escape(caption)} Rows: the word that reads (query); "
            f"columns: the word read (key).</caption><thead><tr><th scope='col'>query \\ key</th>{head}</tr>"
            f"</thead><tbody>{''.join(body)}</tbody></table>")
    return MapTable(text, rows)
