"""The operator's pure parts: reading a spec, what it asks of the indexer, drift, the Ingress it wants,
and how conditions move."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import kopf
import pytest

from ragdown.folders.manage import FOLDER_TOOLS
from ragdown_operator import instance, kopf_config, release
from ragdown_operator.constants import finalizer_for
from ragdown_operator.indexer import FolderState
from ragdown_operator.ingress import folder_ingress
from ragdown_operator.kube import IngressConflict, Kube, client_for, owned_patch, with_owned_keys
from ragdown_operator.main import NO_API
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import TOOLS, FolderSpec, InvalidSpecError, ingress_name
from ragdown_operator.status import Condition, conditions

MANAGER = "RagdownFolder team/work"


def test_the_folder_defaults_to_the_resource_name_and_every_setting_is_stated() -> None:
    spec = FolderSpec.of({"mcp": True, "hook": {"topK": 2}}, "work")
    assert spec.folder == "work"
    assert spec.deletionPolicy == "Retain"
    assert spec.settings(MANAGER) == {
        "title": "",
        "mcp": True,
        "read_only": False,
        "disabled_tools": [],
        "hook": {"top_k": 2, "min_score": None, "min_ratio": None, "max_chars": None},
        "managed_by": MANAGER,
    }


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"folder": ".hidden"}, "spec.folder"),
        ({"folder": "node_modules"}, "spec.folder"),
        ({"mcp": "yes"}, "spec.mcp"),
        ({"hook": {"topK": 500}}, "spec.hook.topK"),
        ({"hook": {"minScore": 2}}, "spec.hook.minScore"),
        ({"disabledTools": ["ragdown_nope"]}, "spec.disabledTools.0"),
        ({"deletionPolicy": "Purge"}, "spec.deletionPolicy"),
        ({"colour": "red"}, "spec.colour"),
    ],
)
def test_an_invalid_spec_names_the_field(spec: dict[str, object], where: str) -> None:
    with pytest.raises(InvalidSpecError) as raised:
        FolderSpec.of(spec, "work")
    assert str(raised.value).startswith(where + ":")


def test_a_padded_title_does_not_read_as_drift_forever() -> None:
    wanted = FolderSpec.of({"title": "  Work  "}, "work").settings(MANAGER)
    stored = FolderState({"name": "work", "title": "Work", "managed_by": MANAGER})
    assert stored.differs_from(wanted) == []
    assert FolderSpec.of({"title": "   "}, "work").title == ""
    assert ingress_name("a" * 248 + ".x") == "a" * 248 + "-mcp"


def test_the_operator_and_the_server_agree_on_the_tools() -> None:
    assert set(TOOLS) == set(FOLDER_TOOLS)


def test_drift_lists_only_what_differs() -> None:
    wanted = FolderSpec.of({"title": "Work", "mcp": True, "hook": {"topK": 2}}, "work").settings(MANAGER)
    state = FolderState(
        {
            "name": "work",
            "title": "Work",
            "mcp": True,
            "hook": {"top_k": 2},
            "read_only": False,
            "disabled_tools": [],
            "managed_by": MANAGER,
        }
    )
    assert state.differs_from(wanted) == []
    edited = FolderState({**state.raw, "mcp": False, "hook": {"top_k": 9}, "managed_by": None})
    assert edited.differs_from(wanted) == ["hook", "managed_by", "mcp"]
    untitled = FolderSpec.of({"mcp": True, "hook": {"topK": 2}}, "work").settings(MANAGER)
    assert FolderState({**state.raw, "title": "work"}).differs_from(untitled) == []  # title falls back


def test_the_ingress_routes_the_encoded_path_to_the_readers() -> None:
    settings = OperatorSettings(
        reader_service="rd-reader",
        reader_port=3000,
        ingress_class="traefik",
        ingress_host="docs.example",
        ingress_tls_secret="docs-tls",
        ingress_annotations='{"a": "b"}',  # type: ignore[arg-type]  # as the environment gives it
    )
    ingress = folder_ingress("team-notes", "Team notes", settings)
    assert ingress["metadata"]["name"] == ingress_name("team-notes") == "team-notes-mcp"
    assert ingress["metadata"]["annotations"] == {"a": "b", "ragdown.dev/folder": "Team notes"}
    assert ingress["spec"]["ingressClassName"] == "traefik"
    assert ingress["spec"]["tls"] == [{"hosts": ["docs.example"], "secretName": "docs-tls"}]
    (path,) = ingress["spec"]["rules"][0]["http"]["paths"]
    assert path["path"] == "/mcp/Team%20notes"
    # ingress-nginx refuses '%' (and '.') in a Prefix path; ImplementationSpecific is admitted.
    assert path["pathType"] == "ImplementationSpecific"
    dotted = folder_ingress("notes-v2", "notes.v2", settings)["spec"]["rules"][0]["http"]["paths"][0]
    assert (dotted["path"], dotted["pathType"]) == ("/mcp/notes.v2", "ImplementationSpecific")
    plain = folder_ingress("work", "work_notes-2", settings)["spec"]["rules"][0]["http"]["paths"][0]
    assert (plain["path"], plain["pathType"]) == ("/mcp/work_notes-2", "Prefix")
    assert path["backend"] == {"service": {"name": "rd-reader", "port": {"number": 3000}}}
    assert settings.endpoint_base() == "https://docs.example"
    bare = folder_ingress("x", "x", OperatorSettings())
    assert "host" not in bare["spec"]["rules"][0]
    assert "ingressClassName" not in bare["spec"]
    assert "tls" not in bare["spec"]


def test_only_the_keys_the_operator_set_are_compared_and_patched() -> None:
    def wanted(annotations: str) -> dict[str, Any]:  # as the environment gives them
        settings = OperatorSettings.model_validate({"ingress_annotations": annotations})
        return with_owned_keys(folder_ingress("work", "work", settings))

    written = wanted('{"ours": "1", "dropped": "x"}')
    assert owned_patch(written, written) == {}
    meta = written["metadata"]
    current = {
        **written,
        "metadata": {
            **meta,
            "labels": {**meta["labels"], "theirs": "a"},
            "annotations": {**meta["annotations"], "their/note": "b"},
        },
        "status": {"loadBalancer": {}},
    }
    assert owned_patch(current, written) == {}  # someone else's keys and the status: not ours
    now = wanted('{"ours": "2"}')
    record = now["metadata"]["annotations"]["ragdown.dev/owned-keys"]
    assert owned_patch(current, now) == {
        "metadata": {"annotations": {"dropped": None, "ours": "2", "ragdown.dev/owned-keys": record}}
    }
    edited = {**current, "spec": {**current["spec"], "ingressClassName": "other"}}
    assert owned_patch(edited, now)["spec"] == {"ingressClassName": None}  # a person's edit is drift
    # Written before the record existed: what is wanted is set, nothing is removed.
    old = {"dropped": "x", "ours": "1", "ragdown.dev/folder": "work"}
    legacy = {**current, "metadata": {**current["metadata"], "annotations": old}}
    assert owned_patch(legacy, now)["metadata"]["annotations"] == {
        "ours": "2",
        "ragdown.dev/owned-keys": record,
    }


def test_kopf_runs_with_watch_timeouts() -> None:
    settings = kopf.OperatorSettings()
    kopf_config.configure(settings, OperatorSettings())
    watching = settings.watching
    assert (watching.server_timeout, watching.client_timeout, watching.connect_timeout) == (300, 330.0, 30.0)
    kopf_config.configure(settings, OperatorSettings(watch_server_timeout_s=50, watch_client_timeout_s=60))
    assert (watching.server_timeout, watching.client_timeout) == (50, 60.0)
    assert settings.persistence.finalizer == "ragdown.dev/finalizer-ragdown"
    with pytest.raises(ValueError, match="longer than RAGDOWN_OPERATOR_WATCH_SERVER_TIMEOUT_S"):
        OperatorSettings(watch_server_timeout_s=60, watch_client_timeout_s=60)


def test_a_release_claims_its_own_resources_and_by_default_the_unlabelled() -> None:
    rd, rd2 = OperatorSettings(instance="rd"), OperatorSettings(instance="rd2", claim_unlabelled=False)
    ours, theirs = {"ragdown.dev/instance": "rd"}, {"ragdown.dev/instance": "rd2"}
    assert instance.claims(ours, {}, rd)
    assert not instance.claims(theirs, {}, rd)
    assert instance.claims(theirs, {}, rd2)
    assert instance.claims({}, {}, rd)
    assert not instance.claims({}, {}, rd2)
    released = {"ragdown.dev/released": "rd"}  # release-all let go of it: until rd's operator restarts
    assert not instance.claims(ours, released, rd)
    assert not instance.claims({}, released, rd)
    assert instance.claims(theirs, released, rd2)
    for name in ("", "Rd", "rd_2", "-rd", "r" * 54):
        with pytest.raises(ValueError, match="instance"):
            OperatorSettings(instance=name)
    assert len(finalizer_for("r" * 53).split("/")[1]) == 63  # the most a finalizer's name part may hold


def test_an_ingress_another_release_made_for_the_same_resource_is_not_taken_over() -> None:
    """Two releases that both claim an unlabelled resource: the second one's route is refused, not a
    patch back and forth every resync."""
    owner = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": "work", "uid": "u1"},
    }
    theirs = folder_ingress("work", "work", OperatorSettings(instance="rd2"))
    kopf.adopt(theirs, owner=owner)
    sent: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        sent.append(request.method)
        return httpx.Response(200, json=theirs)

    kube = Kube(httpx.AsyncClient(base_url="http://api", transport=httpx.MockTransport(api)))
    ours = folder_ingress("work", "work", OperatorSettings(instance="rd"))
    kopf.adopt(ours, owner=owner)
    with pytest.raises(IngressConflict, match="routes for release rd2"):
        asyncio.run(kube.apply_ingress("team", ours))
    assert sent == ["GET"]


def test_release_all_marks_and_unfinalizes_and_reclaim_unmarks() -> None:
    fresh = {"metadata": {"finalizers": ["other/keep", "ragdown.dev/finalizer", "ragdown.dev/finalizer-rd"]}}
    assert release.released_by("rd")(fresh) == [
        {"op": "add", "path": "/metadata/annotations", "value": {"ragdown.dev/released": "rd"}},
        {"op": "replace", "path": "/metadata/finalizers", "value": ["other/keep"]},
    ]
    annotated = {"metadata": {"annotations": {"a": "b"}, "finalizers": ["ragdown.dev/finalizer-rd2"]}}
    assert release.released_by("rd")(annotated) == [
        {"op": "add", "path": "/metadata/annotations/ragdown.dev~1released", "value": "rd"}
    ]
    done = {"metadata": {"annotations": {"ragdown.dev/released": "rd"}, "finalizers": []}}
    assert release.released_by("rd")(done) == []  # nothing to do: no PATCH
    assert release.unmarked("rd")(done) == [
        {"op": "remove", "path": "/metadata/annotations/ragdown.dev~1released"}
    ]
    assert release.unmarked("rd2")(done) == []


def test_settings_refuse_what_would_break_later() -> None:
    with pytest.raises(ValueError, match="http"):
        OperatorSettings(indexer_url="ragdown-indexer:3000")
    with pytest.raises(ValueError, match="JSON object of strings"):
        OperatorSettings(ingress_annotations='{"a": 1}')  # type: ignore[arg-type]


def test_ready_follows_synced_and_routed_and_times_move_only_on_a_flip() -> None:
    first = conditions([], [Condition("Synced", False, "IndexerUnreachable", "down")], 1)
    ready = {c["type"]: c for c in first}["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "IndexerUnreachable")
    stamped = [{**c, "lastTransitionTime": "2020-01-01T00:00:00Z"} for c in first]
    again = {
        c["type"]: c for c in conditions(stamped, [Condition("Synced", False, "IndexerUnreachable", "x")], 2)
    }
    assert again["Synced"]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert again["Synced"]["observedGeneration"] == 2
    done = conditions(
        stamped,
        [Condition("Synced", True, "SettingsApplied", "ok"), Condition("Routed", True, "McpOff", "-")],
        2,
    )
    by_type = {c["type"]: c for c in done}
    assert [c["type"] for c in done] == ["Ready", "Synced", "Routed"]
    assert by_type["Ready"]["status"] == "True"
    assert by_type["Synced"]["lastTransitionTime"] != "2020-01-01T00:00:00Z"


def test_inline_client_certificates_load_and_leave_no_files(tmp_path: Path) -> None:
    """A kubeconfig with `client-certificate-data`: loaded into the TLS context, no key left on disk."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=test"),
            *("-days", "1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    before = set(Path(tempfile.gettempdir()).glob("ragdown-operator-*"))
    info = kopf.ConnectionInfo(
        server="https://127.0.0.1:6443",
        certificate_data=cert.read_bytes(),
        private_key_data=key.read_bytes(),
        token="t",
    )
    client = client_for(info, 5.0)
    assert client.headers["Authorization"] == "Bearer t"
    assert set(Path(tempfile.gettempdir()).glob("ragdown-operator-*")) == before
    broken = kopf.ConnectionInfo(server="https://x", certificate_data=b"not a cert", private_key_data=b"no")
    with pytest.raises(ssl.SSLError):
        client_for(broken, 5.0)
    assert set(Path(tempfile.gettempdir()).glob("ragdown-operator-*")) == before


def test_without_an_api_to_log_in_to_the_operator_says_so_and_exits(tmp_path: Path) -> None:
    """`docker run --entrypoint ragdown-operator` outside a cluster: one sentence, not kopf's traceback."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG" and not k.startswith("RAGDOWN_OPERATOR_")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    for command in ([], ["release-all"]):
        ran = subprocess.run(
            [sys.executable, "-m", "ragdown_operator.main", *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ran.returncode == 1
        assert NO_API in ran.stderr
        assert "Traceback" not in ran.stderr
    for kubeconfig, said in [("missing", "No such file"), ("bad", "while parsing")]:
        if kubeconfig == "bad":
            (tmp_path / "bad").write_text("{not: [valid", encoding="utf-8")
        env["KUBECONFIG"] = str(tmp_path / kubeconfig)
        ran = subprocess.run(
            [sys.executable, "-m", "ragdown_operator.main"], env=env, capture_output=True, text=True
        )
        assert ran.returncode == 1
        assert "ragdown-operator: cannot log in with the kubeconfig:" in ran.stderr
        assert said in ran.stderr
        assert "Traceback" not in ran.stderr


def _invalid_folder(generation: int, status: dict[str, Any]) -> kopf.Body:
    return kopf.Body(
        {
            "apiVersion": "ragdown.dev/v1alpha1",
            "kind": "RagdownFolder",
            "metadata": {"name": "bad", "namespace": "team", "uid": "u-1", "generation": generation},
            "spec": {"folder": "../escape"},
            "status": status,
        }
    )


def test_a_spec_that_failed_for_good_is_not_rerun_by_every_resync() -> None:
    """docs/cluster.md#failures-and-retries: an invalid spec is not retried until it changes. The timer
    re-running it counted `invalid` every minute, so RagdownOperatorReconcileFailing fired for ever."""
    from ragdown_operator import handlers, metrics

    operator = handlers.Operator(OperatorSettings(namespace="team", indexer_url="http://127.0.0.1:9"))

    def invalid_count() -> float:
        return metrics.RECONCILES.labels("timer", "invalid")._value.get()

    async def resync(body: kopf.Body) -> kopf.Patch:
        patch = kopf.Patch()
        await operator.resync(body, patch)
        return patch

    async def scenario() -> None:
        before = invalid_count()
        # First time this generation is seen failing (e.g. the status was lost): run and record it.
        first = await resync(_invalid_folder(3, {}))
        assert invalid_count() == before + 1
        recorded = {"conditions": first["status"]["conditions"]}
        synced = {c["type"]: c for c in recorded["conditions"]}["Synced"]
        assert (synced["reason"], synced["observedGeneration"]) == ("InvalidSpec", 3)
        # Every later resync of the same generation leaves it alone: nothing counted, nothing written.
        for _ in range(3):
            assert not await resync(_invalid_folder(3, recorded))
        assert invalid_count() == before + 1
        # A new generation (the spec changed) is reconciled again.
        await resync(_invalid_folder(4, recorded))
        assert invalid_count() == before + 2
        await operator.close()

    asyncio.run(scenario())


def test_a_retried_failure_is_still_retried_by_the_resync() -> None:
    from ragdown_operator import handlers

    body = _invalid_folder(
        3,
        {
            "conditions": [
                {"type": "Synced", "status": "False", "reason": "IndexerUnreachable", "observedGeneration": 3}
            ]
        },
    )
    assert not handlers.failed_for_good(body)
    permanent = _invalid_folder(
        3,
        {
            "conditions": [
                {"type": "Synced", "status": "False", "reason": "IndexerRefused", "observedGeneration": 3}
            ]
        },
    )
    assert handlers.failed_for_good(permanent)
    assert not handlers.failed_for_good(_invalid_folder(4, dict(permanent.status)))


def test_a_new_login_closes_the_client_it_replaces() -> None:
    """kopf logs in again whenever the API refuses the credentials; each old client's pool is closed."""
    from ragdown_operator import handlers

    operator = handlers.Operator(
        OperatorSettings(namespace="team", kube_url="http://127.0.0.1:9", indexer_url="http://127.0.0.1:9")
    )

    async def login(settings: kopf.OperatorSettings) -> object:
        info = operator.login(settings)  # sync or async: kopf takes either
        return await info if inspect.isawaitable(info) else info

    async def scenario() -> None:
        settings = kopf.OperatorSettings()
        assert await login(settings) is not None
        first = operator.kube._http
        assert first is not None
        assert not first.is_closed
        await login(settings)
        second = operator.kube._http
        assert second is not None
        assert second is not first
        assert first.is_closed
        assert not second.is_closed
        await operator.close()
        assert second.is_closed

    asyncio.run(scenario())
