"""MkDocs hook: the pictures of the web app (``docs/screenshots/``) are taken before the
build when any is missing.

They are build output, not kept in git: ``jekyll_hyde_app.web.screenshots`` plays seeded
games in a headless chromium (the ``web`` extra and ``make browser``) and photographs
the real pages, so the docs always show the app as it is. Without chromium the build
stops and says how to get it.
"""

from __future__ import annotations

import pathlib
import shutil

from mkdocs.exceptions import PluginError

FOLDER = "screenshots"


def on_pre_build(config) -> None:  # noqa: ANN001 - MkDocs' config object
    """Take the pictures that ``docs/screenshots/`` lacks."""
    from jekyll_hyde_app.web.screenshots import PICTURES, take  # lazy: the web extra

    out = pathlib.Path(config["docs_dir"]) / FOLDER
    if all((out / name).is_file() for name in PICTURES):
        return
    chromium = shutil.which("chromium")
    if chromium is None:
        raise PluginError(
            "the docs show pictures of the web app, taken with chromium, which is not "
            "installed: run 'sudo make browser', then build again"
        )
    take(chromium, out)
