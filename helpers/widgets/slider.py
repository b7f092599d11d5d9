"""The head-count slider widget (notebook 04).

`HeadCountExplorer` wires two controls to the plain functions in headcount.py: a slider
over the trained head counts, and a second control that merges the trained 12-head
model's neighbouring heads into wider ones (a thought experiment on trained weights).

Each redraw changes the existing matplotlib artists and pastes back a cached background
(the colour bar never changes), so only the maps and their H0 … / L0 … labels are drawn;
a new sentence gives each kept grid its words (frame.new_sentence_in), no new figure.
A grid too small for readable words (12 heads) drops them, and its caption says so.
Titles and the sentence are HTML captions above the images: text is the slowest thing
Agg draws, and the browser draws HTML for free. Export builds fresh, titled figures.
"""

from __future__ import annotations

import html

import ipywidgets as W
from matplotlib.figure import Figure

from ..analysis import captions
from ..analysis.headcount import (HEAD_COUNTS, MERGE_SOURCE, SENTENCE, WIDTH, available_head_counts,
                                   check_divisor, check_head_count, head_shapes, load_variant, loss_by_heads,
                                   merged_loss, merged_maps)
from ..core.attention import attention_param_count
from ..core.evaluation import one_thread
from ..core.run import read_sentence, run_ids
from ..figures import slides
from ..figures.headcount_plots import LossPlot, plot_loss_vs_heads
from ..figures.mosaic import AllHeadsView
from ..figures.slide import slide_style
from .controls import VariantControls
from .frame import Frame, NamedImage, live_grid, new_sentence_in, show_png


class HeadCountExplorer(VariantControls):
    """A slider over the trained head counts, and a second one that merges heads-12's heads.

    Drive it from code or tests with set_heads(n), set_sentence(s), set_merge(k), export();
    the widgets call the same methods. A bad value shows one line and keeps the last good view.
    """

    load = staticmethod(load_variant)

    def __init__(self, sentence: str = SENTENCE, heads: int = 4, merge: int = 1, folder: str = "figures"):
        self.counts = available_head_counts()
        if not self.counts:
            raise FileNotFoundError("No heads-N model in data/; train them with `python -m helpers.train heads-12` …")
        self.heads, self.merge, self.folder = check_head_count(heads), merge, folder
        self.sentence, self._read = sentence, read_sentence(load_variant(self.heads), sentence)  # (tokens, ids)
        self._runs: dict = {}  # head count -> Run, and group size -> (tokens, maps), for this sentence
        self._merges: dict = {}
        self.run = self._run(self.heads)
        self.merge_tokens, self.merge_maps = self._merged(merge)
        self._grids: dict = {}  # ("maps" or "merge", number of heads) -> [view, frame, the tokens it shows]
        self.loss_plot = LossPlot(loss_by_heads(), self.heads)
        self.loss_frame = Frame(self.loss_plot.fig, [self.loss_plot.marker], self.DPI)  # only the ring moves
        self._build_widgets()
        for group_size in self.merge_slider.options:  # recorded for the shipped file; else an evaluation
            merged_loss(group_size)  # paid here once, so no merge move ever waits for one
        self._draw_heads()
        self._draw_merge(announce=False)  # the live line starts with the words of the grid at the top
        self._prepare()

    def _prepare(self) -> None:
        """Run and lay out every head count and merge group now, so that no first move of a slider
        waits for a model run or a first full draw (bench/bench_slider.py times the moves)."""
        for n in self.counts:
            self._grid("maps", self._run(n).attentions, self.run.tokens)[1].png()
        for group_size in self.merge_slider.options:
            self._grid("merge", self._merged(group_size)[1], self.merge_tokens)[1].png()
        self._grid("maps", self.run.attentions, self.run.tokens)  # the shown grids hold the shown maps again
        self._grid("merge", self.merge_maps, self.merge_tokens)

    def _build_widgets(self) -> None:
        self.sentence_box = self._sentence_box("the sentence every model reads (Enter to run it)")
        self.heads_slider = W.SelectionSlider(options=self.counts, value=self.heads, description="heads",
                                              continuous_update=False)
        self.merge_slider = W.SelectionSlider(options=[g for g in HEAD_COUNTS if MERGE_SOURCE % g == 0],
                                              value=self.merge, description="merge groups of",
                                              continuous_update=False, style={"description_width": "initial"})
        self.export_button = self._export_button("the three pictures")
        self.status, self.info, self.merge_info = W.HTML(), W.HTML(), W.HTML()
        self.maps_caption, self.merge_caption, self.live = W.HTML(), W.HTML(), W.HTML()
        self.maps_image = NamedImage(format="png")  # each shown at its own pixel size (views.show_png)
        self.loss_image = NamedImage(format="png")
        self.merge_image = NamedImage(format="png")
        self._wire({self.heads_slider: self.set_heads, self.merge_slider: self.set_merge},
                   {self.heads_slider: "heads-slider", self.merge_slider: "merge-slider", self.info: "heads-info",
                    self.maps_image: "heads-maps", self.merge_image: "merge-maps", self.status: "slider-status",
                    self.live: "slider-live", self.sentence_box: "sentence-box"},
                   {self.heads_slider: "which trained model: how many heads share the width of 96 (arrow keys)",
                    self.merge_slider: "merge the 12-head model's neighbouring heads in groups of this size"})
        caption = W.HTML("<b>Thought experiment on trained weights, not a trained model:</b> the trained "
                         "12-head model with neighbouring heads merged into wider ones (their query, key and "
                         "value slices side by side). Each merged head must do its group's jobs with one map.")
        self.widget = W.VBox([
            self.sentence_box, W.HBox([self.heads_slider, self.export_button]), self.status, self.live,
            self.maps_caption, self.maps_image,
            W.HBox([self.info, self.loss_image], layout=W.Layout(align_items="flex-start")),
            caption, self.merge_slider, self.merge_info, self.merge_caption, self.merge_image])

    def showing(self) -> str:
        return f"still showing heads-{self.heads}, merged in groups of {self.merge}, reading “{self.sentence}”"

    # --- the logic the controls call ---------------------------------------------------
    def set_heads(self, n_heads) -> bool:
        """Show the model trained with n_heads heads; False (and one line) for a bad value."""
        try:
            n = self._shipped(n_heads, check_head_count, lambda n: f"heads-{n}")
            run = self._run(n)  # a head count seen before answers without running the model
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.heads, self.run = n, run
        self._sync(self.heads_slider, n)
        self._draw_heads()
        return True

    def set_sentence(self, sentence) -> bool:
        """Read a new sentence with both the chosen model and the merged one."""
        try:  # the heads-N models share one vocabulary: tokenize once, then each model runs these ids once
            read = read_sentence(load_variant(self.heads), sentence)
            with one_thread():
                runs = {n: run_ids(load_variant(n), *read) for n in {self.heads, MERGE_SOURCE}}
                merged = merged_maps(load_variant(MERGE_SOURCE), runs[MERGE_SOURCE], self.merge)
        except (ValueError, FileNotFoundError) as err:
            self._sync(self.sentence_box, self.sentence)  # the box shows what the pictures show
            return self._fail(err)
        self.sentence, self._read, self.run = sentence, read, runs[self.heads]
        self.merge_tokens, self.merge_maps = merged
        self._runs, self._merges = runs, {self.merge: merged}
        self._sync(self.sentence_box, sentence)
        self._draw_heads(loss=False)  # the loss curve is the same for every sentence
        self._draw_merge(announce=False)  # the live line keeps the words of the grid at the top
        return True

    def set_merge(self, group_size) -> bool:
        """Merge heads-12's neighbouring heads in groups of group_size (1 = as trained)."""
        try:
            group_size = check_divisor(group_size, MERGE_SOURCE)  # np.int64(3) is 3 to the slider
            tokens, maps = self._merged(group_size)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.merge, self.merge_tokens, self.merge_maps = group_size, tokens, maps
        self._sync(self.merge_slider, group_size)
        self._draw_merge()
        return True

    def _shown_grids(self) -> list[tuple[str, object, list[str], str]]:
        """(file name, maps, tokens, title) of the two grids shown: the chosen model's and the merged one."""
        return [(f"heads_{self.heads}_maps", self.run.attentions, self.run.tokens, self.heads_title()),
                (f"heads_12_merged_by_{self.merge}", self.merge_maps, self.merge_tokens, self.merge_title())]

    def slide_captions(self) -> dict[str, str]:
        """One sentence per exported figure, computed from what it shows (alt text, speaker notes)."""
        words = {name: captions.all_heads_caption(maps, tokens, captions.zoom_head(maps, tokens)[0])
                 for name, maps, tokens, _ in self._shown_grids()}
        (maps, merged), loss = words, captions.loss_caption(self.loss_plot.losses)
        return {maps: words[maps], "loss_vs_heads": loss, merged: words[merged]}  # in the order they are shown

    def slide_figures(self) -> dict[str, tuple[Figure, tuple[float, float] | str]]:
        """Fresh, titled, projector-styled figures of the current views: name -> (figure, slide size).
        Up to 24 maps cannot carry 14-pt token labels on one slide, so each grid comes with its
        clearest head up close, labelled, beside it (the deck's all-heads slides do the same)."""
        with slide_style():
            grids = {name: (slides.all_heads_with_zoom(maps, tokens, *captions.zoom_head(maps, tokens),
                                                       title=slides.slide_title(title, tokens)), "16:9")
                     for name, maps, tokens, title in self._shown_grids()}
            (maps, merged), loss = grids, (plot_loss_vs_heads(self.loss_plot.losses, self.heads), "16:9")
            return {maps: grids[maps], "loss_vs_heads": loss, merged: grids[merged]}  # in the order they are shown

    # --- drawing: existing artists get new data, then one PNG each ----------------------
    def heads_title(self) -> str:
        n = self.heads
        return f"heads-{n}: {n} head{'s' * (n > 1)} of {WIDTH // n} numbers, both layers"

    def merge_title(self) -> str:
        g = self.merge
        G, d = MERGE_SOURCE // g, g * WIDTH // MERGE_SOURCE
        return (f"THOUGHT EXPERIMENT: heads-12 merged in groups of {g} → {G} head{'s' * (G > 1)} of {d} "
                f"(trained weights, not retrained)")

    def _caption(self, title: str, tokens, view: AllHeadsView) -> str:
        """The title and the sentence; when the maps are too small to carry readable words, says so."""
        text = f"<b>{html.escape(title)}</b><br>reading: <code>{html.escape(' '.join(tokens))}</code>"
        if not view.words_shown:
            text += ("<br><i>Too many maps to label each word readably: in every map the rows (queries) and "
                     "columns (keys) follow this sentence in order. <b>Export for slides</b> adds the clearest "
                     "head up close, with its words.</i>")
        return text

    def _merged(self, group_size: int):
        """(tokens, maps) of heads-12 merged in groups of group_size, once per sentence."""
        if group_size not in self._merges:
            with one_thread():
                self._merges[group_size] = merged_maps(load_variant(MERGE_SOURCE), self._run(MERGE_SOURCE), group_size)
        return self._merges[group_size]

    def _grid(self, which: str, maps, tokens) -> tuple[AllHeadsView, Frame]:
        """The live grid for this many heads (built on first use, then reused), holding `maps`."""
        key = (which, maps.shape[1])
        if key not in self._grids:
            self._grids[key] = [*live_grid(maps, tokens, self.DPI), tokens]
        view, frame, shown = self._grids[key]
        if shown != tokens:  # another sentence: the kept grid takes its words and is laid out again
            new_sentence_in(view, frame, maps, tokens)
            self._grids[key][2] = tokens
        else:
            view.update(maps)
        return view, frame

    # The grids now shown (tests and benchmarks look at them).
    maps_view = property(lambda self: self._grid("maps", self.run.attentions, self.run.tokens)[0])
    maps_frame = property(lambda self: self._grid("maps", self.run.attentions, self.run.tokens)[1])
    maps_fig = property(lambda self: self.maps_view.fig)
    merge_view = property(lambda self: self._grid("merge", self.merge_maps, self.merge_tokens)[0])
    merge_frame = property(lambda self: self._grid("merge", self.merge_maps, self.merge_tokens)[1])
    merge_fig = property(lambda self: self.merge_view.fig)

    def _draw_heads(self, loss: bool = True) -> None:
        view, frame = self._grid("maps", self.run.attentions, self.run.tokens)
        (l, h), _ = captions.zoom_head(self.run.attentions, self.run.tokens)  # the clearest head, named in words
        words = (captions.all_heads_caption(self.run.attentions, self.run.tokens) + " The clearest, "
                 + captions.head_caption(self.run.attentions[l, h], self.run.tokens, l, h))
        show_png(self.maps_image, frame, words=words)  # lays the grid out: view.words_shown is known after it
        self.maps_caption.value = self._caption(self.heads_title(), self.run.tokens, view)
        held_out = self.loss_plot.losses.get(self.heads)
        self._announce(f"{self.heads_title()}" + (f", held-out loss {held_out:.3f}" if held_out is not None else "")
                       + f". {words}")
        if loss:
            self.loss_plot.update(self.heads)
            show_png(self.loss_image, self.loss_frame, words=captions.loss_caption(self.loss_plot.losses))
        self.info.value = self._info_html()
        self.status.value = ""

    def _info_html(self) -> str:
        n, d, T = self.heads, WIDTH // self.heads, len(self.run.tokens)
        rows = "".join(f"<tr><td>{k}</td><td>{' × '.join(map(str, v))}</td></tr>"
                       for k, v in head_shapes(WIDTH, n, T).items())
        loss = self.loss_plot.losses.get(n)
        return (f"<b class='heads-readout'>{n} head{'s' * (n > 1)}</b> · head size = {WIDTH} / {n} = <b>{d}</b><br>"
                f"<table>{rows}</table>"
                f"attention parameters per layer: <b>{attention_param_count(WIDTH, n):,}</b> "
                f"(4·{WIDTH}² + 4·{WIDTH}, the same for every head count)<br>"
                + (f"held-out loss of heads-{n}: <b>{loss:.3f}</b>" if loss is not None else ""))

    def _draw_merge(self, announce: bool = True) -> None:
        g = self.merge
        G, d = MERGE_SOURCE // g, g * WIDTH // MERGE_SOURCE
        view, frame = self._grid("merge", self.merge_maps, self.merge_tokens)
        words = f"{self.merge_title()}. " + captions.all_heads_caption(self.merge_maps, self.merge_tokens)
        show_png(self.merge_image, frame, words=words)
        self.merge_caption.value = self._caption(self.merge_title(), self.merge_tokens, view)
        if announce:
            self._announce(words)
        trained = self.loss_plot.losses.get(G)
        self.merge_info.value = (
            f"12 heads of 8 → <b>{G} head{'s' * (G > 1)} of {d}</b>. Held-out loss with merged heads "
            f"(no retraining): <b>{merged_loss(g):.3f}</b>"
            + (f"; a model trained with {G} heads: {trained:.3f}" if trained is not None else ""))
        self.status.value = ""
