"""The exercise checks of every notebook, their one verdict engine, and the solutions."""
