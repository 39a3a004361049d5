"""The book's Chinese search alone (``slimebook.sphinxext.accelerate.search``), declared safe for parallel builds."""

from slimebook.sphinxext.accelerate import search


def setup(app):
    search.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
