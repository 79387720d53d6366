"""Property-based (Hypothesis) tests of the ingest service on a real database: for any sequence of
uploads mixing new, repeated, already-stored and invalid lines, with or without `partial`, the database
ends up holding each distinct valid line exactly once, an all-or-nothing upload stores nothing when it
fails, and the outcome names every line: created ids for new lines, the existing id for each duplicate.
The uploads go in as bytes (ingest_bytes), once through the compiled path and once through the parser alone."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.errors import InvalidUpload
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES, ParsedRun, iter_parse_bytes
from app.ingest.service import ingest_bytes
from app.store.models import Tag, Upload, run_table
from tests.helpers import LINE_103, LINE_197, distinct_lines, with_field

VALID = [*distinct_lines("prop", 6), LINE_103, LINE_197]
INVALID = [with_field(LINE_197, 13, "x"), "garbage", "1.98,2.00a,short", LINE_103.replace("3002", "-1")]
SKIPPED = ["# a comment", ""]
LINES = st.sampled_from(VALID + INVALID + SKIPPED)
UPLOAD = st.tuples(st.lists(LINES, max_size=10), st.booleans(), st.sampled_from([None, {"fs": "xfs"}]))


def stored(session) -> dict[str, int]:
    return dict(session.execute(select(run_table.c.raw_line, run_table.c.id)).all())


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uploads=st.lists(UPLOAD, min_size=1, max_size=4))
def test_each_distinct_valid_line_is_stored_once(session, ingest_path, uploads):
    for lines, partial, tags in uploads:
        before = stored(session)
        uploads_before = session.scalar(select(func.count()).select_from(Upload))
        data = "\n".join(lines).encode()
        parsed = list(iter_parse_bytes(data))
        valid = [item.raw_line for item in parsed if isinstance(item, ParsedRun)]
        error_lines = [item.line for item in parsed if not isinstance(item, ParsedRun)]
        assert len(valid) + len(error_lines) == sum(1 for line in lines if line not in SKIPPED)
        try:
            outcome = ingest_bytes(
                session=session,
                data=data,
                max_line_bytes=DEFAULT_MAX_LINE_BYTES,
                partial=partial,
                source="api",
                tags=tags,
            )
            session.commit()
        except InvalidUpload as exc:
            session.rollback()
            assert not valid or (error_lines and not partial)
            assert [e.line for e in exc.errors] == error_lines
            assert stored(session) == before  # nothing of a refused upload is kept
            assert session.scalar(select(func.count()).select_from(Upload)) == uploads_before
            continue

        assert valid and (partial or not error_lines)
        after = stored(session)
        assert set(after) == set(before) | set(valid)
        assert [e.line for e in outcome.errors] == error_lines
        # Walk the lines in order: a first sighting of a new line takes the next created id, anything
        # else is a duplicate naming the id that line has.
        created, duplicates, seen = iter(outcome.created), iter(outcome.duplicates), set()
        for line in valid:
            if line not in before and line not in seen:
                assert next(created) == after[line]
            else:
                assert next(duplicates) == after[line]
            seen.add(line)
        assert next(created, None) is None and next(duplicates, None) is None
        assert set(outcome.created).isdisjoint(before.values())
        tagged = set(session.scalars(select(Tag.run_id).where(Tag.key == "fs")))
        assert set(outcome.created) <= tagged if tags else set(outcome.created).isdisjoint(tagged)
