# bonnieboard: the web app, installed from its wheel (templates, static files and migrations are package
# data), so the image holds no source tree and runs from any directory.
FROM python:3.11-slim AS build
# app/ingest/_plain_lines.c (the compiled ingest path) needs a compiler and Python's headers (the image has them).
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY app ./app
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
RUN pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BONNIEBOARD_DATABASE_URL=sqlite:////data/bonnieboard.db
COPY --from=build /dist /dist
# The dependencies from the lock (each file checked against its hash), then the wheel alone.
COPY requirements.lock /tmp/requirements.lock
# uid 10001 owns /data. A bind mount (-v /srv/bb:/data) must be writable by that uid
# (chown 10001 /srv/bb); otherwise `serve` stops with one line saying so.
RUN pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock \
 && pip install --no-cache-dir --no-deps /dist/*.whl \
 && rm -rf /dist /tmp/requirements.lock \
 && useradd --system --uid 10001 --user-group --home-dir /data bonnieboard \
 && mkdir -p /data && chown bonnieboard:bonnieboard /data

USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8000
# The image has no curl: Python asks /api/health, which needs no token.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]
# `serve` runs the migrations first. Behind a reverse proxy on another host, add
# --forwarded-allow-ips with its address (README: Behind a reverse proxy).
CMD ["bonnieboard", "serve", "--host", "0.0.0.0", "--port", "8000"]
