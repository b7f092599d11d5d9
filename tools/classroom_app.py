"""Start the classroom app: Voilà showing only the head-count slider and the 144-head explorer.

    python tools/classroom_app.py                 # opens http://localhost:8866 in the browser
    python tools/classroom_app.py --no-browser --port 8900

It runs `voila notebooks/app_slider_explorer.ipynb --template=classroom` with this repository's
share/jupyter first on JUPYTER_PATH, which holds two things that keep the app quiet and offline:
- the "classroom" template (voila/templates/classroom): Voilà's lab template without its two
  Font Awesome stylesheets from cdn.jsdelivr.net, which fail offline (the icons are bundled);
- the ipywidgets front end of jupyterlab_widgets 3.0.13 (labextensions/@jupyter-widgets), built
  for JupyterLab ^4.2.4 like Voilà 0.5.8's own core (4.2.5). The 3.0.17 that ipywidgets 8.1.9
  installs wants ^4.6.2, and Voilà logs eight "Unsatisfied version" warnings. JupyterLab itself
  keeps using the installed one. (Voilà 0.5.9 to 0.5.13 ship a widget manager that wants a newer
  core than they bundle; the `voila` extra pins 0.5.8, whose parts agree.)
Any other arguments are passed on to voila.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "notebooks" / "app_slider_explorer.ipynb"
SHARE = ROOT / "share" / "jupyter"  # voila/templates/classroom and labextensions/@jupyter-widgets
# JupyterLab extensions the grading extra brings (nbgrader, otter's jupytext and ipylab, notebook 7):
# built for a newer JupyterLab than Voilà's core, they fill the app's console with "Unsatisfied
# version" warnings and failed plugins, and the app needs none of them.
NOT_FOR_THE_APP = ("@jupyter/nbgrader", "ipylab", "jupyterlab-jupytext", "@jupyter-notebook/lab-extension")


def command(notebook: Path = APP, extra: list[str] | None = None) -> tuple[list[str], dict]:
    """The voila command line and its environment (Voilà finds templates and front ends on JUPYTER_PATH)."""
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(SHARE), env.get("JUPYTER_PATH", "")) if p)
    cmd = [sys.executable, "-m", "voila", str(notebook), "--template=classroom",
           *(f"--VoilaConfiguration.extension_denylist={name}" for name in NOT_FOR_THE_APP), *(extra or [])]
    return cmd, env


def main(argv: list[str] | None = None) -> None:
    cmd, env = command(extra=sys.argv[1:] if argv is None else argv)
    os.execvpe(cmd[0], cmd, env)  # voila takes over this process: Ctrl-C stops it as usual


if __name__ == "__main__":
    main()
