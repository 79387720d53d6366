"""The sample data on a board: the runs `make samples` tagged source=sample_data, and its studies (the runs
sharing a `study` tag, as `bonnieboard-runner sweep` posts them, or a `sweep` tag, as a hand-made sweep's), so that
the runs list can say what they are and link a comparison of each study."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import run_table, tag_table

SOURCE_KEY, SOURCE_VALUE = "source", "sample_data"
# The tag naming a run's study: a `study` tag, else a `sweep` tag.
STUDY_KEYS = ("study", "sweep")
# What `bonnieboard-runner sweep` tags for its own bookkeeping: never a configuration's difference.
SWEEP_BOOKKEEPING_KEYS = frozenset({"round", "order_seed"})
# The sweep names each configuration in this tag: a study that has it groups by it alone.
CONFIG_KEY = "config"
# Sample data is a few dozen runs; a board that tags many more runs as samples is read up to this many.
MAX_SAMPLE_RUNS = 1000
# A machine with this many sample runs is offered as a history (a machine over time).
MIN_HISTORY_RUNS = 20


@dataclass(frozen=True, slots=True)
class Study:
    """One study of the sample data: its runs, and the tag keys whose values tell its configurations apart."""

    name: str  # the value of its study tag
    tag_key: str  # which tag names it: "study" or "sweep"
    run_ids: tuple[int, ...]
    group_keys: tuple[str, ...]
    configurations: int
    file_size_mib: int | None  # the largest -s of its runs
    ram_mib: int | None  # its `ram_mib` tag: the machine's RAM

    @property
    def page_cache(self) -> bool:
        """Under twice the RAM, bonnie++'s file fits in the page cache: the reads (and writes until the kernel
        writes them back) measure memory, not the disk."""
        return self.file_size_mib is not None and self.ram_mib is not None and self.file_size_mib < 2 * self.ram_mib

    @property
    def runs_per_configuration(self) -> int | None:
        """How often each configuration ran, when every one ran as often; else None."""
        return len(self.run_ids) // self.configurations if len(self.run_ids) % self.configurations == 0 else None


@dataclass(frozen=True, slots=True)
class SampleData:
    run_count: int
    studies: list[Study]
    sets: list[str]  # the `set` tags of the other sample runs
    histories: list[tuple[str, int]]  # machines with MIN_HISTORY_RUNS sample runs or more, and their run counts


def sample_data(*, session: Session) -> SampleData | None:
    """What the board holds of the sample data, or None when it holds none."""
    source = tag_table.alias("source")
    sample_ids = (
        select(source.c.run_id)
        .where(source.c.key == SOURCE_KEY, source.c.value == SOURCE_VALUE)
        .order_by(source.c.run_id)
        .limit(MAX_SAMPLE_RUNS)
        .subquery()
    )
    rows = session.execute(
        select(tag_table.c.run_id, tag_table.c.key, tag_table.c.value)
        .where(tag_table.c.run_id.in_(select(sample_ids.c.run_id)))
        .order_by(tag_table.c.run_id)
    ).all()
    if not rows:
        return None
    tags: dict[int, dict[str, str]] = {}
    for run_id, key, value in rows:
        tags.setdefault(run_id, {})[key] = value
    by_study: dict[tuple[str, str], list[int]] = {}
    for run_id, run_tags in tags.items():
        if key := _study_key(run_tags):
            by_study.setdefault((key, run_tags[key]), []).append(run_id)
    sizes = dict(
        session.execute(
            select(run_table.c.id, run_table.c.file_size_mib).where(
                run_table.c.id.in_([run_id for run_ids in by_study.values() for run_id in run_ids])
            )
        ).all()
    )
    studies = [_study(key, name, run_ids, tags, sizes) for (key, name), run_ids in by_study.items()]
    # A study whose file the disk had to answer for comes before one the page cache answered.
    studies.sort(key=lambda study: (study.page_cache, study.name))
    sets = sorted({run_tags["set"] for run_tags in tags.values() if "set" in run_tags and not _study_key(run_tags)})
    histories = session.execute(
        select(run_table.c.machine, func.count())
        .where(run_table.c.id.in_(list(tags)))
        .group_by(run_table.c.machine)
        .having(func.count() >= MIN_HISTORY_RUNS)
        .order_by(run_table.c.machine)
    ).all()
    return SampleData(len(tags), studies, sets, [(machine, count) for machine, count in histories])


def _study_key(run_tags: dict[str, str]) -> str | None:
    return next((key for key in STUDY_KEYS if key in run_tags), None)


def _study(
    tag_key: str, name: str, run_ids: list[int], tags: dict[int, dict[str, str]], sizes: dict[int, int | None]
) -> Study:
    keys = sorted(
        {key for run_id in run_ids for key in tags[run_id]} - {SOURCE_KEY, *STUDY_KEYS} - SWEEP_BOOKKEEPING_KEYS
    )
    if CONFIG_KEY in keys:
        keys = [CONFIG_KEY]
    values = {key: [tags[run_id].get(key) for run_id in run_ids] for key in keys}
    # The keys that tell configurations apart, most values first; a key that another kept key already
    # determines (dev=loop for every fs=xfs) would only lengthen every configuration's name.
    varying: tuple[str, ...] = ()
    for key in sorted((key for key in keys if len(set(values[key])) > 1), key=lambda key: -len(set(values[key]))):
        if not any(len(set(zip(values[kept], values[key], strict=True))) == len(set(values[kept])) for kept in varying):
            varying += (key,)
    configurations = len({tuple(tags[run_id].get(key) for key in varying) for run_id in run_ids})
    measured = [size for run_id in run_ids if (size := sizes.get(run_id)) is not None]
    rams = {tags[run_id].get("ram_mib") for run_id in run_ids}
    ram = rams.pop() if len(rams) == 1 else None
    ram_mib = int(ram) if ram is not None and ram.isdigit() else None
    return Study(name, tag_key, tuple(run_ids), varying, configurations, max(measured, default=None), ram_mib)
