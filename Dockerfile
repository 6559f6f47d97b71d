# syntax=docker/dockerfile:1
# One image for the server and the operator (docs/design.md#layering, docs/cluster.md): non-root,
# the int8 MiniLM built in.
#
#   docker build -t ragdown .
#   docker run -p 3000:3000 -v "$PWD/examples/notes:/data/docs/notes" -e RAGDOWN_TOKEN=dev-token ragdown
#       serves the folders under /data/docs (MCP at http://127.0.0.1:3000/mcp/<folder>; metrics on 9090)
#   docker run --entrypoint ragdown-operator --no-healthcheck ragdown
#       runs the operator (it serves no /healthz on PORT, hence --no-healthcheck); in Kubernetes the
#       chart sets `command: ["ragdown-operator"]` and its own probes (HEALTHCHECK is Docker-only)

# Build arguments:
#   PYTHON_IMAGE    the base of both stages (a stand-in built from Debian packages where no registry is
#                   reachable: tests and bench build one)
#   BAKE_EMBEDDERS  hub embedders to download into the image, space-separated (e.g. "bge-small"), for
#                   clusters without egress to the model hub; the int8 MiniLM is always built in
ARG PYTHON_IMAGE=python:3.12-slim

# --- builder: a venv with ragdown installed, and the int8 model built once ------------------------
FROM ${PYTHON_IMAGE} AS builder
ARG BAKE_EMBEDDERS=""

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LANCE_CPU_THREADS=2 \
    RAGDOWN_MODELS=/opt/ragdown/models

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
# What `pip install '.[operator]'` needs: the project metadata (README.md is its readme) and both
# packages, the server and the operator (the `operator` extra brings kopf), installed at the exact
# versions of constraints.txt, so every build of a commit is the same.
COPY pyproject.toml README.md constraints.txt ./
COPY server/ server/
COPY operator/ operator/
RUN pip install -c constraints.txt '.[operator]'

# The default embedder builds its int8 model into RAGDOWN_MODELS at first use, which would cost
# every new pod that build (and fail on a read-only root filesystem): index the bundled examples
# once here so the model is built and checked now, then fail the build if it is not there.
COPY examples/notes/ examples/notes/
RUN RAGDOWN_DATA_DIR=/tmp/ragdown-build XDG_CACHE_HOME=/tmp/ragdown-cache \
        ragdown index --data-dir /tmp/ragdown-build examples/notes \
    && ls /opt/ragdown/models/minilm-q8-*.onnx /opt/ragdown/models/minilm-q8-*.onnx.json \
    && for embedder in ${BAKE_EMBEDDERS}; do \
        XDG_CACHE_HOME=/tmp/ragdown-cache ragdown index --embedder "$embedder" \
            --data-dir "/tmp/ragdown-build-$embedder" examples/notes || exit 1; \
    done \
    && rm -rf /tmp/ragdown-build* /tmp/ragdown-cache
# Build-only: onnx made the int8 model above (the runtime only loads it; without onnx a pod that
# lacked the baked build would run the packaged model, never fail), and pip's own tooling. Never
# used at run time (bench/README.md, "Image"): hf-xet (the hub's optional Xet transfer; downloads
# fall back to HTTP), pyarrow's Flight RPC libraries (nothing imports pyarrow.flight; pyarrow's core
# does not link them), the packages' own test suites, C/C++ headers and Cython sources (read only
# by a compiler or a test runner), ONNX Runtime's offline model optimizer (onnxruntime.transformers;
# inference never imports it), and pip itself, removed last by the interpreter since the venv's pip
# goes with it.
RUN pip uninstall --yes onnx setuptools wheel hf-xet \
    && cd /opt/venv/lib/python3*/site-packages \
    && rm -f pyarrow/libarrow_flight.so* pyarrow/libarrow_python_flight.so* pyarrow/_flight*.so \
    && find . -depth -type d -name tests -exec rm -rf {} + \
    && find . -type f \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' -o -name '*.h' -o -name '*.hpp' \
        -o -name '*.cc' -o -name '*.cpp' \) -delete \
    && rm -rf pyarrow/include onnxruntime/transformers \
    && cd / && python -m pip uninstall --yes pip

# --- runtime ----------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="ragdown" \
      org.opencontainers.image.description="Markdown folders for AI agents over MCP, and the Kubernetes operator that serves them." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="0.1.0"

RUN groupadd --system --gid 10001 ragdown \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin ragdown \
    && mkdir -p /data/docs /data/index \
    && chown -R 10001:10001 /data

COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /opt/ragdown/models /opt/ragdown/models

# LANCE_CPU_THREADS >= 2: older lance deadlocked building the full-text index on small CPU pools
# (docs/design.md#lancedb-threads). XDG_CACHE_HOME points at /tmp so a read-only root filesystem only needs an
# emptyDir there. The baked models are found through RAGDOWN_MODELS_BUNDLED even when RAGDOWN_MODELS
# points at a writable volume (the chart's, for hub embedders the image does not bake).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LANCE_CPU_THREADS=2 \
    RAGDOWN_MODELS=/opt/ragdown/models \
    RAGDOWN_MODELS_BUNDLED=/opt/ragdown/models \
    RAGDOWN_HOST=0.0.0.0 \
    PORT=3000 \
    RAGDOWN_DOCS_DIR=/data/docs \
    RAGDOWN_DATA_DIR=/data/index \
    XDG_CACHE_HOME=/tmp/cache

WORKDIR /data
# 3000: web UI, /api and MCP; 9090: Prometheus /metrics (RAGDOWN_METRICS_PORT).
EXPOSE 3000 9090

USER 10001:10001

# slim has no curl: probe /healthz with the interpreter that is there anyway, on PORT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=3)"]

ENTRYPOINT ["ragdown"]
CMD ["serve"]
