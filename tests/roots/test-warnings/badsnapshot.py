"""Asks for the snapshot page of a file the pin does not hold (the ``snapshot`` warning subtype)."""

from slimebook.sphinxext.pages.snapshot import add_snapshot_paths


def setup(app):
    app.connect("builder-inited", lambda app: add_snapshot_paths(app, {"pkg/not-at-the-pin.py"}))
    return {"parallel_read_safe": True}
