"""Generated pages: pages that are not documents (snapshots, usage pages, the source check, redirects, the PDF
appendix), built as docutils nodes and rendered through the builder. Import gates and the shared modules."""
