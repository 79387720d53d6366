"""compose.yaml: bonnieboard and PostgreSQL in one file. No container engine runs here, so the file is checked for
what it promises: it parses; PostgreSQL has a pg_isready health check that bonnieboard waits for; the data is in a
named volume; every BONNIEBOARD_ variable it passes is one app/config.py reads, and with .env.example's values
filled in they make valid settings pointing at the postgres service; the secrets come from .env; and what it
assumes of the image (its port, its command, the Dockerfile it builds) is what the Dockerfile says.
docker-compose (Debian's) then checks it against the Compose schema, as `docker compose` would read it."""

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from sqlalchemy import make_url

from app.config import Settings
from tests.runner.test_runner import require_tool

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
FILLED = {  # .env as a user fills it in
    "POSTGRES_PASSWORD": "0123456789abcdef0123456789abcdef",
    "BONNIEBOARD_SECRET_KEY": "fedcba9876543210fedcba9876543210",
    "BONNIEBOARD_ALLOWED_HOSTS": "board.example,localhost",
    "BONNIEBOARD_API_TOKEN": "",
}


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} against env."""

    def one(match: re.Match) -> str:
        name, operator, rest = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if operator == ":?":
            raise ValueError(f"{name}: {rest}")
        return rest if operator == ":-" else ""

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", one, value)


def env_example() -> dict[str, str]:
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_postgres_is_healthy_before_bonnieboard_starts_and_keeps_its_data_in_a_named_volume():
    assert set(SERVICES) == {"bonnieboard", "postgres"}
    postgres = SERVICES["postgres"]
    check = postgres["healthcheck"]["test"]
    assert check[0] == "CMD-SHELL" and shlex.split(check[1])[0] == "pg_isready"
    assert f"--username={postgres['environment']['POSTGRES_USER']}" in check[1]
    assert SERVICES["bonnieboard"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    (volume,) = postgres["volumes"]
    name, target = volume.split(":")
    assert name in COMPOSE["volumes"] and target == "/var/lib/postgresql/data"  # the image's PGDATA
    assert re.fullmatch(r"postgres:15(\.\d+)?", postgres["image"])  # the major version the tests use


def test_bonnieboard_gets_only_settings_the_app_reads_and_they_are_valid():
    environment = SERVICES["bonnieboard"]["environment"]
    read = {f"BONNIEBOARD_{name.upper()}" for name in Settings.model_fields}
    assert set(environment) <= read, set(environment) - read
    assert {"BONNIEBOARD_DATABASE_URL", "BONNIEBOARD_SECRET_KEY", "BONNIEBOARD_ALLOWED_HOSTS"} <= set(environment)
    # The secrets come from .env, and compose refuses to start without them.
    for name in ("BONNIEBOARD_SECRET_KEY", "POSTGRES_PASSWORD"):
        with pytest.raises(ValueError, match=name):
            interpolate(str(environment) + str(SERVICES["postgres"]["environment"]), FILLED | {name: ""})
    assert set(env_example()) == set(FILLED)  # .env.example names every variable the file takes from .env
    # As the container sees them: valid settings (the same checks `serve` makes at start).
    values = {name: interpolate(str(value), FILLED) for name, value in environment.items()}
    settings = Settings(**{name.removeprefix("BONNIEBOARD_").lower(): value for name, value in values.items()})
    url = make_url(settings.database_url)
    postgres = SERVICES["postgres"]["environment"]
    assert url.drivername == "postgresql+psycopg" and url.host == "postgres"  # the service's name on its network
    assert (url.username, url.database) == (postgres["POSTGRES_USER"], postgres["POSTGRES_DB"])
    assert url.password == FILLED["POSTGRES_PASSWORD"]
    assert settings.secret_key == FILLED["BONNIEBOARD_SECRET_KEY"]
    assert settings.allowed_hosts == ("board.example", "localhost")
    assert settings.api_token is None  # empty means no token


def test_what_it_assumes_of_the_image_is_what_the_dockerfile_builds():
    bonnieboard = SERVICES["bonnieboard"]
    assert bonnieboard["build"] == "." and (ROOT / "Dockerfile").is_file()
    (exposed,) = re.findall(r"^EXPOSE (\d+)$", DOCKERFILE, re.M)
    (published,) = bonnieboard["ports"]
    assert published == f"127.0.0.1:{exposed}:{exposed}"
    command = bonnieboard["command"]
    assert command[:2] == ["bonnieboard", "serve"]
    assert command[command.index("--port") + 1] == exposed and command[command.index("--host") + 1] == "0.0.0.0"
    assert re.search(r"^CMD \[\"bonnieboard\", \"serve\"", DOCKERFILE, re.M)  # the same program the image runs
    assert "HEALTHCHECK" in DOCKERFILE and "/api/health" in DOCKERFILE  # compose relies on the image's check
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored, "the secrets in .env must not go into the image's build context"
    assert ".env" in (ROOT / ".gitignore").read_text().split()


def test_docker_compose_reads_it_as_the_compose_schema_says(tmp_path):
    """Debian's docker-compose validates the file and resolves it with a .env, without an engine."""
    compose = require_tool("docker-compose", "docker-compose")
    (tmp_path / "compose.yaml").write_text((ROOT / "compose.yaml").read_text())
    (tmp_path / ".env").write_text("".join(f"{name}={value}\n" for name, value in FILLED.items()))
    resolved = subprocess.run(
        [compose, "--project-directory", tmp_path, "-f", tmp_path / "compose.yaml", "config"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resolved.returncode == 0, resolved.stderr
    service = yaml.safe_load(resolved.stdout)["services"]["bonnieboard"]
    assert service["environment"]["BONNIEBOARD_DATABASE_URL"] == (
        f"postgresql+psycopg://bonnie:{FILLED['POSTGRES_PASSWORD']}@postgres:5432/bonnieboard"
    )
    assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=x\n")  # no secret key: compose refuses, naming it
    refused = subprocess.run(
        [compose, "--project-directory", tmp_path, "-f", tmp_path / "compose.yaml", "config"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0 and "BONNIEBOARD_SECRET_KEY" in refused.stderr
