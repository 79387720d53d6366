"""What a run's setup was, as history compares it run to run: the facts its runner's document gave (taken out at
ingest into `document.setup`: app/ingest/documents.py) and those every CSV line gives (bonnie++ version, -s, -n)."""

from __future__ import annotations

# The facts in the order a setup change names them, with the words a page uses.
FACT_NAMES = {
    "kernel": "kernel",
    "bonnie": "bonnie++",
    "file_size": "-s",
    "file_test": "-n",
    "filesystem": "filesystem",
    "mount_options": "mount options",
    "raid": "RAID",
    "ram": "RAM",
    "io_throttle": "I/O throttle",
}


def run_facts(
    setup: dict[str, str] | None, bonnie_version: str | None, file_size_mib: int | None, num_files: int | None
) -> dict[str, str]:
    """A run's setup: its document's facts and its line's."""
    facts = dict(setup or {})
    if bonnie_version:
        facts["bonnie"] = bonnie_version
    facts["file_size"] = "not run" if not file_size_mib else f"{file_size_mib} MiB"
    facts["file_test"] = "not run" if not num_files else f"{num_files}×1024 files"
    return facts


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """`kernel 6.1 → 6.6`, one per fact that differs, in FACT_NAMES order; a fact only one side names is
    not a difference (a plain CSV upload between two runner posts says nothing of the kernel)."""
    return [
        f"{name} {before[key]} → {after[key]}"
        for key, name in FACT_NAMES.items()
        if key in before and key in after and before[key] != after[key]
    ]
