"""The operator's pure parts: reading a spec, what it asks of the indexer, drift, the Ingress it wants,
and how conditions move."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

import httpx
import kopf
import pytest

from ragdown.folders.manage import FOLDER_TOOLS
from ragdown_operator import instance, kopf_config, release
from ragdown_operator.constants import finalizer_for
from ragdown_operator.errors import IndexerUnreachable, IngressConflict, InvalidSpecError, KubeUnavailable
from ragdown_operator.indexer import FolderState, IndexerClient
from ragdown_operator.ingress import folder_ingress
from ragdown_operator.kube import Kube, applied_fields, client_for, legacy_cleanup, owned_drift
from ragdown_operator.main import NO_API
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import TOOLS, FolderSpec, ingress_name
from ragdown_operator.status import Condition, conditions
from tests.operator.cluster import applied_by, updated_by

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


OWNER = kopf.Body(
    {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": "work", "uid": "u1"},
    }
)


def wanted_ingress(annotations: str = "{}", ingress_class: str = "") -> dict[str, Any]:
    """What the operator applies, with settings as the environment gives them."""
    settings = OperatorSettings.model_validate(
        {"ingress_annotations": annotations, "ingress_class": ingress_class}
    )
    ingress = folder_ingress("work", "work", settings)
    kopf.adopt(ingress, owner=OWNER)
    return ingress


def test_only_the_fields_the_operator_applied_are_compared() -> None:
    written = wanted_ingress('{"ours": "1", "dropped": "x"}')
    current = applied_by("ragdown-operator", written)
    assert owned_drift(current, written) == []
    meta = current["metadata"]
    # The class the default IngressClass assigned (nobody's field), another controller's keys, the
    # status: none of it is ours, so none of it is drift (the operator used to strip the class).
    others = {
        **current,
        "metadata": {
            **meta,
            "labels": {**meta["labels"], "theirs": "a"},
            "annotations": {**meta["annotations"], "cert-manager.io/cluster-issuer": "letsencrypt"},
        },
        "spec": {**current["spec"], "ingressClassName": "nginx"},
        "status": {"loadBalancer": {}},
    }
    assert owned_drift(others, written) == []
    assert owned_drift(others, wanted_ingress('{"ours": "2", "dropped": "x"}')) == ["annotations"]
    assert owned_drift(others, wanted_ingress('{"ours": "1"}')) == ["annotations"]  # to remove
    # A class in the settings is ours: wanted where it is not ours yet, whatever the cluster assigned.
    assert owned_drift(others, wanted_ingress('{"ours": "1", "dropped": "x"}', "traefik")) == ["spec"]
    # A field of ours a person changed is theirs now, and drift.
    edited = updated_by("kubectl-edit", {"spec": {"rules": []}}, current)
    assert owned_drift(edited, written) == ["spec"]
    # Never applied (written before server-side apply, or by someone else): all of it is to apply.
    assert owned_drift(written, written) == ["managedFields"]


# What kube-apiserver v1.37 recorded for an apply by the operator (tests/cluster/test_ingress_ssa.py),
# beside what `kubectl annotate` and a person's `kubectl patch` record.
REAL_MANAGED_FIELDS = [
    {
        "apiVersion": "networking.k8s.io/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {
                "f:annotations": {"f:ragdown.dev/folder": {}},
                "f:labels": {"f:app.kubernetes.io/managed-by": {}},
                "f:ownerReferences": {'k:{"uid":"ed79954e-e4ab-4567-b345-f88d2add5ea0"}': {}},
            },
            "f:spec": {"f:ingressClassName": {}, "f:rules": {}},
        },
        "manager": "ragdown-operator",
        "operation": "Apply",
        "time": "2026-12-02T07:33:44Z",
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:cert-manager.io/cluster-issuer": {}}}},
        "manager": "kubectl-annotate",
        "operation": "Update",
        "time": "2026-12-02T07:34:01Z",
    },
]


def test_the_api_servers_record_of_the_operators_fields_is_read() -> None:
    assert applied_fields({"metadata": {"managedFields": REAL_MANAGED_FIELDS}}) == {
        "labels": {"app.kubernetes.io/managed-by"},
        "annotations": {"ragdown.dev/folder"},
        "ownerReferences": {"ed79954e-e4ab-4567-b345-f88d2add5ea0"},
        "spec": {"ingressClassName", "rules"},
    }
    assert applied_fields({"metadata": {"managedFields": REAL_MANAGED_FIELDS[1:]}}) is None


def test_an_ingress_written_before_server_side_apply_loses_the_old_record() -> None:
    now = wanted_ingress('{"ours": "2"}')
    record = '{"labels":["app.kubernetes.io/name"],"annotations":["dropped","ours","ragdown.dev/folder"]}'
    annotations = {
        "dropped": "x",
        "ours": "1",
        "ragdown.dev/folder": "work",
        "ragdown.dev/owned-keys": record,
    }
    legacy = {**now, "metadata": {**now["metadata"], "annotations": annotations}}
    assert legacy_cleanup(legacy, now) == {
        "metadata": {"annotations": {"ragdown.dev/owned-keys": None, "dropped": None}}
    }
    assert legacy_cleanup(now, now) == {}


def test_the_ingress_is_server_side_applied_and_not_sent_when_ours_matches() -> None:
    """What goes over the wire: the apply patch with only what the operator sets, no class when none
    is configured; and nothing but the read when what it owns already matches."""
    written = wanted_ingress('{"ours": "1"}')
    stored: dict[str, Any] = {}
    sent: list[httpx.Request] = []

    def api(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.method == "GET":
            return httpx.Response(200, json=stored) if stored else httpx.Response(404)
        stored.update(applied_by("ragdown-operator", json.loads(request.content)))
        stored["spec"]["ingressClassName"] = "nginx"  # the cluster's default class
        return httpx.Response(201, json=stored)

    kube = Kube(httpx.AsyncClient(base_url="http://api", transport=httpx.MockTransport(api)))
    assert asyncio.run(kube.apply_ingress("team", written)) == "created"
    get, patch = sent
    assert (get.method, patch.method) == ("GET", "PATCH")
    assert patch.url.path == "/apis/networking.k8s.io/v1/namespaces/team/ingresses/work-mcp"
    assert dict(patch.url.params) == {"fieldManager": "ragdown-operator"}  # creating: not forced
    assert patch.headers["Content-Type"] == "application/apply-patch+yaml"
    body = json.loads(patch.content)
    assert body == written
    assert "ingressClassName" not in body["spec"]
    sent.clear()
    assert asyncio.run(kube.apply_ingress("team", written)) == "unchanged"
    assert [r.method for r in sent] == ["GET"]
    assert stored["spec"]["ingressClassName"] == "nginx"
    sent.clear()
    assert asyncio.run(kube.apply_ingress("team", wanted_ingress('{"ours": "2"}'))) == "updated"
    assert [r.method for r in sent] == ["GET", "PATCH"]
    assert dict(sent[1].url.params) == {"fieldManager": "ragdown-operator", "force": "true"}  # ours


def test_an_ingress_made_between_the_read_and_the_create_is_not_taken_over() -> None:
    theirs = {"metadata": {"name": "work-mcp"}, "spec": {"rules": [{"host": "theirs.example"}]}}
    answers = [
        httpx.Response(404),
        httpx.Response(409, json={"reason": "Conflict"}),
        httpx.Response(200, json=theirs),
    ]
    sent: list[httpx.Request] = []

    def api(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answers.pop(0)

    kube = Kube(httpx.AsyncClient(base_url="http://api", transport=httpx.MockTransport(api)))
    with pytest.raises(IngressConflict, match="exists and is not this resource's"):
        asyncio.run(kube.apply_ingress("team", wanted_ingress()))
    assert [r.method for r in sent] == ["GET", "PATCH", "GET"]
    assert "force" not in sent[1].url.params


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
    owner = kopf.Body(
        {
            "apiVersion": "ragdown.dev/v1alpha1",
            "kind": "RagdownFolder",
            "metadata": {"name": "work", "uid": "u1"},
        }
    )
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
        OperatorSettings(ingress_annotations='{"a": 1}')  # type: ignore[arg-type]  # as the environment gives it


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


@pytest.mark.slow
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
    body = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": "bad", "namespace": "team", "uid": "u-1", "generation": generation},
        "spec": {"folder": "../escape"},
        "status": status,
    }
    return kopf.Body(cast(kopf.RawBody, body))  # kopf's RawMeta leaves `generation` out


def test_a_spec_that_failed_for_good_is_not_rerun_by_every_resync() -> None:
    """docs/cluster.md#failures-and-retries: an invalid spec is not retried until it changes. The timer
    re-running it counted `invalid` every minute, so RagdownOperatorReconcileFailing fired for ever."""
    from ragdown_operator import handlers, metrics

    operator = handlers.Operator(OperatorSettings(namespace="team", indexer_url="http://127.0.0.1:9"))

    def invalid_count() -> float:
        return float(metrics.RECONCILES.labels("timer", "invalid")._value.get())

    async def resync(body: kopf.Body) -> kopf.Patch:
        patch = kopf.Patch()
        await operator.resync(body, patch, ingresses={})
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


def test_a_timeout_without_text_is_named_in_the_error() -> None:
    """At 1,000 folders (bench/README.md) httpx's pool gave out and the errors read "did not answer: "."""

    def busy(request: httpx.Request) -> httpx.Response:
        raise httpx.PoolTimeout("")

    async def both() -> None:
        kube = Kube(httpx.AsyncClient(base_url="https://api.test", transport=httpx.MockTransport(busy)))
        with pytest.raises(KubeUnavailable, match=r"did not answer: PoolTimeout$"):
            await kube.get_ingress("ns", "x")
        await kube.close()
        indexer = IndexerClient("http://indexer.test", "token", 5)
        await indexer.close()
        indexer._http = httpx.AsyncClient(base_url="http://indexer.test", transport=httpx.MockTransport(busy))
        with pytest.raises(IndexerUnreachable, match=r"did not answer: PoolTimeout$"):
            await indexer.folder("docs")
        await indexer.close()

    asyncio.run(both())
