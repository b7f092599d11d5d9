"""The knock-out explorer of notebook 06: pick heads to remove and watch the next-word bars change."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..analysis.captions import bars_words
from ..analysis.knockout import MODES, cached_head_means, check_mode, check_head_list, head_label, next_word_change, parse_head
from ..core.arguments import whole_number
from ..core.evaluation import one_thread
from ..core.model import LanguageModel
from ..core.run import run_sentence
from ..figures.common import new_figure
from ..figures.knockout_plots import draw_bars
from ..figures.slide import slide_style
from .controls import SyncedControls, live_html
from .frame import Frame, NamedImage, show_png


class KnockoutExplorer(SyncedControls):
    """Pick heads to remove; the prediction bars redraw. Use .widget in a notebook."""

    def __init__(self, lm: LanguageModel, sentence: str, heads=(), mode: str = "zero", top_k: int = 5,
                 folder: str = "figures"):
        import ipywidgets as w

        check_mode(mode)
        self.lm, self.folder = lm, folder
        self.top_k = whole_number(top_k, "top_k", low=1, high=lm.config.vocab_size, example="5")
        cfg = lm.config
        chosen = [head_label(*h) for h in check_head_list(lm, heads)]
        # The chosen heads head the list, so they are in view when it opens (not 3 of 4 below the fold).
        labels = chosen + [head_label(l, h) for l in range(cfg.n_layer) for h in range(cfg.n_head)
                           if head_label(l, h) not in chosen]
        self.sentence = w.Text(value=sentence, description="sentence", continuous_update=False,
                               layout=w.Layout(width="95%"))
        self.heads = w.SelectMultiple(options=labels, value=chosen, rows=16, description="knock out")
        cached_head_means(lm)  # computed once now, so switching to "mean" answers at once
        self.mode = w.ToggleButtons(options=list(MODES), value=mode, description="mode")
        self.clear = w.Button(description="clear")
        self.message = w.Label(value="")
        self.status = w.HTML()  # export's line: where the files went, or why none were written
        self.export_button = self._export_button("the bars")
        self.live = w.HTML()  # what the bars now show, in words: an ARIA live region
        self.image = NamedImage(format="png")
        self.change = None  # the last good next_word_change
        self.figure = new_figure(figsize=(7.5, 3.8))
        self._before: dict = {}  # sentence -> next-word probabilities with all heads
        self._shown: dict = {}  # (sentence, heads, mode) -> (change, PNG), for the current sentence
        self.frame = Frame(self.figure, dpi=96)  # the widgets' shared Agg-to-PNG path
        self._wire({self.sentence: self.update, self.heads: self.update, self.mode: self.update},
                   {self.heads: "knockout-heads", self.mode: "knockout-mode", self.live: "knockout-live",
                    self.image: "knockout-bars", self.message: "knockout-message"},
                   {self.sentence: "the sentence whose next word is predicted (Enter to run it)",
                    self.heads: "the heads to remove: arrow keys move, Shift or Ctrl with arrows picks several",
                    self.mode: "zero: a removed head adds nothing; mean: it adds its average output",
                    self.clear: "put every head back"})
        self.export_button.add_class("knockout-export")
        self.clear.on_click(lambda _: setattr(self.heads, "value", ()))
        self.widget = w.VBox([self.sentence, w.HBox([self.heads, w.VBox([self.mode, self.clear,
                                                                          self.export_button])]),
                              self.message, self.status, self.live, self.image])
        self.update()
        with one_thread():  # the other mode for the chosen heads, ready before the class asks for it
            other = MODES[1 - MODES.index(self.mode.value)]
            key = (self.sentence.value, tuple(self.knocked()), other)
            if self.change is not None and key not in self._shown:
                self._shown[key] = self._draw(self.knocked(), self.sentence.value, other)

    def showing(self) -> str:
        shown = self.change["sentence"] if self.change else None
        return f"still showing “{shown}”" if shown else "nothing shown yet"

    def slide_figures(self) -> dict[str, tuple[Figure, str]]:
        """A fresh, projector-styled figure of the bars shown now (export() writes it)."""
        if self.change is None:
            raise ValueError("no bars to export yet: type a sentence the model can read first.")
        with slide_style():
            fig = draw_bars(self.change, self.change["sentence"], self.change["heads"], self.change["mode"])
        return {"knockout_bars": (fig, "16:9")}

    def slide_captions(self) -> dict[str, str]:
        removed = ", ".join(head_label(*h) for h in self.change["heads"]) or "nothing"
        return {"knockout_bars": bars_words(self.change, self.change["sentence"], removed, self.change["mode"])}

    def knocked(self) -> list[tuple[int, int]]:
        return [parse_head(label) for label in self.heads.value]

    def update(self, _value=None) -> None:
        """Redraw for the current controls (a control calls it with its new value, which it reads itself);
        bad input shows one line and keeps the last view."""
        with one_thread():
            self._update()

    def _update(self) -> None:
        try:
            heads, text = self.knocked(), self.sentence.value
            key = (text, tuple(heads), self.mode.value)
            if key not in self._shown:
                self._shown[key] = self._draw(heads, text)
        except ValueError as err:
            shown = self.change["sentence"] if self.change else None
            if shown is not None and self.sentence.value != shown:
                self._sync(self.sentence, shown)  # the box shows what the bars show; nothing to redraw
            self.message.value = f"⚠ {err} (still showing “{shown}”)" if shown else f"⚠ {err}"
            return
        self.change, png = self._shown[key]
        removed = ", ".join(head_label(*h) for h in heads) or "none"
        self.message.value = f"{len(heads)} head(s) removed ({self.mode.value}): {removed}"
        words = bars_words(self.change, text, removed if heads else "nothing", self.mode.value)
        self.live.value = live_html(words)
        show_png(self.image, self.frame, png, words)

    def _draw(self, heads, text: str, mode: str | None = None) -> tuple[dict, bytes]:
        """The change and its bars as PNG for one (sentence, heads, mode); kept, so going back is instant."""
        mode = mode or self.mode.value
        if text not in self._before:  # the all-heads run depends only on the sentence: once per sentence
            self._before = {text: run_sentence(self.lm, text).next_word_probs()}
            self._shown.clear()
        change = dict(next_word_change(self.lm, text, heads, mode, self.top_k, before=self._before[text]),
                      sentence=text, heads=list(heads), mode=mode)  # what the bars show (export)
        self.figure.clear()
        # fixed margins instead of a layout engine (a redraw costs a third of the time); room below
        # for the x label and the legend that draw_bars puts under the bars
        draw_bars(change, text, heads, mode, self.figure.add_axes((0.14, 0.27, 0.83, 0.65)))
        self.frame.invalidate()  # new bars: draw the whole figure
        return change, self.frame.png()

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
