"""Output formats: the PDF (``slimebook.sty``, question boxes), the reader's static JS/CSS and templates, and the
live preview's warning box. Import the shared modules only."""
