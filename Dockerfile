# One image for every Plumbline process (gateway, worker, beat, simulator, migrations).
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY plumbline ./plumbline
COPY gateway ./gateway
COPY evals ./evals
COPY workers ./workers
COPY simulator ./simulator
COPY migrations ./migrations
COPY apps ./apps
RUN pip install --no-cache-dir .
# The gateway's spool (a named volume in docker-compose.yml) takes this owner when first mounted.
RUN mkdir -p /var/lib/plumbline/spool && chown -R nobody:nogroup /var/lib/plumbline
USER nobody
ENTRYPOINT ["plumbline"]
