#!/usr/bin/env bash
# The images the container tests run (tests/container/; docs/cluster.md#the-image-in-ci):
#   1. a stand-in for python:3.12-slim made from Debian packages (no image registry is reachable
#      here, the package registries are), imported as ragdown-base:bookworm and kept between runs;
#   2. ragdown:ci, the project's Dockerfile built on it (PYTHON_IMAGE=ragdown-base:bookworm).
# Needs root, debootstrap and a running dockerd. The host's CA bundle goes into the stand-in so pip
# inside the build trusts what the host's pip trusts (PIP_CERT).
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${RAGDOWN_BASE_IMAGE:-ragdown-base:bookworm}
IMAGE=${RAGDOWN_CI_IMAGE:-ragdown:ci}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
        bookworm "$root" "$MIRROR" >/dev/null
    ln -sf python3 "$root/usr/bin/python"
    cp "$CA" "$root/etc/ssl/certs/host-ca-bundle.crt"
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | docker import \
        --change 'ENV PIP_CERT=/etc/ssl/certs/host-ca-bundle.crt' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["python3"]' - "$BASE" >/dev/null
fi
docker build --quiet --build-arg PYTHON_IMAGE="$BASE" -t "$IMAGE" . >/dev/null
docker image inspect "$IMAGE" --format '{{.Size}}'
