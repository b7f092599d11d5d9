"""Start the classroom app: Voilà showing only the head-count slider and the 144-head explorer.

    python tools/classroom_app.py                 # opens http://localhost:8866 in the browser
    python tools/classroom_app.py --no-browser --port 8900

It runs `voila notebooks/app_slider_explorer.ipynb --template=classroom`, with two settings
that keep a classroom without internet quiet:
- the "classroom" template (share/jupyter/voila/templates/classroom) is Voilà's lab template
  without its two Font Awesome stylesheets from cdn.jsdelivr.net, which fail offline;
- JupyterLab's widget manager extension is not loaded into Voilà (Voilà brings its own, built
  for its older JupyterLab core), which removes the "Unsatisfied version" console warnings.
Any other arguments are passed on to voila.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "notebooks" / "app_slider_explorer.ipynb"
TEMPLATES = ROOT / "share" / "jupyter"  # holds voila/templates/classroom
NO_LAB_WIDGET_MANAGER = '--VoilaConfiguration.extension_denylist=["@jupyter-widgets/jupyterlab-manager"]'


def command(notebook: Path = APP, extra: list[str] | None = None) -> tuple[list[str], dict]:
    """The voila command line and its environment (Voilà finds templates on JUPYTER_PATH)."""
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(TEMPLATES), env.get("JUPYTER_PATH", "")) if p)
    cmd = [sys.executable, "-m", "voila", str(notebook), "--template=classroom", NO_LAB_WIDGET_MANAGER,
           *(extra or [])]
    return cmd, env


def main(argv: list[str] | None = None) -> None:
    cmd, env = command(extra=sys.argv[1:] if argv is None else argv)
    os.execvpe(cmd[0], cmd, env)  # voila takes over this process: Ctrl-C stops it as usual


if __name__ == "__main__":
    main()
