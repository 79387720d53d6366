"""Tags from machine names: a pattern like `raid{raid}_chunk{chunk_kib}_{fs}` turns `raid5_chunk64_ext3` into
{"raid": "5", "chunk_kib": "64", "fs": "ext3"}, so a sweep's single bonnie.csv tags itself.

Pure: text in, tags or a clear error out. A pattern is literal text with `{key}` placeholders (`{{` and `}}` are
literal braces). Matching is delimiter-aware and needs no regular expression: each value is the non-empty text up
to the first occurrence of the literal that follows its placeholder (the last value, when nothing follows it, is
the rest of the name). So a value never contains the text that follows it, matching takes one pass over the
name, and a name that does not fit is told exactly where it stops fitting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.limits import MAX_TAG_CHARS

MAX_PATTERN_CHARS = 500


class NamePatternError(ValueError):
    """The pattern itself is wrong; the message says where and how to write it."""


class NameMismatchError(ValueError):
    """A machine name does not fit the pattern; the message says where it stops fitting."""


@dataclass(frozen=True, slots=True)
class NamePattern:
    """A compiled pattern: `literals[0] {keys[0]} literals[1] {keys[1]} ... literals[-1]`."""

    pattern: str
    keys: tuple[str, ...]
    literals: tuple[str, ...]  # one more than keys; only the first and the last may be empty

    def parse(self, machine: str) -> dict[str, str]:
        """The tags the name carries, or NameMismatchError naming where the name stops fitting."""
        head, tail = self.literals[0], self.literals[-1]
        if not machine.startswith(head):
            raise self._mismatch(machine, f"it does not start with {head!r}")
        at = len(head)
        tags = {}
        for index, key in enumerate(self.keys):
            follower = self.literals[index + 1]
            last = index == len(self.keys) - 1
            if last and not follower:
                end = len(machine)
            elif machine.startswith(follower, at):
                raise self._mismatch(machine, f"{{{key}}} is empty")
            else:
                # at + 1: a value is never empty, so the follower cannot start where the value does.
                end = machine.find(follower, at + 1)
                if end < 0:
                    raise self._mismatch(machine, f"no {follower!r} after {{{key}}} (from character {at + 1})")
            value = machine[at:end]
            if not value:
                raise self._mismatch(machine, f"{{{key}}} is empty")
            if len(value) > MAX_TAG_CHARS:
                raise self._mismatch(
                    machine, f"{{{key}}} would be {len(value)} characters; a tag value has at most {MAX_TAG_CHARS}"
                )
            tags[key] = value
            at = end + len(follower)
        if at != len(machine):
            raise self._mismatch(
                machine, f"{machine[at:]!r} is left over after the first {tail!r} that follows {{{self.keys[-1]}}}"
            )
        return tags

    def tags(self, machine: str) -> dict[str, str] | None:
        """The tags the name carries, or None when it does not fit."""
        try:
            return self.parse(machine)
        except NameMismatchError:
            return None

    def format(self, values: Mapping[str, str]) -> str:
        """The name this pattern gives for these values (the inverse of parse when each value avoids its follower)."""
        parts = [self.literals[0]]
        for key, literal in zip(self.keys, self.literals[1:], strict=True):
            parts += [values[key], literal]
        return "".join(parts)

    def _mismatch(self, machine: str, reason: str) -> NameMismatchError:
        return NameMismatchError(f"machine name {machine!r} does not fit the name pattern {self.pattern!r}: {reason}")


def compile_name_pattern(pattern: str) -> NamePattern:
    """`raid{raid}_chunk{chunk_kib}_{fs}` -> NamePattern, or NamePatternError saying what is wrong and where."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise NamePatternError(f"name pattern is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS}")
    if "\x00" in pattern:
        raise NamePatternError("name pattern contains a NUL character")
    keys: list[str] = []
    literals: list[str] = []
    literal: list[str] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if pattern.startswith(("{{", "}}"), at):
            literal.append(char)
            at += 2
        elif char == "}":
            raise NamePatternError(
                f"name pattern {pattern!r}: '}}' at character {at + 1} closes nothing (write '}}}}' for a literal '}}')"
            )
        elif char == "{":
            close = pattern.find("}", at + 1)
            if close < 0:
                raise NamePatternError(
                    f"name pattern {pattern!r}: '{{' at character {at + 1} is not closed (write '{{{{' for a literal '{{')"
                )
            key = pattern[at + 1 : close]
            _check_key(pattern, key, at + 1)
            if key in keys:
                raise NamePatternError(f"name pattern {pattern!r}: {{{key}}} occurs twice")
            if keys and not literal:
                raise NamePatternError(
                    f"name pattern {pattern!r}: {{{keys[-1]}}}{{{key}}} needs text between the two placeholders, "
                    "or where one value ends is a guess"
                )
            literals.append("".join(literal))
            literal = []
            keys.append(key)
            at = close + 1
        else:
            literal.append(char)
            at += 1
    literals.append("".join(literal))
    if not keys:
        raise NamePatternError(f"name pattern {pattern!r} has no {{key}} placeholder, so it gives no tags")
    return NamePattern(pattern, tuple(keys), tuple(literals))


def _check_key(pattern: str, key: str, position: int) -> None:
    """Keys follow the rules of tag keys, plus no space or '=' (they go into `tag=KEY=VALUE` links)."""
    where = f"name pattern {pattern!r}: the placeholder at character {position}"
    if not key:
        raise NamePatternError(f"{where} has no key: write {{key}}, e.g. {{fs}}")
    if "{" in key:
        raise NamePatternError(f"{where} holds a '{{' (write '{{{{' for a literal '{{')")
    if any(char.isspace() for char in key):
        raise NamePatternError(f"{where}: key {key!r} contains a space; tag keys do not")
    if "=" in key:
        raise NamePatternError(f"{where}: key {key!r} contains '='; tag keys do not")
    if len(key) > MAX_TAG_CHARS:
        raise NamePatternError(f"{where}: key is {len(key)} characters; a tag key has at most {MAX_TAG_CHARS}")
