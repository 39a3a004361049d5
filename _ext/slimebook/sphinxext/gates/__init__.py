"""Gates: checks every build runs that fail a ``-W`` build (coverage, candidates, anchors, house rules) and the
warnings that say what was probably meant. Import the shared modules and :mod:`..environment` only."""
