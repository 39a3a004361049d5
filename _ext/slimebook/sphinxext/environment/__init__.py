"""Data the extension keeps on the build environment: per-document records (parallel-read safe) and the scan of
the pin, opened once per build process. Imports only the shared modules beside this package."""
