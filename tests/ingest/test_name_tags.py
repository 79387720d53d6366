"""Name patterns: examples from real sweeps, every pattern error, and Hypothesis round trips."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from app.ingest.name_tags import (
    MAX_TAG_CHARS,
    NameMismatchError,
    NamePatternError,
    compile_name_pattern,
)


@pytest.mark.parametrize(
    ("pattern", "machine", "tags"),
    [
        ("raid{raid}_chunk{chunk_kib}_{fs}", "raid5_chunk64_ext3", {"raid": "5", "chunk_kib": "64", "fs": "ext3"}),
        (
            "raid{raid}_chunk{chunk_kib}_{fs}",
            "raid6_chunk256_xfs_log",
            {"raid": "6", "chunk_kib": "256", "fs": "xfs_log"},
        ),
        ("sweep-{fs}-{dev}-{mode}", "sweep-ext4-loop-sync", {"fs": "ext4", "dev": "loop", "mode": "sync"}),
        ("sweep-{fs}-{dev}-{mode}", "sweep-tmpfs-ram-async", {"fs": "tmpfs", "dev": "ram", "mode": "async"}),
        ("{host}.example.org", "db1.example.org", {"host": "db1"}),
        ("{host}", "my host, rack 2", {"host": "my host, rack 2"}),  # names are raw text: spaces and commas
        ("{a}.{b}", "x..y", {"a": "x", "b": ".y"}),  # a value is never empty, so it may start with its follower
        ("{{{raid}}}-{fs}", "{5}-xfs", {"raid": "5", "fs": "xfs"}),  # {{ and }} are literal braces
        ("node{n}(rack{rack})", "node12(rack3)", {"n": "12", "rack": "3"}),  # no regex: ( ) . * are just text
    ],
)
def test_names_give_tags(pattern, machine, tags):
    assert compile_name_pattern(pattern).tags(machine) == tags


@pytest.mark.parametrize(
    ("pattern", "machine", "reason"),
    [
        ("raid{raid}_chunk{chunk_kib}_{fs}", "raid5-ext3", "no '_chunk' after {raid} (from character 5)"),
        ("raid{raid}_chunk{chunk_kib}_{fs}", "xraid5_chunk64_ext3", "it does not start with 'raid'"),
        ("raid{raid}_chunk{chunk_kib}_{fs}", "raid_chunk64_ext3", "{raid} is empty"),
        ("raid{raid}_chunk{chunk_kib}_{fs}", "raid5_chunk64_", "{fs} is empty"),
        (
            "{host}.example.org",
            "db1.example.org.uk",
            "'.uk' is left over after the first '.example.org' that follows {host}",
        ),
        ("{host}.lab", "a.lab.b.lab", "'.b.lab' is left over"),  # the value ends at the FIRST follower
        ("{a}", "x" * (MAX_TAG_CHARS + 1), f"{{a}} would be {MAX_TAG_CHARS + 1} characters"),
    ],
)
def test_names_that_do_not_fit_say_where(pattern, machine, reason):
    compiled = compile_name_pattern(pattern)
    assert compiled.tags(machine) is None
    with pytest.raises(NameMismatchError) as caught:
        compiled.parse(machine)
    assert f"machine name {machine!r} does not fit the name pattern {pattern!r}: " in str(caught.value)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("raid{raid", "'{' at character 5 is not closed (write '{{' for a literal '{')"),
        ("raid}", "'}' at character 5 closes nothing"),
        ("{a}{b}", "{a}{b} needs text between the two placeholders"),
        ("{}", "the placeholder at character 1 has no key"),
        ("x{a{b}", "holds a '{'"),
        ("{chunk kib}", "key 'chunk kib' contains a space"),
        ("{a\tb}", "contains a space"),
        ("{a=b}", "key 'a=b' contains '='"),
        ("{fs}_{fs}", "{fs} occurs twice"),
        ("raid5_ext3", "has no {key} placeholder"),
        ("", "has no {key} placeholder"),
        ("{a}\x00", "NUL"),
        ("{" + "k" * (MAX_TAG_CHARS + 1) + "}", f"a tag key has at most {MAX_TAG_CHARS}"),
        ("{a}" + "-" * 600, "at most 500"),
    ],
)
def test_bad_patterns_say_what_is_wrong(pattern, message):
    with pytest.raises(NamePatternError) as caught:
        compile_name_pattern(pattern)
    assert message in str(caught.value)


def test_compiled_pattern_parts():
    compiled = compile_name_pattern("raid{raid}_chunk{chunk_kib}_{fs}")
    assert compiled.keys == ("raid", "chunk_kib", "fs")
    assert compiled.literals == ("raid", "_chunk", "_", "")


# ---- round trips ----

keys = st.text(
    st.characters(blacklist_characters="{}= \x00", blacklist_categories=("Zs", "Zl", "Zp", "Cc")),
    min_size=1,
    max_size=8,
)
texts = st.text(st.characters(blacklist_characters="\x00"), max_size=6)
values = st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=10)


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


@st.composite
def patterns_with_values(draw):
    """(pattern text, literals, keys, values): literals between placeholders are non-empty."""
    count = draw(st.integers(1, 4))
    names = draw(st.lists(keys, min_size=count, max_size=count, unique=True))
    literals = [draw(texts)] + [draw(texts.filter(bool)) for _ in range(count - 1)] + [draw(texts)]
    chosen = [draw(values) for _ in range(count)]
    pattern = _escape(literals[0]) + "".join(
        f"{{{key}}}{_escape(lit)}" for key, lit in zip(names, literals[1:], strict=True)
    )
    return pattern, literals, names, chosen


@given(patterns_with_values())
def test_format_then_parse_gives_the_values_back(case):
    """When no value holds (the start of) the literal that follows it, parsing the formatted name is exact."""
    pattern, literals, names, chosen = case
    for value, follower in zip(chosen, literals[1:], strict=True):
        if follower:
            # The follower's first occurrence in value+follower must be where the value ends.
            assume((value + follower).find(follower) == len(value))
    compiled = compile_name_pattern(pattern)
    assert compiled.keys == tuple(names)
    name = compiled.format(dict(zip(names, chosen, strict=True)))
    assert compiled.parse(name) == dict(zip(names, chosen, strict=True))


@given(patterns_with_values(), st.text(max_size=30))
def test_a_parse_always_formats_back_to_the_name(case, machine):
    """Whatever a name gives, formatting it gives the name again: parse never invents or drops text."""
    pattern, *_ = case
    compiled = compile_name_pattern(pattern)
    tags = compiled.tags(machine)
    if tags is not None:
        assert compiled.format(tags) == machine
        assert all(tags.values())
