"""The operator's configuration, read once at start from `RAGDOWN_OPERATOR_*` (the chart sets them)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import AliasChoices, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class OperatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGDOWN_OPERATOR_", extra="ignore")

    indexer_url: str = Field(
        default="http://ragdown-indexer:3000", description="the indexer's HTTP API, http(s)://host:port"
    )
    token: str | None = Field(
        default=None,
        validation_alias=AliasChoices("RAGDOWN_OPERATOR_TOKEN", "RAGDOWN_ADMIN_TOKEN"),
        description="the indexer's admin token, for its /api (the chart's Secret; never the agents' token)",
    )
    namespace: str = Field(default="default", description="the namespace watched (the release's)")
    instance: str = Field(
        default="ragdown",
        max_length=53,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="the Helm release: which RagdownFolders are ours (instance.py); labels the Ingresses",
    )
    claim_unlabelled: bool = Field(
        default=True, description="reconcile RagdownFolders without a ragdown.dev/instance label too"
    )
    reader_service: str = Field(default="ragdown-reader", description="the Service MCP routes go to")
    reader_port: int = Field(default=3000, ge=1, le=65535)
    ingress_class: str = Field(default="", description="ingressClassName of MCP Ingresses; empty: default")
    ingress_host: str = Field(default="", description="the host of MCP Ingresses; empty: any host")
    ingress_tls_secret: str = Field(
        default="", description="TLS Secret of MCP Ingresses (host or not); empty: no TLS"
    )
    ingress_annotations: dict[str, str] = Field(default_factory=dict, description="JSON object")
    public_url: str = Field(default="", description="base of status.endpoint; default from host and TLS")
    resync_s: float = Field(default=60.0, gt=0, description="how often drift is repaired, counts refreshed")
    retry_s: float = Field(default=10.0, gt=0, description="first retry delay while the indexer is down")
    deletion_timeout_s: float = Field(
        default=600.0,
        gt=0,
        description="how long a deleted resource waits for the indexer before it goes anyway",
    )
    request_timeout_s: float = Field(default=30.0, gt=0)
    max_concurrent_reconciles: int = Field(
        default=16, ge=1, le=256, description="reconciles that call the API and the indexer at once"
    )
    # Whole seconds: the API server reads `timeoutSeconds` as an integer ("300.0" is refused).
    watch_server_timeout_s: int = Field(
        default=300, ge=1, description="the API server ends a watch after this"
    )
    watch_client_timeout_s: float = Field(
        default=330.0,
        gt=0,
        description="a watch still open this long (silent behind a proxy) is cut and reopened",
    )
    watch_connect_timeout_s: float = Field(default=30.0, gt=0, description="to open a watch")
    kube_url: str = Field(
        default="", description="the Kubernetes API for tests and local runs; empty: in-cluster or kubeconfig"
    )
    liveness_port: int = Field(default=8080, ge=0, le=65535, description="kopf's /healthz; 0: off")
    verbose: bool = Field(default=False, description="log kopf's own debug lines")
    metrics_port: int = Field(default=9090, ge=0, le=65535, description="Prometheus /metrics; 0: off")

    @field_validator("ingress_annotations", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = json.loads(value) if value.strip() else {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError("must be a JSON object of strings")
        return value

    @field_validator("indexer_url", "public_url", "kube_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value.rstrip("/")

    @field_validator("watch_client_timeout_s")
    @classmethod
    def _client_outlasts_server(cls, value: float, info: ValidationInfo) -> float:
        # Cut by the client first, every watch would end in an error instead of the server's clean end.
        server = info.data.get("watch_server_timeout_s")
        if server is not None and value <= server:
            raise ValueError(f"must be longer than RAGDOWN_OPERATOR_WATCH_SERVER_TIMEOUT_S ({server})")
        return value

    def endpoint_base(self) -> str:
        """Where agents reach the ingress: `public_url`, else the host (https with a TLS secret)."""
        if self.public_url:
            return self.public_url
        if self.ingress_host:
            return ("https://" if self.ingress_tls_secret else "http://") + self.ingress_host
        return ""
