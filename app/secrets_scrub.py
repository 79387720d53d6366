"""A token never stays in a stored document (issue #8): the runner once copied its whole argv,
`--token SECRET` included, into the document's command_line, which the API and the run page show."""

from __future__ import annotations

import re
from typing import Any

HIDDEN = "***"

# getopt_long takes any unambiguous prefix of an option: --to, --tok and --toke mean --token
# (the runner's only other option starting with t is --tag). --token-file names a file, not a secret.
_TOKEN_OPTIONS = {"--token"[:n] for n in range(4, len("--token") + 1)}
_TOKEN_IN_TEXT = re.compile(r"""(?<!\S)(--to(?:k(?:en?)?)?)(=|\s+)("[^"]*"|'[^']*'|\S+)""")


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


def scrub_document(document: Any) -> Any:
    """The runner's document with no token in its command_line (a copy when one was there)."""
    if not isinstance(document, dict) or "command_line" not in document:
        return document
    command_line = scrub_command_line(document["command_line"])
    if command_line == document["command_line"]:
        return document
    return {**document, "command_line": command_line}
