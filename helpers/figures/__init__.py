"""Matplotlib, no ipywidgets: slide geometry and export, plots, views, animations, the deck."""
