"""The compare page and the run page without a browser: canonical URLs, htmx partials and pushed URLs,
history restores, escaping, the tag form (and its CSRF once tokens are in use), the runner's document."""

import json
import re

import pytest

from tests.compare_data import (
    SWEEP,
    as_embedded,
    assert_absolute_bars_are_the_apis_means,
    embedded_data,
    sweep_csv,
    sweep_line,
)
from tests.helpers import (
    CONTRACT_LINE,
    DATA_DIR,
    HOSTILE,
    LINE_103,
    LINE_197,
    create_token,
    csrf_of,
    post_csv,
    post_form,
    sign_in,
    with_field,
)

HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}


@pytest.fixture
def ids(client):
    first = post_csv(client, CONTRACT_LINE, tag=["fs=ext3"], label="ext3 on RAID-5").json()["created"][0]
    second = post_csv(client, LINE_197, tag=["fs=xfs"]).json()["created"][0]
    third = post_csv(client, LINE_103).json()["created"][0]
    return first, second, third


@pytest.mark.parametrize(
    ("query", "canonical"),
    [
        ("run={a}&run={b}", "/compare?runs={a},{b}"),  # the runs list's checkboxes
        ("runs={a},{b}&run={c}", "/compare?runs={a},{b},{c}"),
        ("runs={a},{b},{a}&mode=absolute", "/compare?runs={a},{b}"),
        ("runs={a},{b}&mode=relative", "/compare?runs={a},{b}&baseline={a}&mode=relative"),
        ("runs={a},{b}&add={c}&baseline=", "/compare?runs={a},{b},{c}"),
        ("runs={a},{b},{c}&remove={a}&baseline={a}&mode=relative", "/compare?runs={b},{c}&baseline={b}&mode=relative"),
        ("runs={a},{b}&baseline=999", "/compare?runs={a},{b}"),
    ],
)
def test_other_forms_of_the_url_redirect_to_the_permalink(client, ids, query, canonical):
    a, b, c = ids
    response = client.get(f"/compare?{query.format(a=a, b=b, c=c)}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == canonical.format(a=a, b=b, c=c)


def test_the_permalink_is_the_page_and_draws_the_apis_numbers(client, ids):
    a, b, c = ids
    url = f"/compare?runs={a},{b},{c}&baseline={b}&mode=relative"
    page = client.get(url, follow_redirects=False)
    assert page.status_code == 200 and "<html" in page.text and page.headers["vary"] == "Accept-Encoding, HX-Request"
    assert "chart-4.6.1.umd.min.js" in page.text and "charts.js" in page.text
    data = embedded_data(page.text)
    assert data["compare"] == as_embedded(client.get(f"/api{url}").json())
    assert data["view"]["names"] == {
        str(a): "ext3 on RAID-5 · fs=ext3",
        str(b): "wifo3-02 · fs=xfs",
        str(c): "mindpipe",
    }
    for key in ("block_io", "seeks", "metadata", "metadata_stat", "latency", "cpu"):
        assert f'data-chart="{key}"' in page.text
    assert "+++++ too fast to measure" in page.text and "under 0.5 s" in page.text
    assert f'href="/api{url.replace("&", "&amp;")}"' in page.text


def test_htmx_gets_the_partial_and_the_url_to_push(client, ids):
    a, b, _ = ids
    response = client.get(f"/compare?runs={a},{b}&mode=relative&baseline=", headers=HTMX)
    assert response.status_code == 200 and "<html" not in response.text
    assert response.headers["hx-push-url"] == f"/compare?runs={a},{b}&baseline={a}&mode=relative"
    assert embedded_data(response.text)["compare"]["mode"] == "relative"
    removed = client.get(f"/compare?runs={a},{b}&remove={b}", headers=HTMX)
    assert removed.headers["hx-push-url"] == f"/compare?runs={a}"
    # Back after a pushed URL: htmx asks for the whole page to restore <body>
    restore = client.get(
        f"/compare?runs={a}",
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true", "HX-Request-Type": "full"},
    )
    assert "<html" in restore.text and "hx-push-url" not in restore.headers


def test_missing_runs_are_left_out_and_said_so(client, ids):
    a, _, _ = ids
    page = client.get(f"/compare?runs={a},99999", follow_redirects=False)
    assert page.status_code == 200 and "No run #99999: left out." in page.text
    assert embedded_data(page.text)["compare"]["runs"] == [{"id": a, "label": "ext3 on RAID-5"}]
    added = client.get(f"/compare?runs={a}&add=x1", headers=HTMX)
    assert "run ids" in added.text and added.headers["hx-push-url"] == f"/compare?runs={a}"


def test_nothing_to_compare_is_a_page_that_says_how(client):
    page = client.get("/compare")
    assert page.status_code == 200 and "Nothing to compare yet" in page.text and "compare-data" not in page.text
    assert client.get("/compare?runs=1,x").status_code == 400
    assert client.get("/compare?runs=1&mode=sideways").status_code == 400


def test_names_are_escaped_in_the_page_and_its_json(client):
    tag_value = HOSTILE.replace(" ", "/")  # a tag holds no space
    run_id = post_csv(
        client, with_field(CONTRACT_LINE, 2, HOSTILE), tag=f"x={tag_value}", label=f"</script>{HOSTILE}"
    ).json()["created"][0]
    other = post_csv(client, LINE_197).json()["created"][0]
    html = client.get(f"/compare?runs={run_id},{other}").text
    assert HOSTILE not in html and "</script><img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert embedded_data(html)["view"]["names"][str(run_id)] == f"</script>{HOSTILE} · x={tag_value}"


def test_runs_list_accepts_several_tags_in_its_box_and_says_when_one_is_wrong(client):
    post_csv(client, CONTRACT_LINE, tag=["raid=5", "fs=xfs"])
    post_csv(client, LINE_197, tag=["raid=5", "fs=ext3"])
    both = client.get("/", params={"tag": "raid=5 fs=xfs"}, headers=HTMX)
    assert both.text.count('name="run"') == 1 and "raid5_chunk64_ext3" in both.text
    wrong = client.get("/", params={"tag": "raid"}, headers=HTMX)
    assert wrong.status_code == 400 and "KEY=VALUE" in wrong.text and "<html" not in wrong.text
    restore = client.get("/?machine=vm", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<html" in restore.text


def test_run_page_tag_form_replaces_label_and_tags(client):
    run_id = post_csv(client, CONTRACT_LINE, tag=["a=1", "b=2"], label="old").json()["created"][0]
    page = client.get(f"/runs/{run_id}").text
    assert f'action="/runs/{run_id}/tags"' in page and f'href="/compare?runs={run_id}"' in page
    tag_value = HOSTILE.replace(" ", "/")  # a tag holds no space
    form = {"label": f"new {HOSTILE}", "key": ["a", "", "c", ""], "value": ["10", "", tag_value, ""]}
    saved = post_form(client, f"/runs/{run_id}/tags", form, follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"] == f"/runs/{run_id}"
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["label"] == f"new {HOSTILE}" and run["tags"] == {"a": "10", "c": tag_value}
    partial = post_form(client, f"/runs/{run_id}/tags", {"label": "", "key": ["a"], "value": ["1"]}, headers=HTMX)
    assert partial.status_code == 200 and "Saved." in partial.text and "<html" not in partial.text
    assert client.get(f"/api/runs/{run_id}").json()["label"] is None
    for bad, words in (
        ({"key": ["a", "a"], "value": ["1", "2"]}, "given twice"),
        ({"key": [""], "value": ["x"]}, "has no key"),
        ({"key": ["k" * 201], "value": ["x"]}, "a tag needs"),
    ):
        refused = post_form(client, f"/runs/{run_id}/tags", bad, headers=HTMX)
        assert refused.status_code == 422 and words in refused.text
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == {"a": "1"}
    assert post_form(client, "/runs/99999/tags", {"key": ["a"], "value": ["1"]}).status_code == 404


def test_run_tag_form_needs_a_signed_in_session_and_its_csrf_token_once_tokens_are_in_use(client, session):
    run_id = post_csv(client, CONTRACT_LINE).json()["created"][0]
    secret = create_token(session, "alice")
    page = client.get(f"/runs/{run_id}").text
    assert "Sign in with a token" in page and f'action="/runs/{run_id}/tags"' not in page
    assert client.post(f"/runs/{run_id}/tags", data={"key": ["a"], "value": ["1"]}).status_code == 401
    sign_in(client, secret, f"/runs/{run_id}")
    csrf = csrf_of(client.get(f"/runs/{run_id}").text)
    assert client.post(f"/runs/{run_id}/tags", data={"key": ["a"], "value": ["1"]}).status_code == 403
    assert (
        client.post(
            f"/runs/{run_id}/tags", data={"key": ["a"], "value": ["1"], "csrf_token": csrf}, headers=HTMX
        ).status_code
        == 200
    )
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == {"a": "1"}


def test_run_page_shows_the_runners_document(client):
    document = json.loads((DATA_DIR / "runner-document.json").read_text())
    line = document["runs"][0]["csv"]
    run_id = client.post("/api/runs", json={"csv": line, "document": document}).json()["created"][0]
    html = client.get(f"/runs/{run_id}").text
    assert "What the runner recorded" in html
    for text in (
        "Warnings",
        "is less than twice the RAM",
        "Per test (this line)",
        "rate_measured",
        "wall_s",
        "open_creat 1024",
        "Debian GNU/Linux",
        "mount_options",
        "bonnieboard-runner/1",
        "-n 1",
    ):
        assert text in html, text
    assert f"{document['system']['ram_bytes'] / 2**30:.1f} GiB" in html
    assert "What the runner recorded" not in client.get(f"/runs/{post_csv(client, LINE_103).json()['created'][0]}").text


def test_any_other_document_is_shown_generically_and_escaped(client):
    document = {"note": HOSTILE, "nested": {"list": [1, 2, HOSTILE], "flag": True}}
    run_id = client.post("/api/runs", json={"csv": LINE_197, "document": document}).json()["created"][0]
    html = client.get(f"/runs/{run_id}").text
    assert HOSTILE not in html and html.count("&lt;img src=x onerror=alert(1)&gt;") >= 2
    assert "<dt>flag</dt><dd>yes</dd>" in html


# ==== Configurations ====


def test_group_is_in_the_permalink_and_the_page_shows_summary_warnings_setup_and_verdict_shading(client):
    ids = []
    for fs in SWEEP:
        ids += post_csv(client, sweep_csv(fs), tag=[f"fs={fs}"]).json()["created"]
    ids.append(
        post_csv(client, with_field(sweep_line("xfs-box", 130_000, 1000), 5, "1G"), tag=["fs=big"]).json()["created"][0]
    )
    runs = ",".join(map(str, ids))
    redirect = client.get(f"/compare?runs={runs}&group=+fs%2C&mode=absolute", follow_redirects=False)
    assert redirect.headers["location"] == f"/compare?runs={runs}&group=fs"
    html = client.get(f"/compare?runs={runs}&group=fs").text
    data = embedded_data(html)
    api = client.get(f"/api/compare?runs={runs}&group=fs").json()
    assert data["compare"] == as_embedded(api)
    assert_absolute_bars_are_the_apis_means(data, api)
    assert data["view"]["configuration_names"] == {"1": "fs=ext4", "2": "fs=xfs", "3": "fs=big"}
    # the page says the ratio as its answer does (the API's summary keeps +20.0 %), in the Block I/O fold
    assert '<p id="summary">Single runs cannot tell' in html
    assert "<p>fs=xfs vs fs=ext4: block write ×1.20 faster (95 % CI" in html
    assert 'data-code="file_size_differs"' in html and "512 MiB" in html and "1024 MiB" in html
    assert 'class="chart-hints"' in html and "CPU-bound" in html and "single slowest operation" in html
    # The setup and the tables of every figure are folded: fetched when opened (htmx), or followed as links.
    assert 'class="setup-table"' not in html and 'class="heat-table' not in html
    setup = client.get(f"/compare/setup?runs={runs}&group=fs", headers=HTMX)
    assert (
        f'hx-get="/compare/setup?runs={runs}&amp;group=fs"' in html
        and f'href="/compare/setup?runs={runs}&amp;group=fs"' in html
    )
    assert setup.status_code == 200 and "<html" not in setup.text and "HX-Request" in setup.headers["vary"]
    assert 'class="setup-table"' in setup.text and f'<a href="/runs/{ids[-1]}">#{ids[-1]}</a>' in setup.text
    assert "512 MiB" in setup.text and "1024 MiB" in setup.text
    figures = client.get(f"/compare/figures?runs={runs}&group=fs", headers=HTMX).text
    assert f'hx-get="/compare/figures?runs={runs}&amp;group=fs"' in html and "<html" not in figures
    # Only put_block of fs=xfs (better) is shaded; fs=big is a single run: unknown, plain.
    shaded = re.findall(r'<td class="([^"]*heat-(?:better|worse)[^"]*)" data-verdict="(\w+)"', figures)
    assert shaded == [("num ok heat-better", "better")]
    assert 'data-verdict="within_noise"' in figures and "+1.0 % ~" in figures
    assert "95 % CI of the ratio to <strong>fs=ext4</strong> is entirely better" in figures


def test_runs_list_keeps_the_ticked_runs_in_order_and_sorts_by_upload_or_name(client, ids):
    first, second, third = ids  # machines raid5_chunk64_ext3, wifo3-02, mindpipe
    html = client.get(f"/?runs={third},{first}&sort=name", headers=HTMX).text
    assert f'<input type="hidden" id="chosen" name="runs" value="{third},{first}">' in html
    assert f"2 ticked: #{third} (baseline) #{first}" in html
    checked = re.findall(r'value="(\d+)" aria-label="select run \d+" checked', html)
    assert sorted(checked) == sorted([str(first), str(third)])
    # by name: mindpipe, raid5_chunk64_ext3, wifo3-02; by upload order: newest or oldest first
    assert re.findall(r'<a href="/runs/(\d+)">', html) == [str(third), str(first), str(second)]
    oldest = client.get("/?sort=oldest", headers=HTMX).text
    assert re.findall(r'<a href="/runs/(\d+)">', oldest) == [str(first), str(second), str(third)]
    # a filter that hides a ticked run keeps it ticked (the hidden list), and paging links carry it
    filtered = client.get(f"/?runs={third},{first}&tag=fs=xfs", headers=HTMX).text
    assert f'name="runs" value="{third},{first}"' in filtered and re.findall(r'<a href="/runs/(\d+)">', filtered) == [
        str(second)
    ]
    # what "Compare selected" sends: runs= in the order ticked, then the boxes' run=; the first is the baseline
    compare = client.get(f"/compare?runs={third},{first}&run={first}&run={third}", follow_redirects=False)
    assert compare.headers["location"] == f"/compare?runs={third},{first}"
    data = embedded_data(client.get(compare.headers["location"]).text)
    assert data["compare"]["configurations"][0]["runs"] == [third]
    assert data["compare"]["baseline_configuration"] == 1
    bad = client.get("/?sort=sideways")
    assert bad.status_code == 400 and "sort must be one of newest, oldest, name" in bad.text
    # nothing was listed: the page neither counts nor calls the board empty
    assert "No runs match" not in bad.text and not re.search(r'<p class="summary">\s*0 runs', bad.text)


def test_a_group_key_with_a_space_is_refused_with_its_name(client, ids):
    response = client.get(f"/api/compare?runs={ids[0]}&group=fs,my%20key")
    assert response.status_code == 400 and "a tag key has no spaces ('my key')" in response.json()["detail"]
    html = client.get(f"/compare?runs={ids[0]}").text
    assert 'name="group"' in html and 'pattern="[^\\s]*"' in html  # the browser says it before sending


def test_upload_result_offers_to_compare_the_runs(client):
    html = post_form(client, "/upload", {"lines": sweep_csv("ext4")}).text
    created = re.findall(r'<a href="/runs/(\d+)">', html)
    link = f'<a class="compare-these" href="/compare?runs={",".join(created)}" autofocus>Compare these runs</a></p>'
    assert link in html and "compare-relative" not in html  # one configuration: nothing to be relative to


def test_upload_result_groups_by_the_one_tag_that_varies_and_links_the_relative_view(client):
    """Machines ext4-box and xfs-box tagged fs= by the name pattern: the runs differ by fs alone, so the first link
    groups by it and the second is the same relative to fs=ext4, each the permalink the compare page answers with
    (no redirect), and the page says what it shows."""
    lines = sweep_csv("ext4") + sweep_csv("xfs")
    html = post_form(client, "/upload", {"lines": lines, "name_tags": "{fs}-box", "tags": "lab=a"}).text
    created = re.findall(r'<a href="/runs/(\d+)">', html)
    runs = ",".join(created)
    grouped = re.search(r'<a class="compare-these" href="([^"]+)" autofocus>Compare these runs grouped by fs</a>', html)
    relative = re.search(r'<a class="compare-relative" href="([^"]+)">as % vs fs=ext4</a>', html)
    assert grouped and relative, html
    assert grouped[1] == f"/compare?runs={runs}&amp;group=fs"
    assert relative[1] == f"/compare?runs={runs}&amp;baseline={created[0]}&amp;mode=relative&amp;group=fs"
    page = client.get(relative[1].replace("&amp;", "&"), follow_redirects=False)
    assert page.status_code == 200
    assert 'value="fs"' in page.text and 'value="relative" checked' in page.text


def test_upload_result_of_runs_differing_by_two_tags_groups_by_neither(client):
    lines = "".join(sweep_line(f"{fs}-{disk}", *SWEEP[fs][0]) + "\n" for fs, disk in (("ext4", "ssd"), ("xfs", "hdd")))
    html = post_form(client, "/upload", {"lines": lines, "name_tags": "{fs}-{disk}"}).text
    assert ">Compare these runs</a>" in html and "grouped by" not in html and "compare-relative" not in html


def test_the_folded_tables_are_pages_of_their_own_without_javascript(client, ids):
    """The fold's link (no JavaScript): the whole page, with the table, a link back to the comparison, and what
    the htmx fragment holds; the same reading of the query as the page (a bad one is a 400 naming it)."""
    a, b, c = ids
    query = f"runs={a},{b},{c}&baseline={b}&mode=relative"
    page = client.get(f"/compare?{query}").text
    for table, title, marker in (
        ("setup", "Setup of the runs compared", 'class="setup-table"'),
        ("figures", "Every figure of the comparison", 'class="heat-table heat-value"'),
    ):
        assert f'href="/compare/{table}?{query.replace("&", "&amp;")}"' in page
        whole = client.get(f"/compare/{table}?{query}")
        assert whole.status_code == 200 and "<html" in whole.text and f"<h1>{title}</h1>" in whole.text
        assert marker in whole.text and f'<a href="/compare?{query.replace("&", "&amp;")}">' in whole.text
        fragment = client.get(f"/compare/{table}?{query}", headers=HTMX).text
        assert fragment.strip() and fragment.strip() in whole.text
        gzipped = client.get(f"/compare/{table}?{query}", headers={"Accept-Encoding": "gzip"})
        assert gzipped.headers["content-encoding"] == "gzip" and gzipped.text == whole.text
    figures = client.get(f"/compare/figures?{query}", headers=HTMX).text
    # rates, %CPU and latency (two of the runs have latencies): two header rows and three configurations each
    assert figures.count('<table class="heat-table') == 3 and figures.count("<tr") == 3 * (2 + 3)
    missing = client.get(f"/compare/setup?runs={a},99999")
    assert missing.status_code == 200 and "No run #99999: left out." in missing.text
    assert client.get("/compare/figures?runs=1,x").status_code == 400
    assert client.get(f"/compare/figures?runs={a}&mode=sideways").status_code == 400
    assert "No runs to show" in client.get("/compare/figures?runs=99999", headers=HTMX).text


def test_a_50_run_page_stays_light_and_its_tables_are_a_fold_away(client):
    """50 runs, each its own configuration (50 machines, each with a block write of its own): the page is at most
    200 KB with at most 1,500 elements (bench/page_weight.py measures it in a browser), and the folded tables hold a
    row per run and per configuration."""
    lines = [
        with_field(with_field(CONTRACT_LINE, 2, f"phone-weight-host-{i:02d}"), 11, str(100_000 + 997 * i))
        for i in range(50)
    ]
    ids = post_csv(client, "\n".join(lines) + "\n", tag=["fs=ext4", "raid=5"]).json()["created"]
    assert len(ids) == 50
    for mode in ("absolute", "relative"):
        page = client.get(f"/compare?runs={','.join(map(str, ids))}&mode={mode}")
        assert page.status_code == 200
        assert len(page.content) <= 200_000, (mode, len(page.content))
        elements = len(re.findall(r"<[a-zA-Z]", page.text))
        assert elements <= 1_500, (mode, elements)
        assert len(embedded_data(page.text)["view"]["charts"][0]["bars"]) == (50 if mode == "absolute" else 49)
    query = f"runs={','.join(map(str, ids))}"
    setup = client.get(f"/compare/setup?{query}", headers=HTMX).text
    assert setup.count("<tr>") == 1 + 50
    figures = client.get(f"/compare/figures?{query}", headers=HTMX).text
    assert figures.count('<tr data-configuration="') + figures.count('<tr class="is-baseline"') == 50 * 3


def test_a_long_too_fast_note_counts_configurations(client):
    """The note lists one entry per configuration (its name and tests), so its count says configurations."""
    ids = [post_csv(client, with_field(CONTRACT_LINE, 4, str(seed))).json()["created"][0] for seed in range(4)]
    html = client.get(f"/compare?runs={','.join(map(str, ids))}&group=none").text
    block_io = html[html.index('id="figure-block_io"') :]
    note = re.search(r'<li class="note-too_fast">.*?</li>', block_io, re.S)
    assert note is not None
    assert "<strong>+++++ too fast to measure</strong>: 4 configurations</summary>" in note.group(0)
    assert note.group(0).count("rewrite") == 4
