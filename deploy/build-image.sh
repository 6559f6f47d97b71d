#!/usr/bin/env bash
# Build the ragdown image from the repository's Dockerfile and, with --push, push it to the registry
# named in the target; then print the chart values that pull it (charts/ragdown/values.yaml, `image`).
#
#   deploy/build-image.sh REGISTRY/REPOSITORY:TAG [--push] [-- DOCKER_BUILD_ARGS...]
#   deploy/build-image.sh ghcr.io/acme/ragdown:0.1.0 --push
#   deploy/build-image.sh registry.example.com:5000/team/ragdown:dev --push -- --build-arg BAKE_EMBEDDERS=bge-small
#
# The chart's default image, ragdown:<appVersion>, names Docker Hub's library/ragdown, which is not
# this project's: a cluster pulls only what this script (or your CI) pushed. CONTAINER_ENGINE picks
# the builder (default docker; podman takes the same arguments).
set -euo pipefail

usage="usage: deploy/build-image.sh REGISTRY/REPOSITORY:TAG [--push] [-- DOCKER_BUILD_ARGS...]"
refuse() {
    echo "build-image: $1" >&2
    exit 2
}

target=""
push=false
build_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --push) push=true ;;
        -h | --help)
            echo "$usage"
            exit 0
            ;;
        --)
            shift
            build_args=("$@")
            break
            ;;
        -*) refuse "unknown option $1; $usage" ;;
        *)
            [ -z "$target" ] || refuse "one target only, got $target and $1; $usage"
            target="$1"
            ;;
    esac
    shift
done

[ -n "$target" ] || refuse "no target image given: name the registry to push to, e.g. ghcr.io/acme/ragdown:0.1.0 ($usage)"
case "$target" in
    *@*) refuse "$target has a digest: give REGISTRY/REPOSITORY:TAG (the digest is known after the push)" ;;
esac
# REGISTRY/REPOSITORY:TAG: the tag after the last colon that follows the last slash.
name="${target%:*}"
tag="${target##*:}"
if [ "$name" = "$target" ] || [[ "$tag" == */* ]]; then
    refuse "$target has no tag: give REGISTRY/REPOSITORY:TAG, e.g. ghcr.io/acme/ragdown:0.1.0"
fi
[[ "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || refuse "tag $tag is not a valid image tag ([A-Za-z0-9_.-], at most 128)"
[[ "$name" =~ ^[a-z0-9]([a-z0-9._:-]*[a-z0-9])?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$ ]] ||
    refuse "$name is not a valid image name (lower case, REGISTRY/REPOSITORY)"
registry="${name%/*}"
repository="${name##*/}"
if [ "$registry" = "$name" ]; then
    # No registry part: a local image (e.g. for `kind load docker-image`), never pushed.
    "$push" && refuse "$target names no registry, so --push would go to Docker Hub's library/: give REGISTRY/REPOSITORY:TAG"
    registry=""
fi

engine="${CONTAINER_ENGINE:-docker}"
command -v "$engine" >/dev/null 2>&1 || refuse "$engine not found: install it or set CONTAINER_ENGINE (e.g. podman)"
root="$(cd "$(dirname "$0")/.." && pwd)"

"$engine" build -t "$target" -f "$root/Dockerfile" ${build_args[@]+"${build_args[@]}"} "$root"
if "$push"; then
    "$engine" push "$target"
fi

echo "image $target $("$push" && echo pushed || echo built). Chart values that pull it:"
echo "  --set image.registry=$registry --set image.repository=$repository --set image.tag=$tag"
