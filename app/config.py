"""Settings: the one place that reads the environment (prefix BONNIEBOARD_)."""

import difflib
import ipaddress
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# The names a browser uses for a board on this machine (Host headers, any port). A page on another name
# that resolves to 127.0.0.1 (DNS rebinding) is same-origin with its own requests here: its Host is its own.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")

# The smallest ratio (either way) a verdict calls better or worse when neither BONNIEBOARD_MIN_EFFECT nor the URL
# says (asv uses 1.1). ×1 asks for every difference the test holds; beyond ×10 no bonnie++ change is ever called
# better or worse.
DEFAULT_MIN_EFFECT = 1.05
MIN_EFFECT_RANGE = (1.0, 10.0)


PREFIX = "BONNIEBOARD_"
# BONNIEBOARD_ variables that are not the server's and pass: the runner's token (one shell may run both), and the
# test suite's own.
OTHERS_VARIABLES = frozenset({"BONNIEBOARD_TOKEN"})
OTHERS_PREFIX = "BONNIEBOARD_TEST_"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore")

    database_url: str = Field(
        "sqlite:///./bonnieboard.db",
        description="Any SQLAlchemy URL; PostgreSQL as postgresql+psycopg://user:pass@host/db.",
    )
    api_token: str | None = Field(
        None,
        description="When set, every API write needs 'Authorization: Bearer <token>' with this or a created token.",
    )
    private_reads: bool = Field(False, description="When true, reading runs needs a token too.")
    max_line_bytes: int = Field(4096, gt=0, description="Longer lines are rejected as errors of their own.")
    max_upload_bytes: int = Field(33_554_432, gt=0, description="Larger uploads are refused with 413.")
    read_timeout_s: float = Field(
        30,
        gt=0,
        description="PostgreSQL stops a read (a list, a filter, a comparison) that runs longer (statement_timeout); "
        "the request then gets 503.",
    )
    body_timeout_s: float = Field(
        120, gt=0, description="A request body that has not arrived whole within this many seconds gets 408."
    )
    header_timeout_s: float = Field(
        10,
        gt=0,
        description="`bonnieboard serve` closes a connection whose request line and headers have not arrived "
        "within this many seconds.",
    )
    compare_cache_mib: int = Field(
        64,
        ge=0,
        description="Memory each server worker may keep comparisons in (/api/compare, /compare; also the matrix "
        "and the runs list's pages), reused until the data changes; 0 turns the cache off.",
    )
    secret_key: str | None = Field(
        None,
        description="Signs browser session cookies. When unset, `bonnieboard serve` makes a random key that its "
        "workers share, so browser sessions end when the server restarts.",
    )

    allowed_hosts: Annotated[tuple[str, ...] | None, NoDecode] = Field(
        None,
        description="Host names (comma-separated; '*.example.com' for subdomains, '*' for any) the board answers "
        "to; another Host header gets 400. Unset: loopback names when `bonnieboard serve` listens on loopback "
        "(and whenever the app is not started by `serve`), any name otherwise.",
    )
    max_document_bytes: int = Field(
        1_048_576,
        gt=0,
        description="A runner document (the JSON upload's `document`) larger than this (as UTF-8 JSON) is refused "
        "with 413; the runner's is about 10 KB.",
    )
    root_path: str | None = Field(
        None,
        description="The path prefix the board is served under behind a proxy that strips it (e.g. /bb): every "
        "link, form, redirect and URL in an answer starts with it; `serve --root-path` sets it.",
    )
    min_effect: float = Field(
        DEFAULT_MIN_EFFECT,
        ge=MIN_EFFECT_RANGE[0],
        le=MIN_EFFECT_RANGE[1],
        description="The smallest ratio (either way) a comparison's verdict calls better or worse, unless its URL "
        "says min_effect=; asv uses 1.1.",
    )

    ingest_path: Literal["compiled", "python"] = Field(
        "compiled",
        description="'python' sends every uploaded line through the parser, where the compiled extension would store "
        "the plain ones (to compare the two, or to rule the extension out); both store the same rows.",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_unknown_variables(cls, values: Any) -> Any:
        # A misspelt setting would leave its default in force without a word (BONNIEBOARD_MIN_EFECT=1.2 compares
        # at 1.05): every other BONNIEBOARD_ variable is refused, by name, before anything starts.
        unknown = unknown_variables(os.environ)
        if unknown:
            raise ValueError("; ".join(unknown))
        return values

    @field_validator("api_token", "secret_key")
    @classmethod
    def _empty_is_unset(cls, value: str | None) -> str | None:
        # `BONNIEBOARD_API_TOKEN=` (as Docker and systemd files write it) means "no token", not "the empty token".
        return value or None

    @field_validator("secret_key")
    @classmethod
    def _long_enough(cls, value: str | None) -> str | None:
        if value is not None and len(value) < 16:
            raise ValueError("BONNIEBOARD_SECRET_KEY must be at least 16 characters")
        return value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            value = [name.strip().lower() for name in value.split(",") if name.strip()]
        return value or None  # empty (`BONNIEBOARD_ALLOWED_HOSTS=`) means unset, as for the token

    @field_validator("allowed_hosts")
    @classmethod
    def _host_patterns(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in value or ():
            # Starlette's TrustedHostMiddleware matches a name, '*' or a leading '*.' wildcard, without a port.
            if "*" in name[1:] or (name.startswith("*") and name != "*" and not name.startswith("*.")):
                raise ValueError(f"BONNIEBOARD_ALLOWED_HOSTS: {name!r} is not a name, '*.example.com' or '*'")
            if ":" in name and not (name.startswith("[") and name.endswith("]")):
                raise ValueError(
                    f"BONNIEBOARD_ALLOWED_HOSTS: {name!r}: name a host without its port (any port matches), "
                    "an IPv6 address in brackets"
                )
        return value

    @field_validator("root_path")
    @classmethod
    def _root_path(cls, value: str | None) -> str | None:
        value = (value or "").rstrip("/")  # "/" and "" both mean no prefix; "/bb/" is "/bb"
        if value and (
            not value.startswith("/")
            or value.startswith("//")
            or not value.isascii()
            or any(c in value for c in "?#%\\ ")
        ):
            raise ValueError(f"BONNIEBOARD_ROOT_PATH: {value!r} is not a path such as /bb")
        return value or None

    @field_validator("database_url")
    @classmethod
    def _known_scheme(cls, url: str) -> str:
        if not url.startswith(("sqlite", "postgresql")):
            raise ValueError("BONNIEBOARD_DATABASE_URL must be a sqlite:// or postgresql+psycopg:// URL")
        return url


def setting_names() -> list[str]:
    return [PREFIX + name.upper() for name in Settings.model_fields]


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """Each variable of `environ` that looks like a setting and is none, said with the settings closest to it
    (names are matched in any case, as pydantic-settings reads them)."""
    known = setting_names()
    found = []
    for variable in sorted(environ):
        name = variable.upper()
        if not name.startswith(PREFIX) or name in known or name in OTHERS_VARIABLES or name.startswith(OTHERS_PREFIX):
            continue
        # Matched without the prefix every name shares, which would make any two names look alike.
        closest = difflib.get_close_matches(name.removeprefix(PREFIX), [k.removeprefix(PREFIX) for k in known], n=2)
        hint = (
            f"did you mean {' or '.join(PREFIX + c for c in closest)}?"
            if closest
            else f"the settings are {', '.join(known)}"
        )
        found.append(f"{variable} is not a setting: {hint}")
    return found


def default_allowed_hosts(bind_host: str) -> tuple[str, ...]:
    """BONNIEBOARD_ALLOWED_HOSTS when unset, for `serve --host bind_host`: on loopback only loopback names can
    reach the board, so any other is a rebinding page's; on another address the names that reach it (DNS
    names, a proxy's, a Docker host's) cannot be known here, so any is accepted (and serve warns)."""
    try:
        loopback = bind_host == "localhost" or ipaddress.ip_address(bind_host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost
        loopback = False
    return LOOPBACK_HOSTS if loopback else ("*",)


# Values never repeated in a message: secrets, and the database URL, which may hold a password.
_UNSHOWN_VALUES = {"api_token", "secret_key", "database_url"}


def describe_invalid_settings(error: ValidationError) -> str:
    """One line naming each wrong BONNIEBOARD_ variable and why: a start-up with a wrong setting ends with
    this line, not a traceback. Secrets and the database URL are named, never shown."""
    parts = []
    for item in error.errors():
        if not item["loc"]:  # the whole environment's: an unknown variable, already named in the message
            parts.append(str(item["msg"]).removeprefix("Value error, "))
            continue
        field = str(item["loc"][0])
        name = f"BONNIEBOARD_{field.upper()}"
        message = str(item["msg"]).removeprefix("Value error, ").removeprefix(f"{name}: ").removeprefix(f"{name} ")
        value = item["input"]
        shown = field not in _UNSHOWN_VALUES and isinstance(value, str) and repr(value) not in message
        parts.append(f"{name}: {message}" + (f" (it is {value!r})" if shown else ""))
    return "; ".join(parts)


@lru_cache
def get_settings() -> Settings:
    return Settings()
