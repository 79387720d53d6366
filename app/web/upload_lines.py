"""The lines of an upload that its errors name, to show each beside its error on the upload page."""

from app.ingest.lines import BOM

# An error's line is shown up to this many characters (a line may be up to BONNIEBOARD_MAX_LINE_BYTES).
MAX_SHOWN_LINE_CHARS = 400


def lines_at(data: bytes, numbers: list[int]) -> dict[int, str]:
    """The text of the lines `numbers` (1-based, as errors count them) of `data`, found in one pass that stops
    at the last one asked for: an upload of many megabytes is not split into lines for a few errors."""
    wanted = sorted(set(n for n in numbers if n >= 1))
    found: dict[int, str] = {}
    start, number = 0, 1
    for target in wanted:
        while number < target and start <= len(data):
            end = data.find(b"\n", start)
            if end < 0:
                start = len(data) + 1
                break
            start, number = end + 1, number + 1
        if number != target or start > len(data):
            break
        end = data.find(b"\n", start)
        line = data[start : end if end >= 0 else len(data)].rstrip(b"\r")
        text = (
            line[: MAX_SHOWN_LINE_CHARS * 4].decode("utf-8", errors="replace").removeprefix(BOM if target == 1 else "")
        )
        found[target] = text if len(text) <= MAX_SHOWN_LINE_CHARS else text[:MAX_SHOWN_LINE_CHARS] + "…"
    return found
