"""The key/value-head slider widget (notebook 07).

`KVHeadExplorer` wires a slider over the trained key/value head counts (1 … 12, always 12 query
heads) to the plain functions in analysis/kvheads.py: every query head's map, framed by the
key/value head its group shares, the held-out loss and list accuracy, the attention parameters per
layer and the KV cache per token, all updating together; built as the head-count slider (slider.py) is.
"""

from __future__ import annotations

import html

import ipywidgets as W
from matplotlib.figure import Figure
from traitlets import TraitError, validate

from ..analysis import captions
from ..analysis.kvheads import (
    D_HEAD,
    N_LAYER,
    N_QUERY_HEADS,
    SENTENCE,
    WIDTH,
    available_kv_counts,
    check_kv_count,
    group_of,
    kv_caption,
    kv_results,
    load_kv_variant,
    variant_name,
)
from ..core.evaluation import one_thread
from ..core.run import read_sentence, run_ids
from ..figures.kv_plots import (
    LABEL_COLOURS,
    KVPlot,
    grouped_heads_view,
    kv_slide,
    plot_kv_results,
)
from ..figures.slide import slide_style
from .controls import VariantControls
from .frame import Frame, NamedImage, fit_to_notebook, show_png


class CountSlider(W.SelectionSlider):
    """A SelectionSlider that, set in code to a value it does not offer (`slider.value = 5`), stays
    where it is and hands the value to `refused` (which shows one line) instead of raising a TraitError."""

    refused = None  # callable(value); None: refuse as ipywidgets does

    @validate("value")
    def _validate_value(self, proposal):
        try:
            return super()._validate_value(proposal)
        except TraitError:
            if self.refused is None:
                raise
            self.refused(proposal.value)
            return self.value


class KVHeadExplorer(VariantControls):
    """A slider over the key/value head counts of the kv-N variants.

    Drive it from code or tests with set_kv_heads(n), set_sentence(s), export(); the widgets call
    the same methods. A bad value shows one line and keeps the last good view.
    """

    load = staticmethod(load_kv_variant)

    def __init__(self, sentence: str = SENTENCE, kv_heads: int = 3, folder: str = "figures"):
        self.counts = available_kv_counts()
        if not self.counts:
            raise FileNotFoundError("No kv-N model in data/; train them with `python -m helpers.train kv-1` …")
        self.kv_heads, self.sentence, self.folder = check_kv_count(kv_heads), sentence, folder
        self._read = read_sentence(load_kv_variant(self.kv_heads), sentence)  # (tokens, ids): one vocabulary for all
        self.results = kv_results()
        self._runs: dict = {}  # kv count -> Run of the current sentence
        self._grids: dict = {}  # kv count -> (view, frame), for the current sentence
        self.run = self._run(self.kv_heads)
        self.plot = KVPlot(self.results, self.kv_heads)
        self.plot_frame = Frame(self.plot.fig, [m for m, _ in self.plot.markers], self.DPI)  # only the rings move
        self._build_widgets()
        for n in self.counts:  # run and lay out every setting now: no first move waits for a model run
            self._grid(n)[1].png()
        self._draw()

    def _build_widgets(self) -> None:
        self.sentence_box = self._sentence_box("the sentence every model reads (Enter to run it)")
        self.kv_slider = CountSlider(options=self.counts, value=self.kv_heads, description="key/value heads",
                                     continuous_update=False, style={"description_width": "initial"})
        self.kv_slider.refused = self.set_kv_heads  # `kv_slider.value = 5` in code: its one line, no TraitError
        self.export_button = self._export_button("the pictures")
        self.status, self.info, self.caption, self.live = W.HTML(), W.HTML(), W.HTML(), W.HTML()
        self.maps_image, self.plot_image = NamedImage(format="png"), NamedImage(format="png")
        self._wire({self.kv_slider: self.set_kv_heads},
                   {self.kv_slider: "kv-slider", self.info: "kv-info", self.maps_image: "kv-maps",
                    self.status: "kv-status", self.live: "kv-live"},
                   {self.kv_slider: "how many key/value heads the 12 query heads share (arrow keys)",
                    self.plot_image: "held-out loss and KV cache per token against key/value heads"})
        self.widget = W.VBox([self.sentence_box, W.HBox([self.kv_slider, self.export_button]), self.status,
                              self.live, self.caption, self.maps_image,
                              W.HBox([self.info, self.plot_image], layout=W.Layout(align_items="flex-start"))])

    def showing(self) -> str:
        return f"still showing {self.kv_heads} key/value heads reading “{self.sentence}”"

    # --- the logic the controls call -----------------------------------------------------------
    def set_kv_heads(self, n_kv_heads) -> bool:
        """Show the variant whose 12 query heads share n_kv_heads key/value heads; False for a bad value."""
        try:
            n = self._shipped(n_kv_heads, check_kv_count, variant_name)
            run = self._run(n)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.kv_heads, self.run = n, run
        self._sync(self.kv_slider, n)
        self._draw()
        return True

    def set_sentence(self, sentence) -> bool:
        """Read a new sentence with the shown variant (the others are run again when shown)."""
        try:  # the variants share one vocabulary: tokenize once, then each runs these ids when shown
            read = read_sentence(load_kv_variant(self.kv_heads), sentence)
            with one_thread():
                run = run_ids(load_kv_variant(self.kv_heads), *read)
        except (ValueError, FileNotFoundError) as err:
            self._sync(self.sentence_box, self.sentence)
            return self._fail(err)
        self.sentence, self._read, self.run = sentence, read, run
        self._runs, self._grids = {self.kv_heads: run}, {}
        self._sync(self.sentence_box, sentence)
        self._draw()
        return True

    def slide_figures(self) -> dict[str, tuple[Figure, str]]:
        """Fresh, projector-styled figures: the grid at this setting above the 12-head one, and the results."""
        with slide_style():
            other = 1 if self.kv_heads == N_QUERY_HEADS else N_QUERY_HEADS
            return {f"kv_heads_{self.kv_heads}_and_{other}": (kv_slide((self.kv_heads, other), self.sentence), "16:9"),
                    "kv_heads_results": (plot_kv_results(self.kv_heads), "16:9")}

    def slide_captions(self) -> dict[str, str]:
        """One sentence per exported figure, computed from what it shows."""
        other = 1 if self.kv_heads == N_QUERY_HEADS else N_QUERY_HEADS
        grid = kv_caption((self.kv_heads, other)) + " " + captions.all_heads_caption(self.run.attentions,
                                                                                     self.run.tokens)
        return {f"kv_heads_{self.kv_heads}_and_{other}": grid,
                "kv_heads_results": captions.loss_caption({n: r["held_out_loss"] for n, r in self.results.items()})}


    # --- drawing ------------------------------------------------------------------------------------
    def _grid(self, n: int):
        """The live grid of setting n, framed by its groups (built on first use, then reused)."""
        if n not in self._grids:
            run = self._run(n)
            view, boxes = grouped_heads_view(run.attentions, run.tokens, n, title=" ", token_labels=True)
            fit_to_notebook(view)
            frame = Frame(view.fig, [view.image, view.gaps, *view.ax.spines.values(), *boxes], self.DPI)
            self._grids[n] = (view, frame)
        return self._grids[n]

    maps_view = property(lambda self: self._grid(self.kv_heads)[0])
    maps_frame = property(lambda self: self._grid(self.kv_heads)[1])

    def _draw(self) -> None:
        view, frame = self._grid(self.kv_heads)
        words = kv_caption((self.kv_heads,)) + " " + captions.all_heads_caption(self.run.attentions, self.run.tokens)
        show_png(self.maps_image, frame, words=words)  # words: the picture's name for a screen reader
        self.caption.value = self._caption(view)
        self._announce(words)
        self.plot.update(self.kv_heads)
        show_png(self.plot_image, self.plot_frame)
        self.info.value = self._info_html()
        self.status.value = ""

    def _caption(self, view) -> str:
        n, g = self.kv_heads, N_QUERY_HEADS // self.kv_heads
        if g == 1:
            groups = "each query head has its own key and value head (GPT-2's multi-head attention)"
        else:
            spans = [f"<span style='color:{LABEL_COLOURS[j % 2]}'><b>H{j * g}–H{j * g + g - 1}</b></span>"
                     for j in range(n)]
            groups = f"each frame is one key/value head read by {g} query heads: " + ", ".join(spans)
        text = (f"<b>{variant_name(n)}: 12 query heads, {n} key/value head{'s' * (n > 1)}</b> · {groups}"
                f"<br>reading: <code>{html.escape(' '.join(self.run.tokens))}</code>")
        if not view.words_shown:
            text += ("<br><i>Too many maps to label each word: rows (queries) and columns (keys) follow the "
                     "sentence in order.</i>")
        return text

    def _info_html(self) -> str:
        n, r = self.kv_heads, self.results[self.kv_heads]
        full = self.results.get(N_QUERY_HEADS)
        saved = "" if full is None or n == N_QUERY_HEADS else \
            f" ({full['cache_bytes_per_token'] // r['cache_bytes_per_token']}× less than with 12)"
        example = group_of(N_QUERY_HEADS - 1, n)
        return (f"<b class='kv-readout'>{n} key/value head{'s' * (n > 1)}</b> · groups of {N_QUERY_HEADS // n} "
                f"query heads (H11 reads key/value head {example})<br>"
                f"held-out loss: <b>{r['held_out_loss']:.3f}</b> · list said again correctly: "
                f"<b>{r['list_accuracy']:.0%}</b><br>"
                f"attention parameters per layer: <b>{r['params_per_layer']:,}</b> "
                f"(W_K and W_V are {WIDTH} × {n * D_HEAD})<br>"
                f"KV cache per token: 2 × {N_LAYER} layers × {n} × {D_HEAD} × 2 bytes = "
                f"<b>{r['cache_bytes_per_token']:,} bytes</b>{saved}")
