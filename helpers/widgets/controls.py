"""The wiring the widgets share: controls that call plain setters (and are moved by them without
calling them again), one line for a refused value, the "Export for slides" button, and the words a
screen reader says (a live line, tooltips, named slider handles)."""

from __future__ import annotations

import html

import ipywidgets as W
from IPython.display import Javascript, display

from ..core.evaluation import one_thread
from ..core.run import run_ids
from ..figures.export import save_set_for_slides

WARNING = "#b00020"  # a refused value's line: 7.3 : 1 on white (Okabe-Ito vermillion, 3.9 : 1, is too light for text)


class SyncedControls:
    """What the widgets share: each control calls a plain setter (set_heads, set_sentence ...),
    a setter moves its control to what the pictures show without being called again, and a refused
    value shows one orange line in `self.status` while the pictures stay as they were."""

    _syncing = False

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self):
        """The widget, and the script that names its slider handles for a screen reader."""
        display(self.widget)
        display(Javascript(NAME_SLIDERS))

    def _from_widget(self, setter, change) -> None:
        """A control moved in the browser: call its setter, unless our own code is moving it (_sync)."""
        if not self._syncing:
            setter(change["new"])

    def _sync(self, control, value, options=None) -> None:
        """Put a control on `value` (and new `options`) without calling its setter again."""
        self._syncing = True
        try:
            if options is not None:
                control.options = options
            control.value = value
        finally:
            self._syncing = False

    def _announce(self, words: str) -> None:
        """Put what the pictures now show, in words, into the live line a screen reader announces."""
        self.live.value = live_html(words)

    def _warn(self, line: str) -> None:
        self.status.value = f"<span style='color:{WARNING}'>{html.escape(line)}</span>"

    def export(self, folder=None) -> list:
        """Write the widget's figures for slides (PNG, SVG, PDF and a .txt caption each) as one set:
        all appear together or none does. Returns the paths."""
        folder = self.folder if folder is None else folder
        try:
            paths = save_set_for_slides(self.slide_figures(), folder, self.slide_captions())
        except (ValueError, OSError) as err:
            self._fail(err)
            return []
        self.status.value = f"Saved {len(paths)} files in {html.escape(str(paths[0].parent.resolve()))}/"
        return paths

    def _fail(self, err: Exception) -> bool:
        """One line: what went wrong, and what the pictures still show (the widget's `showing()`)."""
        self._warn(f"⚠ {err} ({self.showing()})")
        return False

    def _sentence_box(self, words: str) -> W.Text:
        """The sentence box (Enter calls set_sentence); `words`: what it changes, for a screen reader."""
        box = W.Text(value=self.sentence, description="sentence", continuous_update=False,
                     layout=W.Layout(width="95%"), tooltip=words)
        box.observe(lambda c: self._from_widget(self.set_sentence, c), "value")
        return box

    def _export_button(self, what: str) -> W.Button:
        """"Export for slides": writes `what` (the pictures) into self.folder."""
        button = W.Button(description="Export for slides", icon="download",
                          tooltip=f"writes {what} as PNG, SVG and PDF into {self.folder}/")
        button.on_click(lambda _: self.export())
        return button

    def _wire(self, setters: dict, classes: dict, words: dict | None = None) -> None:
        """Each control calls its setter ({control: setter}); each widget gets its class ({widget: name}, the
        browser tests find it by it); each control its tooltip ({control: words}, name_controls)."""
        for control, setter in setters.items():
            control.observe(lambda c, setter=setter: self._from_widget(setter, c), "value")
        for widget, name in classes.items():
            widget.add_class(name)
        name_controls(words or {})


class VariantControls(SyncedControls):
    """The sliders over trained variants (04, 07): each variant runs the sentence's ids once, when first shown."""

    DPI = 80
    load = None  # a setting's model: load_variant (heads-N) or load_kv_variant (kv-N)

    def _run(self, n: int):
        """Variant n reading the current sentence (self._read: its tokens and ids), run once per sentence."""
        if n not in self._runs:
            with one_thread():
                self._runs[n] = run_ids(self.load(n), *self._read)
        return self._runs[n]

    def _shipped(self, value, check, name) -> int:
        """`value` checked (check: its one-line ValueError) and shipped in data/ (name(n): the file's name)."""
        n = check(value)
        if n not in self.counts:
            raise ValueError(f"{name(n)} is not shipped in data/; choose one of {self.counts}.")
        return n


def live_html(words: str) -> str:
    """The live line's HTML: a polite ARIA live region (role status) holding one or two sentences."""
    return f"<p role='status' aria-live='polite' class='live-words'>{html.escape(words)}</p>"


def name_controls(controls: dict) -> None:
    """Give each control a tooltip that says what it changes ({control: words}); images get their words
    the same way (the title attribute, which a screen reader reads as the picture's name)."""
    for control, words in controls.items():
        control.tooltip = words


# ipywidgets 8 draws its sliders with noUiSlider and passes it no handle attributes, so the handle a
# keyboard focuses (role="slider") has no accessible name (axe-core: aria-input-field-name, serious).
# No Python trait reaches that element, so a widget shows beside itself this script, which names each
# handle after its slider's label (or tooltip), also for sliders drawn later. It runs where the front
# end runs a notebook's JavaScript output (JupyterLab, this session's outputs); elsewhere it does nothing.
NAME_SLIDERS = """
(function () {
  if (window.helpersNameSliders) { return; }  // one observer per page, however many widgets
  function nameAll() {
    document.querySelectorAll('.widget-slider, .jupyter-widget-slider').forEach(function (box) {
      var handle = box.querySelector('.noUi-handle[role="slider"]');
      if (!handle || handle.hasAttribute('aria-label')) { return; }
      var label = box.querySelector('.widget-label, .widget-label-basic');
      var words = (label && label.textContent.trim()) || box.getAttribute('title') || '';
      if (words) { handle.setAttribute('aria-label', words); }
    });
  }
  window.helpersNameSliders = new MutationObserver(nameAll);
  window.helpersNameSliders.observe(document.body, {childList: true, subtree: true});
  nameAll();
})();
"""
