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
    # The study the disk answered for (512 MiB files on a 256 MiB machine) comes before the page cache's.
    second, media = found.studies
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


def test_a_study_the_sweep_posted_groups_by_its_config_tag_alone(client, session):
    """`bonnieboard-runner sweep` tags study=, config=, round= and order_seed=: the rounds are repeats of one
    configuration, never configurations, and config names them even where fs also varies."""
    ids = []
    for round_number in (1, 2, 3):
        for config, fs in (("ext4", "ext4"), ("xfs-log", "xfs"), ("xfs", "xfs")):
            tags = ["study=s1", f"config={config}", f"fs={fs}", f"round={round_number}", "order_seed=7"]
            machine = f"{config}-{round_number}"
            ids += post_csv(client, sweep_line(machine, round_number), tag=[*tags, "source=sample_data"]).json()[
                "created"
            ]
    found = samples.sample_data(session=session)
    assert found is not None
    (study,) = found.studies
    assert (study.name, study.tag_key, study.run_ids, study.group_keys) == ("s1", "study", tuple(ids), ("config",))
    assert (study.configurations, study.runs_per_configuration) == (3, 3)
