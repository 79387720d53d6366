"""Units for people: the one place where stored units (KiB/s, µs) become display units.

`UNIT_STEPS` is also what the compare page's JavaScript uses (the page passes it in its JSON), so the
server's text and the charts' ticks and tooltips choose the same unit for the same number.
"""

import math
from collections.abc import Iterable

KIB_PER_MIB = 1024
MIB_PER_GIB = 1024
BYTES_PER_MIB = 1024 * 1024
US_PER_MS = 1000
US_PER_S = 1_000_000

# Per stored unit: [divisor, display unit], smallest first; a value shows in the largest unit whose
# divisor it reaches (1536 KiB/s is 1.5 MiB/s).
UNIT_STEPS: dict[str, list[tuple[int, str]]] = {
    "KiB/s": [(1, "KiB/s"), (KIB_PER_MIB, "MiB/s"), (KIB_PER_MIB * KIB_PER_MIB, "GiB/s")],
    "µs": [(1, "µs"), (US_PER_MS, "ms"), (US_PER_S, "s")],
}
# Digits after the point per display unit in text (a rate in KiB/s is a whole number).
_DECIMALS = {"MiB/s": 1, "GiB/s": 2, "ms": 1, "s": 2}


def display_unit(unit: str, values: Iterable[float | int | None]) -> tuple[str, int]:
    """The unit an axis shows (and the divisor from the data's unit): the largest not above the values."""
    steps = UNIT_STEPS.get(unit)
    if not steps:
        return unit, 1
    largest = max((abs(v) for v in values if v is not None), default=0)
    divisor, shown = steps[0]
    for step_divisor, step_unit in steps:
        if largest >= step_divisor:
            divisor, shown = step_divisor, step_unit
    return shown, divisor


def _with_unit(value: float, unit: str) -> str:
    shown, divisor = display_unit(unit, [value])
    if divisor == 1:
        return f"{value:g} {shown}"
    return f"{value / divisor:.{_DECIMALS[shown]}f} {shown}"


def format_rate(value: float | None, unit: str) -> str:
    """A rate in the largest unit that keeps it readable; KiB/s become MiB/s or GiB/s."""
    return "" if value is None else _with_unit(value, unit)


def format_latency(latency_us: float | None) -> str:
    return "" if latency_us is None else _with_unit(latency_us, "µs")


def format_in(value: float | None, unit: str, divisor: int) -> str:
    """A value in a chosen display unit (a table column's), without the unit: its header says it."""
    if value is None:
        return ""
    digits = _DECIMALS.get(unit, 1 if unit == "seeks/s" else 0)
    return f"{value / divisor:,.{digits}f}"


def mib_of_bytes(size_bytes: int) -> int:
    """Whole MiB of a byte count, rounded down."""
    return size_bytes // BYTES_PER_MIB


def format_size_mib(size_mib: int) -> str:
    """A size as people write it: in GiB when a quarter GiB divides it (1 GiB, 1.25 GiB), else in MiB."""
    return f"{size_mib / MIB_PER_GIB:g} GiB" if size_mib % (MIB_PER_GIB // 4) == 0 else f"{size_mib:,} MiB"


def gib_at_least(size_mib: float) -> int:
    """The whole GiB that hold `size_mib` (a size to ask for: -s NG)."""
    return math.ceil(size_mib / MIB_PER_GIB)
