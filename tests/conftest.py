import os

os.environ.setdefault("MPLBACKEND", "Agg")  # tests never open windows
