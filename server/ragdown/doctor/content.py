"""What the documents say, read from the files: one file crowding its folder, documents hidden by
`supersedes`, broken wikilinks, files the walk passes over, and times in the future
(docs/doctor.md#content)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from ragdown.doctor.report import Check, first_few, ok, warn
from ragdown.doctor.scan import Doc, Scan
from ragdown.documents.links import LinkIndex, resolve_wikilink

CROWDING = "crowding"
SUPERSEDED = "superseded"
WIKILINKS = "wikilinks"
SKIPPED = "skipped"
CLOCK = "clock"
# Below this many documents a folder's shares say nothing (two files hold half of it each).
MIN_DOCUMENTS = 10
ONE_FILE_SHARE = 0.2
THREE_FILES_SHARE = 0.5
# A file's time this far ahead is the clock's doing, not a copy's rounding.
CLOCK_SLACK_S = 60


def by_folder(scan: Scan) -> dict[str, list[Doc]]:
    folders: dict[str, list[Doc]] = defaultdict(list)
    for doc in scan.docs.values():
        folders[doc.folder].append(doc)
    return dict(sorted(folders.items()))


def named(folder: str) -> str:
    return f"folder {folder}" if folder else "the folder"


def crowding(scan: Scan) -> Check:
    """One file holding more than a fifth of its folder's sections, or three more than half: its
    sections fill the results of any query near its topic."""
    found = []
    for folder, docs in by_folder(scan).items():
        total = sum(doc.sections for doc in docs)
        if len(docs) < MIN_DOCUMENTS or not total:
            continue
        ranked = sorted(docs, key=lambda doc: (-doc.sections, doc.path))
        top = ranked[0]
        three = sum(doc.sections for doc in ranked[:3])
        if top.sections > ONE_FILE_SHARE * total:
            found.append(f"{top.path} holds {top.sections} of {named(folder)}'s {total} sections")
        elif three > THREE_FILES_SHARE * total:
            paths = ", ".join(doc.path for doc in ranked[:3])
            found.append(f"{paths} hold {three} of {named(folder)}'s {total} sections")
    if found:
        return warn(
            CROWDING,
            "; ".join(found),
            "split such a file by topic, or cap hits per document (max_per_document in Settings)",
        )
    return ok(CROWDING, "no file holds more than a fifth of its folder's sections")


def superseded(scan: Scan) -> Check:
    """Documents that a `supersedes` entry hides from searches, and who hides them."""
    hidden: dict[str, list[str]] = defaultdict(list)
    for doc in scan.docs.values():
        for target in doc.supersedes:
            if target in scan.docs and target != doc.path:
                hidden[target].append(doc.path)
    if not hidden:
        return ok(SUPERSEDED, "no document is hidden by supersedes")
    lines = [f"{path} (by {', '.join(sorted(by))})" for path, by in sorted(hidden.items())]
    return warn(
        SUPERSEDED,
        f"{len(lines)} document(s) hidden from searches by supersedes: {first_few(lines)}",
        "if one should be found again, remove it from the superseding document's supersedes",
    )


def broken_wikilinks(scan: Scan) -> Check:
    """Per folder, wikilinks that resolve to nothing, resolved as the read tools resolve them."""
    attachments: dict[str, list[str]] = defaultdict(list)
    for path in scan.attachments:
        folder, _, inside = path.partition("/")
        attachments[folder if inside else ""].append(path)
    found = []
    for folder, docs in by_folder(scan).items():
        broken = list(_broken(folder, docs, attachments.get(folder, ())))
        if broken:
            found.append(f"{named(folder)}: {len(broken)} ({first_few(broken, 3)})")
    if found:
        return warn(
            WIKILINKS,
            "links to no document: " + "; ".join(found),
            "correct the target, add the document it names, or give a document that alias",
        )
    return ok(WIKILINKS, "every wikilink resolves")


def _broken(folder: str, docs: list[Doc], attachments: Iterable[str]) -> Iterable[str]:
    prefix = f"{folder}/" if folder else ""
    cut = len(prefix)
    index = LinkIndex(
        [doc.path[cut:] for doc in docs],
        {doc.path[cut:]: doc.aliases for doc in docs},
        [path[cut:] for path in attachments if path.startswith(prefix)],
    )
    for doc in sorted(docs, key=lambda doc: doc.path):
        for raw in doc.wikilinks:
            if resolve_wikilink(index, raw, doc.path[cut:]) is None:
                yield f"[[{raw}]] in {doc.path}"


def skipped(scan: Scan) -> Check:
    """What the walk passes over, and why: symlinks are never followed; paths deeper than any client
    can name are not walked."""
    reasons = []
    if scan.symlinks:
        reasons.append(f"{len(scan.symlinks)} symlink(s), never followed: {first_few(scan.symlinks)}")
    if scan.too_deep:
        reasons.append(f"{len(scan.too_deep)} folder(s) too deep to walk: {first_few(scan.too_deep)}")
    if reasons:
        return warn(
            SKIPPED,
            "; ".join(reasons),
            "copy what a symlink points at into the folder if it should be indexed; flatten deep trees",
        )
    return ok(SKIPPED, "no symlink or file passed over (dot-folders and node_modules aside)")


def clock(scan: Scan, now: float | None = None) -> Check:
    """Files changed "in the future": the host's clock, or a copy from one that runs ahead."""
    limit = ((now if now is not None else time.time()) + CLOCK_SLACK_S) * 1e9
    ahead = sorted(doc.path for doc in scan.docs.values() if doc.mtime_ns > limit)
    if ahead:
        return warn(
            CLOCK,
            f"{len(ahead)} file(s) changed in the future: {first_few(ahead)}",
            "check this host's clock (NTP), then `touch` the files so their dates are right",
        )
    return ok(CLOCK, "no file is dated in the future")
