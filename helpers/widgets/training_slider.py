"""The training-step slider (notebook 08): every head's map at a snapshot of training, each head's scores,
and a marker on the curves. Thin, like slider.py: the numbers come from analysis/formation.py, the
pictures from figures/; every step's maps are computed once at the start, so a move only swaps the
mosaic's data and the curves' marker lines (blitting, widgets/frame.py).
"""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from ..analysis.captions import all_heads_caption
from ..analysis.formation import SENTENCE, check_curves, formation, maps_along, shipped_curves
from ..core.arguments import of_type, whole_number
from ..core.snapshots import SnapshotRun, load_snapshots
from ..figures import slides
from ..figures.formation_plots import FormationCurves, curves_words, plot_formation_curves, step_grid_title
from ..figures.slide import slide_style
from .controls import SyncedControls
from .frame import Frame, NamedImage, live_grid, show_png


class TrainingStepExplorer(SyncedControls):
    """A slider over the snapshot steps of one training run. Drive it from code or tests with
    set_step(step) and export(); the slider calls the same method. A bad step shows one line."""

    DPI = 80

    def __init__(self, run: SnapshotRun | None = None, curves: dict | None = None, sentence: str = SENTENCE,
                 step: int | None = None, folder: str = "figures"):
        self.snapshots = load_snapshots() if run is None else of_type(run, "run", SnapshotRun,
                                                                        'what H.load_snapshots("induction") returns')
        self.curves = shipped_curves() if curves is None else check_curves(curves)
        self.found = formation(self.curves)
        self.steps, self.folder, self.sentence = list(self.snapshots.steps), folder, sentence
        self.step = self.steps[-1] if step is None else self._snapshot_step(step)
        self.tokens, self.maps = maps_along(self.snapshots, sentence)  # once: no move waits for a model
        self.view, self.frame = live_grid(self.maps[self.step], self.tokens, self.DPI)  # only the maps redraw
        self.plot = FormationCurves(self.curves, self.found, self.step, size=(9, 5.6))
        self.curve_frame = Frame(self.plot.fig, self.plot.markers, self.DPI)
        self._build_widgets()
        self.set_step(self.step)

    def _build_widgets(self) -> None:
        self.slider = W.SelectionSlider(options=self.steps, value=self.step, description="training step",
                                        continuous_update=False, style={"description_width": "initial"},
                                        layout=W.Layout(width="600px"))
        self.export_button = self._export_button("the maps and the curves of this step")
        self.status, self.caption, self.scores, self.live = W.HTML(), W.HTML(), W.HTML(), W.HTML()
        self.maps_image, self.curve_image = NamedImage(format="png"), NamedImage(format="png")
        self._wire({self.slider: self.set_step},
                   {self.slider: "step-slider", self.maps_image: "step-maps", self.curve_image: "step-curves",
                    self.scores: "step-scores", self.status: "slider-status", self.live: "step-live"},
                   {self.slider: "which snapshot of training to show: its step (arrow keys)"})
        self.widget = W.VBox([W.HBox([self.slider, self.export_button]), self.status, self.live, self.caption,
                              self.maps_image, W.HBox([self.curve_image, self.scores])])

    def showing(self) -> str:
        return f"still showing step {self.step}"

    def _snapshot_step(self, step) -> int:
        """`step` as an int when a snapshot was kept there, else one line (a float or text is named as such)."""
        step = whole_number(step, "step", valid=f"choose one of the snapshot steps {self.steps}")
        if step not in self.steps:
            raise ValueError(f"No snapshot at step {step}; choose one of {self.steps}.")
        return step

    def set_step(self, step) -> bool:
        """Show the snapshot at `step` (one of self.steps); False and one line for any other value."""
        try:
            self.step = self._snapshot_step(step)
        except ValueError as err:
            return self._fail(err)
        self._sync(self.slider, self.step)
        self.view.update(self.maps[self.step])
        maps_words, curve_words = self._words()
        show_png(self.maps_image, self.frame, words=maps_words)
        self.plot.move(self.step)
        show_png(self.curve_image, self.curve_frame, words=curve_words)
        self.caption.value = (f"<b>{html.escape(step_grid_title(self.step, self.snapshots.tokens_per_step))}</b>"
                              f" reading <code>{html.escape(' '.join(self.tokens))}</code>")
        self.scores.value = self._scores_html()
        self.status.value = ""
        self._say_what_is_shown()
        return True

    def _words(self) -> tuple[str, str]:
        """The pictures' words (their accessible names): the grid's and the curves', from this step's numbers."""
        at, c = self.steps.index(self.step), self.curves
        best = tuple(int(i) for i in np.unravel_index(np.argmax(c["induction"][at]), c["induction"][at].shape))
        return (f"{step_grid_title(self.step, self.snapshots.tokens_per_step)}. "
                + all_heads_caption(self.maps[self.step], self.tokens, highlight=best),
                f"The marker is at step {self.step}. " + curves_words(c, self.found))

    def _say_what_is_shown(self) -> None:
        """The live line, from this step's numbers."""
        at, c = self.steps.index(self.step), self.curves
        self._announce(f"Step {self.step} of {self.steps[-1]}: held-out loss {c['loss'][at]:.3f}, lists said "
                       f"again {c['list_accuracy'][at]:.0%}, best induction score {c['induction'][at].max():.2f}.")

    def _scores_html(self) -> str:
        """Each head's previous-word and induction scores at this step, the best of each in bold."""
        at = self.steps.index(self.step)
        rows = []
        for key, label in (("previous_list", "previous word"), ("induction", "induction")):
            table = self.curves[key][at]  # (L, H)
            best = np.unravel_index(np.argmax(table), table.shape)
            for layer in range(table.shape[0]):
                cells = "".join(f"<td>{'<b>' if (layer, h) == best else ''}{v:.2f}{'</b>' if (layer, h) == best else ''}"
                                f"</td>" for h, v in enumerate(table[layer]))
                rows.append(f"<tr><th>{label} L{layer}</th>{cells}</tr>")
        heads = "".join(f"<th>H{h}</th>" for h in range(self.curves["induction"].shape[2]))
        c = self.curves
        return (f"<table class='step-score-table'><tr><th scope='col'>score, layer</th>{heads}</tr>{''.join(rows)}</table>"
                f"held-out loss <b>{c['loss'][at]:.3f}</b> · lists said again <b>{c['list_accuracy'][at]:.0%}</b>"
                f" · in-context score <b>{c['in_context'][at]:+.3f}</b>")

    def slide_captions(self) -> dict[str, str]:
        from_words = getattr(self.plot.fig, "helpers_words", {}).get(self.plot.fig, "")
        return {f"maps_at_step_{self.step}": f"Every head's map at training step {self.step}.",
                "formation_curves": from_words}

    def slide_figures(self) -> dict[str, tuple[Figure, str]]:
        """Fresh, titled, projector-styled figures of the step shown: the grid with its best induction
        head up close, and the curves with the marker."""
        head = self.found["head"] or (1, 0)
        with slide_style():
            grid = slides.all_heads_with_zoom(self.maps[self.step], self.tokens, head,
                                              "induction", title=slides.slide_title(step_grid_title(
                                                  self.step, self.snapshots.tokens_per_step), self.tokens))
            return {f"maps_at_step_{self.step}": (grid, "16:9"),
                    "formation_curves": (plot_formation_curves(self.curves, self.found, self.step), "16:9")}
