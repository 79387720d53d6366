"""Preloaded by `bench/million_runs.py --export-reference` into a second server: the export's first batch as
large as the others (EXPORT_BATCH): the reference of docs/decisions.md, "A small first export batch", measured in
the same run."""

from app.store import runs as run_store

run_store.EXPORT_FIRST_BATCH = run_store.EXPORT_BATCH
