"""app.store.samples on SQLite and PostgreSQL: the sample data's runs (tag source=sample_data), its studies by
their `sweep` tag with the tags that tell configurations apart, and the page-cache caveat."""

from __future__ import annotations

from app.store import samples
from tests.helpers import LINE_198, post_csv, with_field


def sweep_line(machine: str, seed: int) -> str:
    return with_field(with_field(LINE_198, 2, machine), 4, str(seed))  # 512M on each line


def test_no_sample_data_no_studies(client, session):
    post_csv(client, LINE_198, tag=["sweep=mine"])  # a study of one's own is not the sample data
    assert samples.sample_data(session=session) is None


def test_studies_group_by_the_tags_that_vary_leaving_out_one_another_determines(client, session):
    ids = []
    for fs, dev in (("ext4", "loop"), ("xfs", "loop"), ("tmpfs", "ram")):
        for mode in ("async", "sync"):
            for seed in (1, 2):
                tags = [f"fs={fs}", f"dev={dev}", f"mode={mode}", "sweep=media", "ram_mib=1024", "source=sample_data"]
                ids += post_csv(client, sweep_line(f"{fs}-{mode}", seed), tag=tags).json()["created"]
    post_csv(client, sweep_line("other", 9), tag=["set=lab1", "source=sample_data"])
    post_csv(client, sweep_line("small", 9), tag=["sweep=second", "fs=a", "ram_mib=256", "source=sample_data"])
    post_csv(client, sweep_line("small", 10), tag=["sweep=second", "fs=b", "ram_mib=256", "source=sample_data"])
    post_csv(client, sweep_line("not-a-sample", 9), tag=["sweep=media", "fs=zfs"])
    found = samples.sample_data(session=session)
    assert found is not None and found.run_count == 12 + 1 + 2 and found.sets == ["lab1"]
    media, second = found.studies
    # dev is known from fs (loop for ext4 and xfs, ram for tmpfs): grouping by it too would add nothing.
    assert (media.name, media.run_ids, media.group_keys, media.configurations) == (
        "media",
        tuple(ids),
        ("fs", "mode"),
        6,
    )
    assert media.runs_per_configuration == 2
    # 512 MiB files on a 1,024 MiB machine fit the page cache; on a 256 MiB machine they do not.
    assert (media.file_size_mib, media.ram_mib, media.page_cache) == (512, 1024, True)
    assert (second.name, second.group_keys, second.configurations, second.page_cache) == ("second", ("fs",), 2, False)
