"""Directives and roles the chapters write (``slime-source``, ``{slime}``, ``usage-index``, the course and the
reading guide). Import pages (node builders), gates and the shared modules."""
