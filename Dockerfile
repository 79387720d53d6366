# bonnieboard: the web app. Same install and start as `make run` (pip install -e ., bonnieboard serve).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BONNIEBOARD_DATABASE_URL=sqlite:////data/bonnieboard.db

WORKDIR /srv/bonnieboard
COPY pyproject.toml README.md ./
COPY app ./app
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir -e . \
 && useradd --system --uid 10001 --home-dir /data bonnieboard \
 && mkdir -p /data && chown bonnieboard /data

USER bonnieboard
VOLUME /data
EXPOSE 8000
# `serve` runs the migrations first.
CMD ["bonnieboard", "serve", "--host", "0.0.0.0", "--port", "8000"]
