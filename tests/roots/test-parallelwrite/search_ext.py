"""The book's Chinese search alone (``slimebook.sphinxext.search``), declared safe for parallel builds."""

from slimebook.sphinxext import search


def setup(app):
    search.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
