"""The 144-heads explorer: type a sentence, pick a head, export the views for slides.

The widget is thin. Its logic lives in plain methods that tests call without a browser:
`set_sentence(text)`, `select(layer, head)`, `export()` and `export_web_page()`. Attention
comes from `run_sentence` (the explorer never computes it), and redraws change the
existing matplotlib artists, then show the figures as PNG bytes in Image widgets,
which works the same in JupyterLab, Voilà and a headless notebook run (no ipympl).

Each change redraws only what it changed: another query word only the links; another head
the zoom, the links and the grid's highlight (the grid's maps stay cached pixels); a new
sentence only the words of the zoom and the links over their kept axes (their layouts too when
the words need it), and the grid's maps (its labels too when the length changed).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import ipywidgets as widgets

from ..analysis import captions
from ..core.arguments import is_whole_number, whole_number
from ..core.evaluation import one_thread
from ..core.model import LanguageModel
from ..core.run import Run, run_sentence
from ..figures.export import save_set_for_slides
from ..figures.map_table import map_table
from ..figures.mosaic import AllHeadsView, plot_all_heads
from ..figures.page import export_page
from ..figures.slide import slide_style
from ..figures.views import HeadView, TokenLinksView, links_height, plot_head, plot_token_links
from .controls import SyncedControls
from .frame import Frame, NamedImage, show_png

ALL_WORDS = ("all words", -1)  # the query dropdown's first choice: every word's links


class Explorer(SyncedControls):
    """All heads of `lm` reading one sentence, one head zoomed in, and an export button.

    `explorer.widget` is the ipywidgets box; a notebook shows it by ending a cell with
    the explorer itself.
    """

    def __init__(self, lm: LanguageModel, sentence: str = "I like to draw", layer: int = 0, head: int = 0,
                 folder: str | Path = "figures", dpi: int = 72):
        dpi = whole_number(dpi, "dpi", 20, 300, example="72 (a projector) or 96")
        self.lm, self.folder, self.dpi = lm, folder, dpi  # as given: folder='' is refused at export, not '.'
        self.run: Run = run_sentence(lm, sentence)  # the first sentence must work: it is the last good view
        self.sentence, self.error, self.exported = sentence, "", []
        self.seen = [sentence]  # the sentences shown, most recent last: the web page holds them
        (self.layer, self.head), self.query = self._checked(layer, head), None
        attn = self.run.attentions
        self.grid = AllHeadsView(attn, self.run.tokens, highlight=(self.layer, self.head))
        self.grid.fig.set_size_inches(7.5, 6.8)
        self.zoom = HeadView(attn[self.layer, self.head], self.run.tokens)  # titled by an HTML caption
        self.links = TokenLinksView(attn[self.layer, self.head], self.run.tokens)
        # Another head moves the grid's highlight over its kept maps; a new sentence redraws the middle layers.
        self.frames = [Frame(self.grid.fig, [self.grid.rect], dpi,
                             middle=[self.grid.image, self.grid.gaps, *self.grid.ax.spines.values(), self.grid.title]),
                       Frame(self.zoom.fig, [self.zoom.image, *self.zoom.ax.spines.values()], dpi,  # spines over the map
                             middle=self.zoom.word_texts),
                       Frame(self.links.fig, [self.links.lines, self.links.marker], dpi, middle=self.links.word_texts)]
        self.room = self.zoom.words_room(self.frames[1].canvas.get_renderer())  # that the zoom's layout left its words
        self._build_widgets()
        self._draw()

    # --- the logic: plain methods ------------------------------------------------------
    def set_sentence(self, text: str) -> bool:
        """Run the model on a new sentence and redraw; on bad input show the error, keep the view."""
        try:
            with one_thread():
                run = run_sentence(self.lm, text)
        except Exception as err:  # noqa: BLE001 - a widget shows the message instead of raising
            self._sync(self.text, self.sentence)  # the box shows what the pictures show
            return self._show_error(err, f"still showing “{self.sentence}”")
        grid_shape, self.run, self.sentence, self.query = self.grid.shape, run, text, None
        self.seen = [s for s in self.seen if s != text][-4:] + [text]
        self._sync(self.text, text)
        self._sync(self.word, -1, options=[ALL_WORDS] + self._word_options())
        self.grid.update(run.attentions, (self.layer, self.head), tokens=run.tokens)
        if self.grid.shape == grid_shape:
            self.frames[0].refresh()  # same grid: new maps and title over the kept labels
        else:
            self.frames[0].invalidate()
        self._new_words(run)
        self._clear_error()
        self._draw()
        return True

    def _new_words(self, run: Run) -> None:
        """New words over the kept axes and colour bars; a new layout only for zoom words that need more
        room than the last one left (shorter ones keep the map's size), or links words that stick out."""
        links_T, attn = len(self.links.words), run.attentions[self.layer, self.head]
        self.zoom.update(attn, run.tokens)
        self.links.update(attn, run.tokens)
        room = self.zoom.words_room(self.frames[1].canvas.get_renderer())
        if room[0] > self.room[0] + 0.5 or room[1] > self.room[1] + 0.5:  # pixels below, left of the map
            self.room = room
            self.frames[1].invalidate()
        if len(run.tokens) != links_T:  # the links' height follows the number of words
            fits = self.links.set_height(links_height(len(run.tokens)), self.frames[2].canvas.get_renderer())
            self.frames[2].invalidate(layout=not fits)
        self.frames[1].refresh(self.zoom.word_texts)  # a longer sentence's words include new Text artists
        self.frames[2].refresh(self.links.word_texts)

    def select(self, layer: int, head: int, query: int | None = None) -> bool:
        """Highlight head (layer, head) in the grid and zoom into it; `query` picks one word's links."""
        try:
            layer, head = self._checked(layer, head)
            if query is not None and not 0 <= query < len(self.run.tokens):
                raise ValueError(f"query={query} is not a word of this sentence (0..{len(self.run.tokens) - 1}).")
        except ValueError as err:
            return self._show_error(err, f"still showing {self._head_title()}")
        moved = (layer, head) != (self.layer, self.head)
        self.layer, self.head, self.query = layer, head, query
        self._sync(self.layer_slider, layer)
        self._sync(self.head_slider, head)
        self._sync(self.word, -1 if query is None else query)
        self.grid.update(highlight=(layer, head))
        self._clear_error()
        self._draw(grid=moved, zoom=moved)  # another query word changes only the links
        return True

    def export(self, folder: str | Path | None = None) -> list[Path]:
        """Write the current grid, zoomed head and token links as PNG, SVG and PDF for slides."""
        folder = self.folder if folder is None else folder  # '' is refused (export.check_folder), never figures/
        try:  # one set: every file of the three figures appears together, or none does
            figures = {name: (fig, "16:9") for name, fig in self.slide_figures().items()}
            paths = save_set_for_slides(figures, folder, self.slide_captions())  # + name.txt
        except Exception as err:  # noqa: BLE001
            self._show_error(err, "nothing was written")
            return []
        self.exported = paths
        self.export_note.value = _written(paths)
        self._clear_error()  # an earlier failed export's message no longer holds
        return paths

    def export_web_page(self, folder: str | Path | None = None) -> Path | None:
        """Write the sentences shown so far (the current one first) as one offline web page."""
        folder = self.folder if folder is None else folder  # '' is refused (export.check_folder), never figures/
        sentences = [self.sentence] + [s for s in reversed(self.seen) if s != self.sentence]
        try:
            path = export_page(self.lm, sentences, f"{_plain(self.lm.name)}_all_heads", folder,
                               layer=self.layer, head=self.head)
        except Exception as err:  # noqa: BLE001
            self._show_error(err, "nothing was written")
            return None
        self.export_note.value = (f"Wrote <code>{html.escape(str(path.resolve()))}</code>: {len(sentences)} "
                                  f"sentence{'s' if len(sentences) > 1 else ''}, opens in any browser, no internet needed")
        self._clear_error()
        return path

    def slide_captions(self) -> dict[str, str]:
        """One sentence per exported figure, computed from the maps it shows (alt text, speaker notes)."""
        attn, tokens = self.run.attentions, self.run.tokens
        tag = f"{_plain(self.lm.name)}_L{self.layer}H{self.head}"
        head = captions.head_caption(attn[self.layer, self.head], tokens, self.layer, self.head)
        return {f"{_plain(self.lm.name)}_all_heads": captions.all_heads_caption(attn, tokens, (self.layer, self.head)),
                f"{tag}_map": head, f"{tag}_links": head}

    def slide_figures(self) -> dict:
        """Fresh projector-styled figures of the current views, keyed by file name."""
        attn, tokens = self.run.attentions, self.run.tokens
        tag = f"{_plain(self.lm.name)}_L{self.layer}H{self.head}"
        with slide_style():
            return {
                f"{_plain(self.lm.name)}_all_heads": plot_all_heads(attn, tokens, highlight=(self.layer, self.head)),
                f"{tag}_map": plot_head(attn[self.layer, self.head], tokens, title=self._head_title()),
                f"{tag}_links": plot_token_links(attn[self.layer, self.head], tokens, query=self.query,
                                                 title=self._head_title()),
            }

    # --- helpers -----------------------------------------------------------------------
    def _checked(self, layer, head) -> tuple[int, int]:
        L, H = self.lm.config.n_layer, self.lm.config.n_head
        if not (is_whole_number(layer) and is_whole_number(head) and 0 <= layer < L and 0 <= head < H):
            raise ValueError(f"(layer, head)=({layer}, {head}) does not exist; {self.lm.name} has "
                             f"layers 0..{L - 1} and heads 0..{H - 1}.")
        return int(layer), int(head)

    def _head_title(self) -> str:
        return f"layer {self.layer}, head {self.head}"

    def _word_options(self) -> list[tuple[str, int]]:
        return [(f"{i}: {t}", i) for i, t in enumerate(self.run.tokens)]

    def _show_error(self, err: Exception, shown: str) -> bool:
        """One line in the status: what went wrong, then what the pictures still show."""
        self.error = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        self._warn(f"⚠ {self.error} ({shown})")
        return False

    def _clear_error(self) -> None:
        self.error = ""
        T = len(self.run.tokens)
        L, H = self.lm.config.n_layer, self.lm.config.n_head
        self.status.value = f"{T} tokens · attention ({L}, {H}, {T}, {T}): layers, heads, queries, keys"

    def _draw(self, grid: bool = True, zoom: bool = True, links: bool = True) -> None:
        """Update the zoom and links artists, then re-render the figures that changed into their
        Image widgets: the zoom first (the picture a student watches), the grid last."""
        attn = self.run.attentions[self.layer, self.head]  # (T, T)
        words = self._describe(attn)
        if zoom:
            self.zoom.update(attn, self.run.tokens)
            self.head_caption.value = f"<b>{self._head_title()}</b>: its map (queries down, keys across) and its links"
        self.links.update(attn, self.run.tokens, query=self.query)
        for i, changed in ((1, zoom), (2, links), (0, grid)):
            if changed:  # at its own pixel size: never stretched or blurred
                show_png(self.images[i], self.frames[i], words=words[i])
            else:
                self.images[i].tooltip = words[i]  # the same words send nothing

    def _describe(self, attn) -> list[str]:
        """Words for each picture (grid, zoom, links: their names for a screen reader), and the live line."""
        tokens = self.run.tokens
        head = captions.head_caption(attn, tokens, self.layer, self.head)
        links = captions.links_words(attn, tokens, self.query)
        self._announce(head if self.query is None else f"{head} {links}")
        self.table.value = map_table(attn, tokens, head).html if self.as_table.value else ""
        return [captions.all_heads_caption(self.run.attentions, tokens, (self.layer, self.head)), head, links]

    # --- the widgets: thin wiring --------------------------------------------------------
    def _build_widgets(self) -> None:
        L, H = self.lm.config.n_layer, self.lm.config.n_head
        self.text = widgets.Text(value=self.sentence, description="Sentence", continuous_update=False,
                                 layout=widgets.Layout(width="95%"))
        self.layer_slider = widgets.IntSlider(self.layer, 0, L - 1, description="layer")
        self.head_slider = widgets.IntSlider(self.head, 0, H - 1, description="head")
        self.word = widgets.Dropdown(options=[ALL_WORDS] + self._word_options(), value=-1, description="query")
        self.status, self.live = widgets.HTML(), widgets.HTML()
        self.head_caption = widgets.HTML()  # text in HTML: the browser draws it, Agg need not
        self.as_table = widgets.ToggleButton(description="Show as table", icon="table",
                                             tooltip="the zoomed head's weights as a table a screen reader reads")
        self.table = widgets.HTML()  # the zoomed map as a table, while the toggle is on
        self.images = [NamedImage(format="png") for _ in self.frames]  # grid, zoomed head, token links
        self.button = widgets.Button(description="Export for slides", icon="download",
                                     tooltip=f"PNG, SVG and PDF into {self.folder}/",
                                     layout=widgets.Layout(width="auto", flex="none"))  # a long note never squeezes it
        self.page_button = widgets.Button(description="Export as web page", icon="globe",
                                          tooltip=f"one offline .html file of every head into {self.folder}/",
                                          layout=widgets.Layout(width="auto", flex="none"))
        self.export_note = widgets.HTML()
        self._clear_error()
        select = self._select_from_controls  # any of the three moves the same selection
        self._wire({self.text: self.set_sentence, self.layer_slider: select, self.head_slider: select,
                    self.word: select},
                   {self.text: "explorer-text", self.layer_slider: "explorer-layer", self.head_slider: "explorer-head",
                    self.word: "explorer-query", self.status: "explorer-status", self.button: "explorer-export",
                    self.live: "explorer-live", self.as_table: "explorer-table-toggle", self.table: "explorer-table",
                    self.page_button: "explorer-page", self.images[0]: "explorer-grid",
                    self.images[1]: "explorer-zoom", self.images[2]: "explorer-links"},
                   {self.text: "the sentence the model reads (Enter to run it)",
                    self.layer_slider: "the layer of the zoomed head (arrow keys)",
                    self.head_slider: "the head of that layer to zoom into (arrow keys)",
                    self.word: "one word's links only, or every word's"})
        self.button.on_click(lambda _: self.export())
        self.as_table.observe(lambda _: self._describe(self.run.attentions[self.layer, self.head]), "value")
        self.page_button.on_click(lambda _: self.export_web_page())
        # grid | zoomed head | links side by side, so controls, grid and zoom fit one 1080p screen;
        # in a narrow window the links wrap below instead of squeezing the pictures.
        pictures = widgets.HBox([self.images[0], widgets.VBox([self.head_caption, self.images[1]]), self.images[2]],
                                layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
        pictures = widgets.VBox([pictures, self.as_table, self.table])
        self.widget = widgets.VBox([
            self.text, widgets.HBox([self.layer_slider, self.head_slider, self.word]), self.status, self.live,
            pictures, widgets.HBox([self.button, self.page_button, self.export_note],
                                   layout=widgets.Layout(align_items="center")),
        ])

    def _select_from_controls(self, _value=None) -> None:
        word = self.word.value
        self.select(self.layer_slider.value, self.head_slider.value, None if word < 0 else word)


def _written(paths: list[Path]) -> str:
    """'Wrote 9 files in /abs/folder/: a.png, a.svg, …' as one short HTML line."""
    folder = paths[0].parent.resolve() if paths else Path(".")
    names = ", ".join(html.escape(p.name) for p in paths)
    return (f"Wrote {len(paths)} files in <code>{html.escape(str(folder))}/</code>: "
            f"<span style='font-size:smaller'>{names}</span>")


def _plain(name: str) -> str:
    """A model name as a file-name part ("gpt2", "classroom")."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "model"
