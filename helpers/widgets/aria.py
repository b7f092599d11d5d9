"""Names for the slider handles ipywidgets draws, so a screen reader says what each slider changes.

ipywidgets 8 draws its sliders with noUiSlider and passes it no handle attributes, so the handle a
keyboard focuses (role="slider") has no accessible name (axe-core: aria-input-field-name, serious);
the visible label beside it is not tied to it. No Python trait reaches that element, so a widget
shows, beside itself, one small script that names each handle after its slider's label (or its
tooltip) and names new ones as sliders are drawn. It runs where the front end runs a notebook's
JavaScript output (JupyterLab, for outputs of this session); elsewhere it does nothing.
"""

from __future__ import annotations

from IPython.display import Javascript

SCRIPT = """
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


def slider_names() -> Javascript:
    """The script to display beside a widget (it shows nothing itself)."""
    return Javascript(SCRIPT)
