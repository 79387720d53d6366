"""A token never stays in a stored document, which the API, the run page and the logs of a failed write would show.
A runner copies what it sees into its document: its argv (`--token SECRET` once), environment maps, warnings that
quote a URL or a header. So every string of the document, keys included, at any depth, has the board's secrets
replaced by ***: the value of `--token` in its command_line, anything shaped like a token of `bonnieboard token
create`, and the secrets the posting request names (app.web.deps.request_secrets).

Scrubbing rather than refusing the document (a 422): a run may have taken hours, the copy of the token is the
sender's doing, and what the document says about the run stays readable around the ***.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

HIDDEN = "***"

# getopt_long takes any unambiguous prefix of an option: --to, --tok and --toke mean --token
# (the runner's only other option starting with t is --tag). --token-file names a file, not a secret.
_TOKEN_OPTIONS = {"--token"[:n] for n in range(4, len("--token") + 1)}
_TOKEN_IN_TEXT = re.compile(r"""(?<!\S)(--to(?:k(?:en?)?)?)(=|\s+)("[^"]*"|'[^']*'|\S+)""")

# What app.web.auth.create_token makes: "bb_" and secrets.token_urlsafe(32), 43 URL-safe characters. Hidden wherever it
# appears, live or revoked, of this board or another: nothing else a document holds looks like it.
BOARD_TOKEN_PREFIX = "bb_"
BOARD_TOKEN = rf"{BOARD_TOKEN_PREFIX}[A-Za-z0-9_-]{{43}}"

# A secret this long is hidden inside any text. A shorter one (BONNIEBOARD_API_TOKEN may be a word) only where it
# stands alone, not within a longer word: a token `test` must not turn the runner's `tests` into `***s`.
SECRET_ANYWHERE_CHARS = 12


def scrub_command_line(command_line: Any) -> Any:
    """argv (a list of strings) or a command line (a string) with the value of --token replaced by ***."""
    if isinstance(command_line, str):
        return _TOKEN_IN_TEXT.sub(lambda m: f"{m[1]}{m[2]}{HIDDEN}", command_line)
    if not isinstance(command_line, list):
        return command_line
    scrubbed = list(command_line)
    for index, arg in enumerate(scrubbed):
        if not isinstance(arg, str):
            continue
        option, equals, _ = arg.partition("=")
        if option in _TOKEN_OPTIONS:
            if equals:
                scrubbed[index] = f"{option}={HIDDEN}"
            elif index + 1 < len(scrubbed):
                scrubbed[index + 1] = HIDDEN
    return scrubbed


class _Secrets:
    """Board-shaped tokens and the given secrets, found in a string by one expression, longest secret first (one
    holding another goes whole); plain substring tests first, as nearly every string holds none."""

    def __init__(self, secrets: Iterable[str]):
        alternatives = []
        self.needles = [BOARD_TOKEN_PREFIX]
        for secret in sorted({secret for secret in secrets if secret}, key=len, reverse=True):
            escaped = re.escape(secret)
            alternatives.append(escaped if len(secret) >= SECRET_ANYWHERE_CHARS else rf"(?<!\w){escaped}(?!\w)")
            self.needles.append(secret)
        self.pattern = re.compile("|".join([*alternatives, BOARD_TOKEN]))

    def hide(self, text: str) -> str:
        if not any(needle in text for needle in self.needles):
            return text
        return self.pattern.sub(HIDDEN, text)


def scrub_document(document: Any, secrets: Iterable[str] = ()) -> Any:
    """The document with no token left in any key or string (see the module's docstring); the same object when
    nothing was hidden, a copy otherwise."""
    if document is None:
        return None
    scrubbed = _scrub(document, _Secrets(secrets))
    if isinstance(scrubbed, dict) and "command_line" in scrubbed:
        command_line = scrub_command_line(scrubbed["command_line"])
        if command_line != scrubbed["command_line"]:
            scrubbed = {**scrubbed, "command_line": command_line}
    return scrubbed


def _scrub(value: Any, secrets: _Secrets) -> Any:
    # Recursion is bounded: a posted document nests at most app.ingest.validation.MAX_DOCUMENT_DEPTH levels.
    if isinstance(value, str):
        return secrets.hide(value)
    if isinstance(value, list):
        items = [_scrub(item, secrets) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = [(_scrub(key, secrets), _scrub(item, secrets)) for key, item in value.items()]
        if all(new[0] is old[0] and new[1] is old[1] for new, old in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value
