# One image for every Plumbline process (gateway, worker, beat, simulator, migrations).
# The wheel is built in a stage with a C compiler, so the compiled logprob scanner
# (plumbline/_logprob_scan.c, the recorder's reader) is in it; the image it runs in stays slim.
FROM python:3.11-slim AS wheel
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY plumbline ./plumbline
COPY gateway ./gateway
COPY evals ./evals
COPY workers ./workers
COPY simulator ./simulator
COPY migrations ./migrations
COPY apps ./apps
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && python -m zipfile -l /wheels/plumbline-*.whl | grep -q '_logprob_scan.*\.so'

FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
# The gateway's spool (a named volume in docker-compose.yml) takes this owner when first mounted.
RUN mkdir -p /var/lib/plumbline/spool && chown -R nobody:nogroup /var/lib/plumbline
USER nobody
ENTRYPOINT ["plumbline"]
