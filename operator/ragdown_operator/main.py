"""`ragdown-operator`: check the configuration, register the handlers, run kopf in one namespace.

Standalone (one replica, `Recreate`): no peering objects, so the RBAC stays within the namespace."""

from __future__ import annotations

import importlib
import logging
import sys

import kopf
from pydantic import ValidationError

from ragdown_operator.settings import OperatorSettings


def main() -> None:
    try:
        settings = OperatorSettings()
    except ValidationError as error:
        first = error.errors()[0]
        name = "RAGDOWN_OPERATOR_" + str(first["loc"][0]).upper()
        sys.exit(f"ragdown-operator: {name}: {first['msg']}")
    importlib.import_module("ragdown_operator.handlers")  # registers the handlers with kopf
    kopf.configure(verbose=settings.verbose)
    # One line per API call to the indexer would drown what the operator decided.
    logging.getLogger("httpx").setLevel(logging.DEBUG if settings.verbose else logging.WARNING)
    liveness = f"http://0.0.0.0:{settings.liveness_port}/healthz" if settings.liveness_port else None
    kopf.run(standalone=True, namespaces=[settings.namespace], liveness_endpoint=liveness)


if __name__ == "__main__":
    main()
