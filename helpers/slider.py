"""The head-count slider widget (notebook 04).

`HeadCountExplorer` wires two controls to the plain functions in headcount.py: a slider
over the trained head counts, and a second control that merges the trained 12-head
model's neighbouring heads into wider ones (a thought experiment on trained weights).

Each redraw changes the existing matplotlib artists and pastes back a cached background
(the colour bar never changes), so only the maps and their H0 … / L0 … labels are drawn.
Titles and the sentence are HTML captions above the images: text is the slowest thing
Agg draws, and the browser draws HTML for free. Export builds fresh, titled figures.
"""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from .attention import attention_param_count
from .export import save_for_slides, slide_style
from .headcount import (HEAD_COUNTS, MERGE_SOURCE, SENTENCE, WIDTH, LossPlot, available_head_counts,
                        check_head_count, head_shapes, load_variant, loss_by_heads, merged_loss, merged_maps,
                        plot_loss_vs_heads)
from .run import run_sentence
from .views import AllHeadsView, Frame, plot_all_heads


def fit_top_left(ax, rows: int, cols: int) -> None:
    """Show a rows × cols image at equal aspect in the top-left of a fixed axes box.

    The box never moves, so no layout pass is needed when the head count changes the
    mosaic's shape; the labels on the top and left edges stay next to the image.
    """
    pos, (fig_w, fig_h) = ax.get_position(), ax.figure.get_size_inches()
    box = (pos.width * fig_w) / (pos.height * fig_h)  # width / height of the axes box
    x_span, y_span = (cols, cols / box) if cols / rows > box else (rows * box, rows)
    ax.set_xlim(-0.5, x_span - 0.5)
    ax.set_ylim(y_span - 0.5, -0.5)  # rows grow downwards, as in the maps


def mosaic_size(view) -> tuple[int, int]:
    """Rows and columns of an AllHeadsView's mosaic image."""
    L, H, T, _ = view.shape
    return L * (T + 1) - 1, H * (T + 1) - 1


def live_grid(maps, dpi: int) -> tuple[AllHeadsView, Frame]:
    """An all-heads grid for a widget, laid out once, and the Frame that renders it.

    Only the maps' axes redraw (its image and edge labels); the colour bar is background."""
    fig = Figure(figsize=(10, 3.3), layout="constrained")
    view = AllHeadsView(maps, ax=fig.add_subplot())
    view.title.set_text(" ")  # keeps room for the H0 … labels above the grid
    view.ax.set_aspect("auto")
    view.ax.spines[:].set_visible(False)
    fig.draw_without_rendering()  # lay out once, then keep every axes where it is
    fig.set_layout_engine("none")
    return view, Frame(fig, [view.ax], dpi)


class HeadCountExplorer:
    """A slider over the trained head counts, and a second one that merges heads-12's heads.

    Drive it from code or tests with set_heads(n), set_sentence(s), set_merge(k), export();
    the widgets call the same methods. A bad value shows one line and keeps the last good view.
    """

    DPI = 80

    def __init__(self, sentence: str = SENTENCE, heads: int = 4, merge: int = 1, folder: str = "figures"):
        import ipywidgets as W

        self.counts = available_head_counts()
        if not self.counts:
            raise FileNotFoundError("No heads-N model in data/; train them with `python -m helpers.train heads-12` …")
        self.heads, self.merge, self.sentence, self.folder = check_head_count(heads), merge, sentence, folder
        self.run = run_sentence(load_variant(self.heads), sentence)
        self.merge_tokens, self.merge_maps = merged_maps(load_variant(MERGE_SOURCE), sentence, merge)
        self.maps_view, self.maps_frame = live_grid(self.run.attentions, self.DPI)
        self.merge_view, self.merge_frame = live_grid(self.merge_maps, self.DPI)
        self.maps_fig, self.merge_fig = self.maps_view.fig, self.merge_view.fig
        self.loss_plot = LossPlot(loss_by_heads(), self.heads)
        self.loss_frame = Frame(self.loss_plot.fig, [self.loss_plot.marker], self.DPI)  # only the ring moves
        self._build_widgets(W)
        for group_size in self.merge_slider.options:  # each costs a held-out evaluation (~0.4 s), cached:
            merged_loss(group_size)  # paid here once, so no merge move ever waits for one
        self._draw_heads()
        self._draw_merge()

    def _build_widgets(self, W) -> None:
        self._syncing = False
        self.sentence_box = W.Text(value=self.sentence, description="sentence", continuous_update=False,
                                   layout=W.Layout(width="95%"))
        self.heads_slider = W.SelectionSlider(options=self.counts, value=self.heads, description="heads",
                                              continuous_update=False)
        self.merge_slider = W.SelectionSlider(options=[g for g in HEAD_COUNTS if MERGE_SOURCE % g == 0],
                                              value=self.merge, description="merge groups of",
                                              continuous_update=False, style={"description_width": "initial"})
        self.export_button = W.Button(description="Export for slides", icon="download")
        self.status, self.info, self.merge_info = W.HTML(), W.HTML(), W.HTML()
        self.maps_caption, self.merge_caption = W.HTML(), W.HTML()
        px = lambda fig: W.Layout(width=f"{round(fig.get_figwidth() * self.DPI)}px", max_width="100%",
                                  height="auto", flex="none")  # natural size: sharp, never stretched
        self.maps_image = W.Image(format="png", layout=px(self.maps_fig))
        self.loss_image = W.Image(format="png", layout=px(self.loss_plot.fig))
        self.merge_image = W.Image(format="png", layout=px(self.merge_fig))
        for widget, name in ((self.heads_slider, "heads-slider"), (self.merge_slider, "merge-slider"),
                             (self.info, "heads-info"), (self.maps_image, "heads-maps"),
                             (self.merge_image, "merge-maps"), (self.status, "slider-status")):
            widget.add_class(name)  # names for the browser tests (and for styling)
        self.sentence_box.observe(lambda c: self._from_widget(self.set_sentence, c), "value")
        self.heads_slider.observe(lambda c: self._from_widget(self.set_heads, c), "value")
        self.merge_slider.observe(lambda c: self._from_widget(self.set_merge, c), "value")
        self.export_button.on_click(lambda _: self.export())
        caption = W.HTML("<b>Thought experiment on trained weights, not a trained model:</b> the trained "
                         "12-head model with neighbouring heads merged into wider ones (their query, key and "
                         "value slices side by side). Each merged head must do its group's jobs with one map.")
        self.widget = W.VBox([
            self.sentence_box, W.HBox([self.heads_slider, self.export_button]), self.status,
            self.maps_caption, self.maps_image,
            W.HBox([self.info, self.loss_image], layout=W.Layout(align_items="flex-start")),
            caption, self.merge_slider, self.merge_info, self.merge_caption, self.merge_image])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _from_widget(self, setter, change) -> None:
        if not self._syncing:
            setter(change["new"])

    def _sync(self, control, value) -> None:
        self._syncing = True
        try:
            control.value = value
        finally:
            self._syncing = False

    def _fail(self, err: Exception) -> bool:
        self.status.value = f"<span style='color:#D55E00'>⚠ {html.escape(str(err))}</span>"
        return False

    # --- the logic the controls call ---------------------------------------------------
    def set_heads(self, n_heads) -> bool:
        """Show the model trained with n_heads heads; False (and one line) for a bad value."""
        try:
            n = check_head_count(n_heads)
            if n not in self.counts:
                raise ValueError(f"heads-{n} is not shipped in data/; choose one of {self.counts}.")
            run = run_sentence(load_variant(n), self.sentence)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.heads, self.run = n, run
        self._sync(self.heads_slider, n)
        self._draw_heads()
        return True

    def set_sentence(self, sentence) -> bool:
        """Read a new sentence with both the chosen model and the merged one."""
        try:
            run = run_sentence(load_variant(self.heads), sentence)
            tokens, maps = merged_maps(load_variant(MERGE_SOURCE), sentence, self.merge)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.sentence, self.run, self.merge_tokens, self.merge_maps = sentence, run, tokens, maps
        self._sync(self.sentence_box, sentence)
        self._draw_heads()
        self._draw_merge()
        return True

    def set_merge(self, group_size) -> bool:
        """Merge heads-12's neighbouring heads in groups of group_size (1 = as trained)."""
        try:
            if group_size not in self.merge_slider.options or isinstance(group_size, bool):
                raise ValueError(f"Cannot merge 12 heads in groups of {group_size!r}; choose one of "
                                 f"{', '.join(map(str, self.merge_slider.options))}.")
            tokens, maps = merged_maps(load_variant(MERGE_SOURCE), self.sentence, group_size)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.merge, self.merge_tokens, self.merge_maps = group_size, tokens, maps
        self._sync(self.merge_slider, group_size)
        self._draw_merge()
        return True

    def slide_figures(self) -> dict[str, tuple[Figure, tuple[float, float] | str]]:
        """Fresh, titled, projector-styled figures of the current views: name -> (figure, slide size)."""
        with slide_style():
            return {
                f"heads_{self.heads}_maps": (plot_all_heads(
                    self.run.attentions, title=f"{self.heads_title()}\nreading: {' '.join(self.run.tokens)}"), "16:9"),
                "loss_vs_heads": (plot_loss_vs_heads(self.loss_plot.losses, self.heads), (6.0, 4.5)),
                f"heads_12_merged_by_{self.merge}": (plot_all_heads(
                    self.merge_maps, title=f"{self.merge_title()}\nreading: {' '.join(self.merge_tokens)}"), "16:9"),
            }

    def export(self, folder=None) -> list:
        """Write the three figures as PNG, SVG and PDF for slides; return the paths."""
        folder = self.folder if folder is None else folder
        try:
            paths = []
            for name, (fig, size) in self.slide_figures().items():
                paths += save_for_slides(fig, name, folder, size=size)
        except (ValueError, OSError) as err:
            self._fail(err)
            return []
        self.status.value = f"Saved {len(paths)} files in {html.escape(str(paths[0].parent))}/"
        return paths

    # --- drawing: existing artists get new data, then one PNG each ----------------------
    def heads_title(self) -> str:
        n = self.heads
        return f"heads-{n}: {n} head{'s' * (n > 1)} of {WIDTH // n} numbers, both layers"

    def merge_title(self) -> str:
        g = self.merge
        G, d = MERGE_SOURCE // g, g * WIDTH // MERGE_SOURCE
        return (f"THOUGHT EXPERIMENT: heads-12 merged in groups of {g} → {G} head{'s' * (G > 1)} of {d} "
                f"(trained weights, not retrained)")

    def _caption(self, title: str, tokens) -> str:
        return f"<b>{html.escape(title)}</b><br>reading: <code>{html.escape(' '.join(tokens))}</code>"

    def _show(self, view, frame, maps) -> bytes:
        """New maps into the existing image, refit the box, one PNG."""
        view.update(maps)
        fit_top_left(view.ax, *mosaic_size(view))
        return frame.png()

    def _draw_heads(self) -> None:
        self.maps_image.value = self._show(self.maps_view, self.maps_frame, self.run.attentions)
        self.maps_caption.value = self._caption(self.heads_title(), self.run.tokens)
        self.loss_plot.update(self.heads)
        self.loss_image.value = self.loss_frame.png()
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

    def _draw_merge(self) -> None:
        g = self.merge
        G, d = MERGE_SOURCE // g, g * WIDTH // MERGE_SOURCE
        self.merge_image.value = self._show(self.merge_view, self.merge_frame, self.merge_maps)
        self.merge_caption.value = self._caption(self.merge_title(), self.merge_tokens)
        trained = self.loss_plot.losses.get(G)
        self.merge_info.value = (
            f"12 heads of 8 → <b>{G} head{'s' * (G > 1)} of {d}</b>. Held-out loss with merged heads "
            f"(no retraining): <b>{merged_loss(g):.3f}</b>"
            + (f"; a model trained with {G} heads: {trained:.3f}" if trained is not None else ""))
        self.status.value = ""
