"""Tokens that serve two roles: the agents', the admin's and the internal one must differ, and each
folder's own tokens must be its own (docs/security.md; docs/doctor.md#tokens). Only digests are
compared and shown: no token is ever printed."""

from __future__ import annotations

from collections import defaultdict

from ragdown.doctor.report import Check, fail, ok
from ragdown.doctor.target import Target
from ragdown.folders.registry import list_folders, token_digest
from ragdown.roles.token import local_token

TOKENS = "tokens"


def server_tokens(target: Target) -> dict[str, str]:
    """Each server role's token digest by the variable that sets it."""
    settings = target.settings
    internal = settings.internal_token or (
        local_token(target.data_dir, create=False) if target.data_dir.is_dir() else None
    )
    found = {
        "RAGDOWN_TOKEN": settings.token,
        "RAGDOWN_ADMIN_TOKEN": settings.admin_token,
        "RAGDOWN_INTERNAL_TOKEN": internal,
    }
    return {name: token_digest(value) for name, value in found.items() if value}


def check_tokens(target: Target) -> Check:
    roles: dict[str, list[str]] = defaultdict(list)
    for name, digest in server_tokens(target).items():
        roles[digest].append(name)
    if target.folders_mode:
        for folder in list_folders(target.docs_dir):
            for digest in folder.token_digests - {"-"}:
                roles[digest.lower()].append(f"folder {folder.name}'s tokens")
    shared = [" and ".join(names) for names in roles.values() if len(names) > 1]
    if shared:
        return fail(
            TOKENS,
            f"one token serves two roles: {'; '.join(shared)}",
            "give each role and each folder a token of its own (`ragdown token NAME` makes a folder's)",
        )
    if not roles:
        return ok(TOKENS, "no token is set")
    return ok(TOKENS, f"{len(roles)} distinct token(s), one role each")
