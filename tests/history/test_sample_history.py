"""The sample history `make run` loads (sample_data/history/nightly-loop: 22 nights of ext4 and xfs on a throttled
loop device, made with the runner): `bonnieboard ingest` finds its changes after storing it, and the board shows
the throttle halved at night 9 on both filesystems and ext4's mount options changed at night 15 as setup changes,
each at its night; the front page offers it; a browser at phone width reads it without a script error."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from app.bonnie import TOO_FAST_MEANING
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, running_server
from tests.sample_board import load_samples

pytestmark = pytest.mark.slow  # the whole sample data, a real server and browser

THROTTLE_NIGHT, MOUNT_NIGHT = 9, 15  # sample_data/README.md
PHONE = {"width": 390, "height": 844}


def _night(time: str) -> int:
    return int(time[8:10])  # 2026-10-NN: night N


def test_the_sample_history_shows_the_throttle_and_the_mount_change_at_their_nights(tmp_path):
    with running_server(load_samples(tmp_path)) as base_url:
        body = httpx.get(f"{base_url}/api/history", params={"machine": "nightly-loop"}).json()
        assert body["group"] == ["fs"]
        by_fs = {series["configuration"]: series for series in body["series"]}
        assert set(by_fs) == {"fs=ext4", "fs=xfs"} and all(s["runs"] == 22 for s in by_fs.values())
        for name, series in by_fs.items():
            rates = {t["test"]: t for t in series["tests"] if t["measure"] == "rate"}
            for test in ("put_block", "rewrite", "get_block"):
                (halved,) = [
                    c for c in rates[test]["changes"] if c["kind"] == "setup_change" and "throttle" in c["label"]
                ]
                assert _night(halved["time"]) == THROTTLE_NIGHT, (name, test, halved)
                assert 0.4 < halved["ratio"] < 0.6, (name, test, halved)
                assert "32 MiB/s" in halved["label"] and "→ read 16 MiB/s" in halved["label"]
        ext4_creates = {t["test"]: t for t in by_fs["fs=ext4"]["tests"] if t["measure"] == "rate"}["seq_create"]
        (mount,) = [c for c in ext4_creates["changes"] if c["kind"] == "setup_change"]
        assert _night(mount["time"]) == MOUNT_NIGHT
        assert mount["label"] == "setup change: mount options rw,relatime → rw,noatime,dirsync"
        assert [_night(s["time"]) for s in by_fs["fs=ext4"]["setup_changes"]] == [THROTTLE_NIGHT, MOUNT_NIGHT]
        assert [_night(s["time"]) for s in by_fs["fs=xfs"]["setup_changes"]] == [THROTTLE_NIGHT]
        # Stored by the ingest: the board's list of changes has them before anyone opened the page.
        listed = httpx.get(f"{base_url}/api/changes").json()["changes"]
        assert {c["run"] for c in listed} >= {mount["run"]}
        # Seeks were +++++ in every run, and no bound says above what: named in words, not drawn as an empty chart.
        page = httpx.get(f"{base_url}/history", params={"machine": "nightly-loop"}).text
        assert 'data-test="seeks"' not in page
        assert f"random seeks: {TOO_FAST_MEANING} in every run" in page
        front = httpx.get(f"{base_url}/").text
        assert 'href="/history?machine=nightly-loop"' in front

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport=PHONE).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{base_url}/history?machine=nightly-loop")
            # Newest first, by the night they start at: ext4's mount change is one entry naming its tests.
            mount = page.locator(".change-group", has_text="mount options rw,relatime → rw,noatime,dirsync")
            expect(mount).to_have_count(1)
            expect(mount.locator(".change-list li")).to_have_count(4)
            assert mount.bounding_box()["y"] < 2 * PHONE["height"]
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            page.screenshot(path=str(tmp_path / "sample-history-390.png"))
            page.screenshot(path=str(tmp_path / "sample-history-390-full.png"), full_page=True)
            browser.close()
            assert errors == []
