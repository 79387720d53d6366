"""The JSON shapes of the API (docs: api-contract.md). ORM rows never cross the wire."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from app.bonnie import MIN_TIME_S, TESTS, UNITS
from app.columns import FILE_TEST_COLUMNS, RESULT_PARTS, RUN_LINE_COLUMNS, result_column
from app.limits import MAX_LABEL_CHARS, MAX_TAG_CHARS, MAX_TAGS_PER_RUN, TAG_SPACES

if TYPE_CHECKING:
    from app.store.models import Run

Status = Literal["ok", "too_fast", "not_run"]

# What app.ingest.validation's check_tag and check_label accept, for the OpenAPI description. They answer
# 400 with their own message, so these document the rule rather than have pydantic enforce it (422).
_NO_NUL = "^[^\\x00]*$"


def _tag_param_schema(*, spaces: bool) -> WithJsonSchema:
    refused, rule = ("\\x00", "no NUL") if spaces else (f"{TAG_SPACES}\\x00", "no space, no NUL")
    return WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^[^={refused}]{{1,{MAX_TAG_CHARS}}}=[^{refused}]{{0,{MAX_TAG_CHARS}}}$",
            "description": f"KEY=VALUE: a key of 1 to {MAX_TAG_CHARS} characters without '=', a value of at most {MAX_TAG_CHARS}; {rule}",
        }
    )


TAG_PARAM_SCHEMA = _tag_param_schema(spaces=False)
# A filter also finds tags stored before spaces were refused (app.tags.parse_tag_filters).
TAG_FILTER_PARAM_SCHEMA = _tag_param_schema(spaces=True)
_LABEL = {"type": "string", "maxLength": MAX_LABEL_CHARS, "pattern": _NO_NUL}
_TAGS = {
    "type": "object",
    "maxProperties": MAX_TAGS_PER_RUN,
    "propertyNames": {"minLength": 1, "maxLength": MAX_TAG_CHARS, "pattern": f"^[^={TAG_SPACES}\\x00]*$"},
    "additionalProperties": {"type": "string", "maxLength": MAX_TAG_CHARS, "pattern": f"^[^{TAG_SPACES}\\x00]*$"},
}
LABEL_PARAM_SCHEMA = WithJsonSchema(_LABEL)
# The free-text filters: what app.ingest.validation.check_filter_text takes (a machine may be as long as a line).
FILTER_TEXT_PARAM_SCHEMA = WithJsonSchema(_LABEL)
MACHINE_FILTER_PARAM_SCHEMA = WithJsonSchema({"type": "string", "pattern": _NO_NUL})


class ResultOut(BaseModel):
    """One test's result: the RESULT_PARTS of app.columns, and the value's unit."""

    status: Status
    value: int | float | None
    unit: str
    cpu_pct: int | None
    latency_us: int | None


class FileTestOut(BaseModel):
    num_files: int = Field(description="bonnie++'s -n number, in units of 1024 files")
    max_size: int | None
    min_size: int | None
    num_dirs: int | None
    link: Literal["link", "symlink"] | None


class RunOut(BaseModel):
    id: int
    upload_id: int
    created_at: datetime
    machine: str
    format_version: str
    bonnie_version: str | None
    concurrency: int | None
    seed: str | None
    file_size_mib: int | None
    io_chunk_bytes: int | None
    seek_count: int | None
    seek_procs: int | None
    file_test: FileTestOut | None
    label: str | None
    tags: dict[str, str]
    raw_line: str
    results: dict[str, ResultOut]

    @classmethod
    def from_run(cls, run: Run) -> Self:
        """A stored run in the API's JSON shape (docs: api-contract.md, "A run as JSON"); pages show the same."""
        fields = run_fields(
            {name: getattr(run, name) for name in RUN_COLUMNS}, {tag.key: tag.value for tag in run.tags}
        )
        if "document" in cls.model_fields:
            fields["document"] = run.document
        return cls.model_validate(fields)


# The run columns RunOut shows.
RUN_COLUMNS = (
    "id",
    "upload_id",
    "created_at",
    *RUN_LINE_COLUMNS,
    *FILE_TEST_COLUMNS,
    "label",
    "raw_line",
    *(result_column(test, part) for test in TESTS for part in RESULT_PARTS),
)
_RESULT_COLUMNS = tuple((test, tuple((part, result_column(test, part)) for part in RESULT_PARTS)) for test in TESTS)
_FILE_TEST_FIELDS = tuple(zip(FileTestOut.model_fields, FILE_TEST_COLUMNS, strict=True))  # FileTest's order


def run_fields(run: Mapping[str, Any], tags: dict[str, str]) -> dict[str, Any]:
    """A stored run (its columns by name: RUN_COLUMNS at least) as RunOut's fields in plain values: model_validate
    checks them in one pass, where building the nested models one by one cost as much as the rest of /api/runs."""
    created_at = run["created_at"]
    return {
        "id": run["id"],
        "upload_id": run["upload_id"],
        # SQLite gives back naive datetimes; every run was stored in UTC.
        "created_at": created_at if created_at.tzinfo else created_at.replace(tzinfo=UTC),
        **{column: run[column] for column in RUN_LINE_COLUMNS},
        # None when the file tests did not run.
        "file_test": None if run["num_files"] is None else {field: run[column] for field, column in _FILE_TEST_FIELDS},
        "label": run["label"],
        "tags": tags,
        "raw_line": run["raw_line"],
        "results": {
            test: {"unit": UNITS[test], **{part: run[column] for part, column in parts}}
            for test, parts in _RESULT_COLUMNS
        },
    }


class RunDetailOut(RunOut):
    document: Any = None


class RunList(BaseModel):
    total: int
    total_is_estimate: bool = False  # beyond app.store.runs.COUNT_LIMIT matches: a lower bound or an estimate
    items: list[RunOut]


class LineErrorOut(BaseModel):
    line: int
    field: str | None
    error: str


class ConvertedRunOut(BaseModel):
    line: int = Field(description="the line of the pasted text where this run's report starts")
    run_id: int
    csv_line: str = Field(description="the CSV line written from the report, as stored")
    notes: list[str] = Field(description="what the report did not carry exactly: missing, assumed, rounded")
    stored_before: bool = Field(
        False,
        description="the report is of run `run_id`, stored before as its CSV line (`csv_line`): not stored again, "
        "and `run_id` is among `duplicates`",
    )


class SkippedOut(BaseModel):
    line: int = Field(description="the first line of this stretch of the pasted text that was not read")
    count: int = Field(description="how many lines of the stretch were not read (blank lines and # comments aside)")
    text: str = Field(description="the start of that first line, at most 80 characters")


class UploadOut(BaseModel):
    upload_id: int
    created: list[int]
    duplicates: list[int]
    errors: list[LineErrorOut] = Field(description="the first 100 invalid lines (with partial=true)")
    error_count: int = Field(description="how many lines are invalid in all")
    tagged: list[int] = Field(
        default_factory=list, description="runs already stored (among duplicates) that this upload gave new tags"
    )
    converted: list[ConvertedRunOut] = Field(
        default_factory=list, description="runs read from a pasted bonnie++ text report, with what was not exact"
    )
    replayed: bool = Field(
        False,
        description="the Idempotency-Key's upload was stored before: `upload_id` is that upload, `duplicates` its "
        "runs, and nothing was stored now (status 200)",
    )
    skipped: list[SkippedOut] = Field(
        default_factory=list,
        description="in a paste holding a text report, the stretches of lines that neither a report nor a CSV line "
        "took (prose, progress messages, stray lines after a report): the first 20",
    )
    skipped_count: int = Field(0, description="how many lines of the paste were not read in all")


class ErrorOut(BaseModel):
    detail: str
    errors: list[LineErrorOut] | None = Field(None, description="an invalid upload's first 100 invalid lines")
    error_count: int | None = Field(
        None,
        description="how many lines of an invalid upload are invalid in all; 101 when reading stopped there "
        "(without partial=true, after the 100th: the detail says so)",
    )


class JsonUpload(BaseModel):
    """What the runner posts: its CSV line(s), its system/per-test document, tags and a label."""

    model_config = ConfigDict(extra="forbid")

    csv: str
    document: dict[str, Any] | None = None
    tags: Annotated[dict[str, str], WithJsonSchema(_TAGS)] = Field(default_factory=dict)
    label: Annotated[str | None, WithJsonSchema({"anyOf": [_LABEL, {"type": "null"}]})] = None
    name_tags: str | None = Field(
        None, description="a name pattern, e.g. raid{raid}_{fs}: each machine name gives tags"
    )
    time: str | None = Field(
        None,
        description="when the runs were measured (ISO 8601): their time on history when the document gives no "
        "started_at",
    )


class RunPatch(BaseModel):
    """Each key given replaces that whole value: `tags` replaces the run's tag set."""

    model_config = ConfigDict(extra="forbid")

    label: Annotated[str | None, WithJsonSchema({"anyOf": [_LABEL, {"type": "null"}]})] = None
    tags: Annotated[dict[str, str] | None, WithJsonSchema({"anyOf": [_TAGS, {"type": "null"}]})] = None


# ==== GET /api/compare: configurations, statistics, verdicts ====


class HintOut(BaseModel):
    code: str = Field(
        description="stable: cpu_bound, cached, too_fast, high_spread, per_char, worst_latency, or the runner's"
    )
    text: str


class WarningOut(BaseModel):
    code: str = Field(
        description="stable: file_size_differs, chunk_size_differs, file_test_differs, seeks_differs, "
        "concurrency_differs, family_differs, seek_cpu_differs, ram_differs, high_spread; /api/matrix also "
        "family_tests_left_out"
    )
    text: str


class CompareRunOut(BaseModel):
    id: int
    label: str


class SeriesOut(BaseModel):
    run: int
    values: list[float | None]
    status: list[str]


class CellFiguresOut(BaseModel):
    """A configuration's figures for one test (app.compare.engine' CELL_FIGURES) and, unless it is the baseline,
    their comparison with the baseline's: shared by /api/compare's cells and /api/matrix's."""

    status: str = Field(description="ok when n > 0, else too_fast, not_run or no_latency")
    n: int = Field(description="measured values: +++++ and not-run results are not counted")
    n_too_fast: int
    n_not_run: int
    mean: float | None = Field(description="arithmetic mean of the measured values: the bar's height")
    median: float | None
    sd: float | None = Field(description="sample standard deviation; null below n = 2")
    cv_pct: float | None = Field(description="100 * sd / mean (arithmetic)")
    geo_mean: float | None = Field(
        description="geometric mean of the measured values: the centre of ci95 (null with a value ≤ 0)"
    )
    ci95: list[float] | None = Field(
        description="[low, high]: 95 % CI of the geometric mean, geo_mean ×/÷ exp(t · SE of the logs), rounding "
        "variance included: never below zero; with a value ≤ 0, Student's t of the arithmetic mean cut at 0"
    )
    ratio: float | None = Field(description="arithmetic mean / the baseline's arithmetic mean")
    ratio_ci95: list[float] | None = Field(
        description="[low, high]: 95 % CI of the ratio of geometric means (Welch's t on log values, rounding "
        "variance included), for this comparison alone: not adjusted for the page's other comparisons"
    )
    geo_ratio: float | None = Field(
        description="geometric mean / the baseline's geometric mean: the ratio the CI and the verdict are built on"
    )
    p_value: float | None = Field(
        description="raw two-sided p of Welch's t on the logs (equal geometric means); for a rate test with +++++ "
        "runs, of an exact rank test (Mann–Whitney, every +++++ run tied above every measured rate); null without "
        "either"
    )
    p_adjusted: float | None = Field(
        description="p_value after Holm's adjustment over every verdict of its kind on the page (rates together, "
        "latency apart; CPU per unit of work apart, in cpu_per_work_p_adjusted): what the verdict reads"
    )
    too_fast_above: float | None = Field(
        description="the rate this configuration's +++++ runs of the test are above: the test's work in bonnie++'s "
        f"shortest measurable time, {MIN_TIME_S:g} s (files: the line's number of files × 1024; block I/O: the file size in KiB), "
        "the lowest of its runs'; "
        "null without +++++ runs, for seeks, and when a run's size is unknown"
    )
    bound_ratio: float | None = Field(
        description="with +++++ runs on one side only: every run of this configuration over every run of the "
        "baseline's, the +++++ ones at their too_fast_above — above 1, the lowest here over the highest there (at "
        "least this many times faster); under 1, the highest here over the lowest there (at least 1/this slower); "
        "null when nothing holds whatever the +++++ runs were, or below two runs on a side"
    )
    verdict: Literal["better", "worse", "within_noise", "unknown"] | None = Field(
        description="better/worse when p_adjusted < 0.05 and geo_ratio is at least min_effect away from 1, "
        "within_noise otherwise, unknown below two measured values on a side or with a value ≤ 0; with +++++ "
        "runs on a side, better/worse only when p_adjusted (the rank test's) < 0.05 and bound_ratio is at least "
        "min_effect away from 1, else unknown; "
        "null for the baseline itself and for every %CPU cell (%CPU is shown as it is: cpu_per_work_verdict "
        "judges CPU)"
    )
    detectable_pct: float | None = Field(
        description="within_noise cells only: the smallest change (%, either way, two significant figures) this "
        "page finds 80 % of the time when it is the only one, at these runs and spreads: the power of its own test "
        "(Welch's t at the df the runs show, Holm's first step over the m verdicts of the kind, min_effect on the "
        "estimate), never below min_effect − 1"
    )
    runs_needed: int | None = Field(
        description="within_noise cells only: the fewest runs a side at which a 10 % change (twice min_effect − 1 "
        "when that is more) is found 80 % of the time at the two sides' spreads seen, the power as for "
        "detectable_pct"
    )
    work_unit: str | None = Field(
        description="%CPU cells: the unit of cpu_per_work — CPU-s/MiB (block I/O), CPU-s/1,000 seeks, "
        "CPU-s/1,000 files; null elsewhere"
    )
    cpu_per_work: float | None = Field(
        description="%CPU cells: mean over the measured runs of %CPU / 100 / rate, in work_unit (4 significant figures)"
    )
    cpu_per_work_ci95: list[float] | None = Field(
        description="[low, high]: 95 % CI of the geometric mean of cpu_per_work (rounding of both printed figures "
        "included)"
    )
    cpu_per_work_ratio: float | None = Field(
        description="%CPU cells: the geometric-mean ratio of CPU per unit of work to the baseline's; null with "
        "+++++ runs on a side (no %CPU for them)"
    )
    cpu_per_work_ratio_ci95: list[float] | None = Field(description="[low, high]: its 95 % CI (Welch's t on logs)")
    cpu_per_work_p_value: float | None = Field(description="raw two-sided p of Welch's t on the logs")
    cpu_per_work_p_adjusted: float | None = Field(
        description="after Holm's adjustment over every CPU-per-work verdict of the page"
    )
    cpu_per_work_verdict: Literal["better", "worse", "within_noise", "unknown"] | None = Field(
        description="%CPU cells: as verdict, lower is better (less CPU for the same work); null for the baseline "
        "and outside the %CPU chart"
    )


def _only_counts_required(schema: dict[str, Any]) -> None:
    schema["required"] = [name for name in schema.get("required", []) if name in COMPARE_CELL_REQUIRED]


# What every /api/compare cell holds; it leaves out the figures that are null (one run has no sd, ci95 or p_value;
# only %CPU cells have the cpu_per_work figures): a missing figure reads as null.
COMPARE_CELL_REQUIRED = ("test", "status", "n", "n_too_fast", "n_not_run", "hints")


class CellStatsOut(CellFiguresOut):
    """One configuration's figures for one test, and (unless it is the baseline configuration) its
    comparison with the baseline configuration's. A null figure is left out."""

    model_config = ConfigDict(json_schema_extra=_only_counts_required)

    test: str
    hints: list[HintOut]


class ChartConfigurationOut(BaseModel):
    configuration: int
    tests: list[CellStatsOut] = Field(description="in the order of the chart's tests")


class CompareChartOut(BaseModel):
    key: str
    unit: str
    higher_is_better: bool
    tests: list[str]
    series: list[SeriesOut] = Field(description="one per run (the baseline run has none in relative mode)")
    configurations: list[ChartConfigurationOut]
    hints: list[HintOut] = Field(description="hints that hold for the whole chart")


class ConfigurationOut(BaseModel):
    id: int
    name: str
    runs: list[int]
    tags: dict[str, str] = Field(description="the tags all its runs share")


class SetupRowOut(BaseModel):
    run: int
    configuration: int
    machine: str
    version: str
    file_size_mib: int | None
    file_test: str
    io_chunk_bytes: int | None
    seeks: str
    concurrency: int | None
    ram_mib: int | None
    tags: dict[str, str]


class CompareOut(BaseModel):
    mode: Literal["absolute", "relative"]
    baseline: int | None
    runs: list[CompareRunOut]
    group: str = Field(description="params, none, or the tag keys separated by commas")
    configurations: list[ConfigurationOut]
    baseline_configuration: int = Field(description="the configuration the others' ratios and verdicts are against")
    min_effect: float = Field(description="the smallest ratio (either way) a verdict calls better or worse")
    error_control: Literal["holm"] = Field(
        description="how the page's verdicts share their 5 % error: Holm over every verdict of a kind"
    )
    charts: list[CompareChartOut]
    warnings: list[WarningOut]
    setup: list[SetupRowOut]
    summary: str


FamilyKey = Literal["block_io", "per_char", "seeks", "metadata"]


class MatrixFamilyOut(BaseModel):
    family: FamilyKey
    title: str
    tests: list[str] = Field(
        description="the family's tests every run of every cell of the view measured: the same in every cell"
    )
    of: int = Field(description="the family's tests in all: the summary is over len(tests) of them")
    geomean: float | None = Field(
        description="geometric mean over the cell's runs of each run's geometric mean over `tests`; null without tests"
    )
    ci95: list[float] | None = Field(description="[low, high]: 95 % CI of geomean (log scale, rounding included)")
    ratio_geomean: float | None = Field(description="geomean / the baseline cell's: null for the baseline")
    ratio_ci95: list[float] | None = Field(description="[low, high]: 95 % CI of ratio_geomean (Welch's t on logs)")
    p_value: float | None = Field(description="raw two-sided p of Welch's t on the logs")
    p_adjusted: float | None = Field(description="after Holm's adjustment over every family verdict of the view")
    verdict: Literal["better", "worse", "within_noise", "unknown"] | None = Field(
        description="as a cell's verdict, over the family (higher is better); unknown below two runs a cell; null "
        "for the baseline and without tests"
    )


class ExcludedTestOut(BaseModel):
    test: str
    reason: str = Field(description="where a run printed +++++, did not run it, or measured 0")


class MatrixViewFamilyOut(BaseModel):
    family: FamilyKey
    title: str
    tests: list[str] = Field(description="the tests the family summaries are over")
    of: int
    excluded: list[ExcludedTestOut] = Field(description="the family's other tests, each with why it is left out")


class MatrixCellOut(CellFiguresOut):
    """One configuration's cell: its figures of the matrix's test, and per family of tests its summary against
    the baseline cell (geometric means, CI and verdict)."""

    configuration: int
    name: str
    runs: list[int]
    baseline: bool = Field(description="this is the baseline configuration's cell")
    families: list[MatrixFamilyOut]


class MatrixRowOut(BaseModel):
    value: str = Field(description="the row key's value; '—' for runs without that tag")
    cells: list[MatrixCellOut | None] = Field(description="one per column, in order; null where no run sits")


class MatrixOut(BaseModel):
    """GET /api/matrix: configurations pivoted by two tag keys (app.compare.matrix.build)."""

    rows_key: str
    cols_key: str
    test: str
    unit: str
    higher_is_better: bool
    runs: list[int]
    baseline: int | None = Field(description="the run whose configuration is the baseline, when one was asked for")
    baseline_configuration: int
    min_effect: float = Field(description="the smallest ratio (either way) a verdict calls better or worse")
    columns: list[str] = Field(description="the column key's values, in order")
    rows: list[MatrixRowOut]
    configurations: list[ConfigurationOut]
    families: list[MatrixViewFamilyOut] = Field(
        description="per family of tests, the tests its summaries are over and those left out with the reason"
    )
    warnings: list[WarningOut]
    compare_url: str = Field(description="the same runs on the /compare page, grouped by both keys")
