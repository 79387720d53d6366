"""Units for people: the one place where stored units (KiB/s, µs) become display units."""

KIB_PER_MIB = 1024
US_PER_MS = 1000
US_PER_S = 1_000_000


def format_rate(value: float | int | None, unit: str) -> str:
    """A rate in the largest unit that keeps it readable; KiB/s become MiB/s or GiB/s."""
    if value is None:
        return ""
    if unit == "KiB/s":
        if value >= KIB_PER_MIB * KIB_PER_MIB:
            return f"{value / KIB_PER_MIB / KIB_PER_MIB:.2f} GiB/s"
        if value >= KIB_PER_MIB:
            return f"{value / KIB_PER_MIB:.1f} MiB/s"
        return f"{value:g} KiB/s"
    return f"{value:g} {unit}"


def format_latency(latency_us: int | None) -> str:
    if latency_us is None:
        return ""
    if latency_us >= US_PER_S:
        return f"{latency_us / US_PER_S:.2f} s"
    if latency_us >= US_PER_MS:
        return f"{latency_us / US_PER_MS:.1f} ms"
    return f"{latency_us} µs"
