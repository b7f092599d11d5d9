"""ipywidgets: the slider, the explorer and the knock-out explorer, on the picture frame."""
