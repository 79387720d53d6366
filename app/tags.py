"""What a tag is, for who stores it (ingest, the CLI) and who filters by it (the pages, the API, the matrix).

Pure, and imports nothing of the app but the limits and the errors: a filter of runs is checked the same way in
every layer, and none of them imports another's for it."""

from __future__ import annotations

import re

from app.errors import BadRequest
from app.limits import MAX_TAG_CHARS, TAG_SPACES

# Each tag filter is a join; hundreds make PostgreSQL plan for 35 s and SQLite run out of
# expression depth.
MAX_TAG_FILTERS = 20
TAG_SPACE = re.compile(f"[{TAG_SPACES}]")


def parse_tag_params(values: list[str], *, spaces_allowed: bool = False) -> dict[str, str]:
    """`tag=KEY=VALUE` query parameters -> {KEY: VALUE}."""
    tags = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep:
            raise BadRequest(f"tag {item[:50]!r} is not of the form KEY=VALUE")
        check_tag(key, value, spaces_allowed=spaces_allowed)
        tags[key] = value
    return tags


def check_tag(key: str, value: str, *, spaces_allowed: bool = False) -> None:
    if not key or len(key) > MAX_TAG_CHARS or len(value) > MAX_TAG_CHARS:
        raise BadRequest(f"a tag needs a key of 1 to {MAX_TAG_CHARS} characters and a value of at most {MAX_TAG_CHARS}")
    if "\x00" in key or "\x00" in value:
        raise BadRequest("a tag may not contain a NUL character")
    if not is_unicode(key) or not is_unicode(value):
        raise BadRequest("a tag may not contain a lone surrogate (\\ud800-\\udfff): it is not Unicode text")
    # Tags travel as `tag=KEY=VALUE` in links and as space-separated KEY=VALUE in the page forms: a space
    # would split one tag in two there (its own filter link answered 400), a '=' in a key would move the split.
    if not spaces_allowed and TAG_SPACE.search(key + value):
        raise BadRequest(f"tag {(key + '=' + value)[:80]!r} contains a space; use '-' or '_' instead")
    if "=" in key:
        raise BadRequest(f"tag key {key[:40]!r} contains '='; a key may not")


def parse_tag_filters(values: list[str]) -> dict[str, str]:
    """Tag filters of a listing: like parse_tag_params, at most MAX_TAG_FILTERS of them, and spaces allowed:
    tags stored before the rule against them (`os=Debian 12`) are still found by `tag=os=Debian%2012`."""
    if len(values) > MAX_TAG_FILTERS:
        raise BadRequest(f"at most {MAX_TAG_FILTERS} tag filters at once; {len(values)} were given")
    return parse_tag_params(values, spaces_allowed=True)


# Where the filter box's text ("raid=5 fs=xfs os=Debian 12") splits: at spaces before a KEY= word.
_BEFORE_A_TAG = re.compile(f"[{TAG_SPACES}]+(?=[^{TAG_SPACES}=]+=)")


def split_tag_terms(text: str) -> list[str]:
    """The runs page's filter text -> its KEY=VALUE terms. A word without '=' belongs to the value before it,
    with the spaces between kept: the link of a tag stored before spaces were refused finds that tag."""
    text = text.strip()
    return _BEFORE_A_TAG.split(text) if text else []


def is_unicode(text: str) -> bool:
    # JSON's \ud800 escapes decode to lone surrogates, which neither UTF-8 nor the databases take.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
