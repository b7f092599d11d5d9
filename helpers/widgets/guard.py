"""Keep a widget working when the browser sends a value it cannot take.

A selection control (Dropdown, SelectionSlider, SelectMultiple, ToggleButtons) validates the
index the browser sends; an out-of-range one raises a TraitError inside the kernel's message
handler, and the user sees a traceback. `tolerate_bad_values` turns that into one line passed
to `report`, leaves the control at its current value, and puts the browser back in step.
"""

from __future__ import annotations

from typing import Callable

from traitlets import TraitError


def tolerate_bad_values(widget, report: Callable[[str], None]):
    """Wrap widget.set_state (what a browser message calls) so a refused value is reported, not raised."""
    original = widget.set_state

    def set_state(sync_data):
        try:
            original(sync_data)
        except TraitError as err:
            sent = ", ".join(f"{key}={value!r}" for key, value in sync_data.items())
            report(f"⚠ Ignored {sent} for '{widget.description or type(widget).__name__}' ({err}); "
                   f"it stays at {widget.value!r}. Pick one of its options.")
            widget.send_state()  # the browser shows what the kernel has again

    widget.set_state = set_state
    return widget


SELECTIONS = ("Dropdown", "SelectionSlider", "SelectionRangeSlider", "SelectMultiple", "ToggleButtons", "Select",
              "RadioButtons")


def guard_selections(root, report: Callable[[str], None]):
    """tolerate_bad_values on every selection control inside `root` (a widget and its children)."""
    stack = [root]
    while stack:
        widget = stack.pop()
        if type(widget).__name__ in SELECTIONS:
            tolerate_bad_values(widget, report)
        stack.extend(getattr(widget, "children", ()))
    return root

