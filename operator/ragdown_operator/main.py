"""`ragdown-operator`: check the configuration, register the handlers, run kopf in one namespace.
Standalone (one replica, `Recreate`): no peering objects, so the RBAC stays within the namespace.

`ragdown-operator release-all`: let go of every RagdownFolder of this release (release.py), for the
chart's pre-delete hook; it needs the same RAGDOWN_OPERATOR_NAMESPACE and _INSTANCE as the operator."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import httpx
import yaml
from pydantic import ValidationError

try:
    import kopf
except ImportError:  # `pip install ragdown` leaves the operator's dependencies out
    sys.exit("ragdown-operator needs the operator extra: pip install 'ragdown[operator]'")

from ragdown_operator import handlers, release
from ragdown_operator.errors import KubeUnavailable
from ragdown_operator.kube import Kube, client_for, connection_info
from ragdown_operator.settings import OperatorSettings

# Said instead of kopf's login traceback when started outside a pod with nothing to log in with.
NO_API = (
    "no Kubernetes API to log in to: not in a pod (no service account token), no kubeconfig "
    "(KUBECONFIG or ~/.kube/config), and RAGDOWN_OPERATOR_KUBE_URL is not set"
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ragdown-operator", description=__doc__.split("\n")[0])
    parser.add_argument(
        "command",
        nargs="?",
        choices=["run", "release-all"],
        default="run",
        help="run the operator (default), or let go of this release's RagdownFolders",
    )
    command = parser.parse_args(argv).command
    try:
        settings = OperatorSettings()
    except ValidationError as error:
        first = error.errors()[0]
        name = "RAGDOWN_OPERATOR_" + str(first["loc"][0]).upper()
        sys.exit(f"ragdown-operator: {name}: {first['msg']}")
    try:
        info = connection_info(settings.kube_url, settings.namespace, kopf.OperatorSettings())
    except (OSError, yaml.YAMLError, kopf.LoginError, KeyError, TypeError, ValueError) as error:
        sys.exit(f"ragdown-operator: cannot log in with the kubeconfig: {error}")
    if info is None:
        sys.exit(f"ragdown-operator: {NO_API}")
    if command == "release-all":
        sys.exit(asyncio.run(release_all(settings, info)))
    handlers.register(settings)
    # Each line about a resource names it ([namespace/name]): with many, a bare "Timer 'resync' failed"
    # says nothing.
    kopf.configure(verbose=settings.verbose, log_prefix=True)
    # One line per API call to the indexer would drown what the operator decided.
    logging.getLogger("httpx").setLevel(logging.DEBUG if settings.verbose else logging.WARNING)
    liveness = f"http://0.0.0.0:{settings.liveness_port}/healthz" if settings.liveness_port else None
    kopf.run(standalone=True, namespaces=[settings.namespace], liveness_endpoint=liveness)


async def release_all(settings: OperatorSettings, info: kopf.ConnectionInfo) -> int:
    """The exit status: 0 once every RagdownFolder of the release is let go of (none is fine)."""
    kube = Kube(client_for(info, settings.request_timeout_s))
    try:
        names = await release.release_all(kube, settings)
    except (KubeUnavailable, httpx.HTTPError) as error:
        print(f"ragdown-operator release-all: {error}", file=sys.stderr)
        return 1
    finally:
        await kube.close()
    where = f"release {settings.instance} in namespace {settings.namespace}"
    print(f"released {len(names)} RagdownFolder(s) of {where}" + (f": {', '.join(names)}" if names else ""))
    return 0


if __name__ == "__main__":
    main()
