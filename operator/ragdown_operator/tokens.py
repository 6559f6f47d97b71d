"""A RagdownFolder's own agent tokens (`spec.tokens`), read from Secrets in its namespace and hashed
as the indexer stores them (docs/cluster.md#folder-tokens).

Only the SHA-256 of each token leaves this module, and only towards the indexer: no token or digest
goes into a log line, an event or the status. A reference that cannot be read stops the reconcile
with `TokenUnavailable`, naming the Secret and the key, never the value."""

from __future__ import annotations

import base64
import binascii
import hmac

from ragdown.folders.registry import token_digest
from ragdown_operator.errors import KubeUnavailable, SecretForbidden, TokenUnavailable
from ragdown_operator.kube import Kube
from ragdown_operator.spec import TokenRef

# A shorter token is guessed from its unsalted SHA-256 (which the indexer's folder settings hold).
MIN_TOKEN_CHARS = 16


def _token(encoded: object, where: str, admin_token: str | None) -> str:
    """The token in a Secret's `data` value (base64), checked; a trailing newline (`kubectl create
    secret --from-file`, `echo`) is dropped, as the server drops it from a bearer header."""
    try:
        token = base64.b64decode(str(encoded), validate=True).decode("utf-8").strip()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise TokenUnavailable("TokenInvalid", f"{where}: the value is not UTF-8 text") from None
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenUnavailable(
            "TokenInvalid",
            f"{where}: a token needs at least {MIN_TOKEN_CHARS} characters (ragdown token NAME makes one)",
        )
    if not all("!" <= c <= "~" for c in token):
        raise TokenUnavailable(
            "TokenInvalid", f"{where}: a token is visible ASCII without spaces, as a bearer header carries it"
        )
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        raise TokenUnavailable(
            "TokenInvalid", f"{where}: this is the admin token; give each team a token of its own"
        )
    return token


async def read_tokens(
    kube: Kube, namespace: str, refs: list[TokenRef], admin_token: str | None
) -> list[dict[str, str]]:
    """The `{name, sha256}` entries of `refs`, in name order (each Secret read once), or TokenUnavailable
    for the first one that cannot be read."""
    secrets: dict[str, dict[str, str] | None] = {}
    entries = []
    for index, ref in enumerate(refs):
        secret, key = ref.secretKeyRef.name, ref.secretKeyRef.key
        where = f"spec.tokens[{index}] ({ref.name}): Secret {secret}, key {key}"
        if secret not in secrets:
            try:
                secrets[secret] = await kube.secret_data(namespace, secret)
            except SecretForbidden:
                raise TokenUnavailable(
                    "TokenSecretForbidden",
                    f"{where}: the operator may not read it (the chart's Role grants get on secrets; "
                    "with operator.tokenSecrets set, only on those: add it there)",
                ) from None
            except KubeUnavailable as error:
                raise TokenUnavailable("TokenSecretUnreadable", f"{where}: {error}") from None
        data = secrets[secret]
        if data is None:
            raise TokenUnavailable(
                "TokenSecretMissing", f"{where}: no Secret {secret} in namespace {namespace}"
            )
        if key not in data:
            raise TokenUnavailable("TokenSecretMissing", f"{where}: Secret {secret} has no key {key}")
        entries.append({"name": ref.name, "sha256": token_digest(_token(data[key], where, admin_token))})
    return sorted(entries, key=lambda entry: entry["name"])
