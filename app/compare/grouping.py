"""Configurations: which runs are repeats of one setup.

A configuration is a set of runs whose figures are summarised together (mean, CI, verdicts). The
grouping is part of a comparison's URL (`group=`):

- `group=params` (the default): runs with the same machine name and the same bonnie++ parameters —
  CSV format, file size, chunk size, file-test spec (-n), seeks, seekers and concurrency — so the
  lines of one `bonnie++ -x 3` group by themselves;
- `group=KEY,KEY,...`: runs with the same values of these tags (`group=fs,raid`); a run without one
  of the tags groups with the others that lack it;
- `group=none`: every run is its own configuration.

Configurations keep the order of their first run in the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.compare.figures import RunFigures

BY_PARAMS, UNGROUPED = "params", "none"
MAX_GROUP_KEYS = 10
UNSET = "—"  # shown for a grouping tag a run does not have


@dataclass(frozen=True, slots=True)
class Grouping:
    """BY_PARAMS, UNGROUPED, or `keys`: tag keys."""

    keys: tuple[str, ...] = ()
    kind: str = BY_PARAMS

    @property
    def spelling(self) -> str:
        """How the URL says it: params, none or KEY,KEY."""
        return ",".join(self.keys) if self.keys else self.kind


DEFAULT = Grouping()


@dataclass(frozen=True, slots=True)
class Configuration:
    id: int  # 1, 2, ... in the order of first appearance
    name: str
    runs: tuple[RunFigures, ...]
    tags: dict[str, str]  # the tags every run of it has, with the same value


def telling_key(tags: Sequence[Mapping[str, str]]) -> str | None:
    """The one tag key whose values tell runs apart (a run without it counts as one more value), given each run's
    tags; None when no key or more than one varies: which to group by is then the reader's choice."""
    keys = {key for run in tags for key in run}
    varying = [key for key in keys if len({run.get(key) for run in tags}) > 1]
    return varying[0] if len(varying) == 1 else None


def params_key(run: RunFigures) -> tuple[object, ...]:
    setup = run.setup
    return (
        run.machine,
        run.format_version,
        setup.file_size_mib,
        setup.io_chunk_bytes,
        setup.file_test,
        setup.seek_count,
        setup.seek_procs,
        setup.concurrency,
    )


def group_runs(runs: Sequence[RunFigures], grouping: Grouping) -> list[Configuration]:
    """The configurations of `runs` (in the order asked), named for a legend."""
    members: dict[object, list[RunFigures]] = {}
    for run in runs:
        if grouping.kind == UNGROUPED:
            key: object = run.id
        elif grouping.keys:
            key = tuple(run.tags.get(k) for k in grouping.keys)
        else:
            key = params_key(run)
        members.setdefault(key, []).append(run)
    groups = list(members.values())
    names = _names(groups, grouping)
    return [Configuration(i + 1, names[i], tuple(group), _common_tags(group)) for i, group in enumerate(groups)]


def _common_tags(group: list[RunFigures]) -> dict[str, str]:
    first = group[0].tags
    return {key: value for key, value in first.items() if all(run.tags.get(key) == value for run in group[1:])}


def _names(groups: list[list[RunFigures]], grouping: Grouping) -> list[str]:
    """By tags: "fs=xfs raid=5". Otherwise the label (when the runs share one) or the machine, plus
    the tags that differ between configurations; "#n" is added where names would collide."""
    if grouping.keys:
        names = [" ".join(f"{k}={group[0].tags.get(k, UNSET)}" for k in grouping.keys) for group in groups]
    else:
        commons = [_common_tags(group) for group in groups]
        keys = sorted({key for tags in commons for key in tags})
        differing = [key for key in keys if len({tags.get(key) for tags in commons}) > 1]
        names = []
        for group, tags in zip(groups, commons, strict=True):
            labels = {run.label for run in group}
            first = group[0]
            base = (labels.pop() if len(labels) == 1 and first.label else first.machine) or f"run {first.id}"
            extra = " ".join(f"{key}={tags[key]}" for key in differing if key in tags)
            names.append(f"{base} · {extra}" if extra else base)
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [f"{name} #{group[0].id}" if counts[name] > 1 else name for name, group in zip(names, groups, strict=True)]
