"""The toolchain's version (one place: the package and the Sphinx extension's metadata read it)."""

__version__ = "0.1.0"
