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
RUN pip install --no-cache-dir .
USER nobody
ENTRYPOINT ["plumbline"]
