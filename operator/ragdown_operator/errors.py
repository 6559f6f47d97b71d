"""Every exception the operator raises on purpose derives from `OperatorError`; each says what the
condition on the RagdownFolder shows (docs/cluster.md's table of conditions) and whether kopf retries.
The server's own errors are another tree (ragdown/errors.py): the indexer's answers reach the operator
as `IndexerRefused`, whose `code` is one of the server's `Code` words. tests/test_errors.py holds
this drawing to the classes:

    OperatorError
    ├── IndexerUnreachable   the indexer did not answer (starting, restarting, network): retry later
    ├── IndexerRefused       the indexer understood and refused: its status and code (`managed`, …)
    ├── KubeUnavailable      the Kubernetes API did not answer or failed on its side: retry later
    ├── SecretForbidden      the API server refused a Secret (403): the Role lacks `get` on secrets
    ├── IngressConflict      an Ingress with the wanted name belongs to someone else
    ├── TokenUnavailable     a token of `spec.tokens` cannot be read (the Secret may come later)
    └── InvalidSpecError     the spec cannot be applied; the message names the field and the fix
"""

from __future__ import annotations


class OperatorError(Exception):
    """A state of the cluster or of the indexer that the operator reports on the resource."""


class IndexerUnreachable(OperatorError):  # noqa: N818 - a state, not a failure of ours
    """The indexer did not answer (starting, restarting, network): retry later."""


class IndexerRefused(OperatorError):  # noqa: N818
    """The indexer understood and refused; `code` is its refusal code (`managed`, …)."""

    def __init__(self, status: int, message: str, code: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class KubeUnavailable(OperatorError):  # noqa: N818
    """The Kubernetes API did not answer or failed on its side: retry later."""


class SecretForbidden(OperatorError):  # noqa: N818
    """The API server refused the operator a Secret (403): its Role lacks `get` on secrets."""


class IngressConflict(OperatorError):  # noqa: N818
    """An Ingress with the wanted name belongs to someone else."""


class TokenUnavailable(OperatorError):  # noqa: N818 - a state of the cluster: the Secret may come later
    """A token of `spec.tokens` cannot be read; `reason` is the condition's reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class InvalidSpecError(OperatorError, ValueError):
    """The spec cannot be applied; the message says which field and what to change."""
