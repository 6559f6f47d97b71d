{{/*
Named helpers shared by the templates: names, labels, the image, the token Secret, the server's
environment, probes, volumes and the query-log sidecar.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "ragdown.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name every object name starts with: <release>-<chart>, or the release name when it
already contains the chart name. Truncated so "-indexer" and friends still fit 63 characters.
*/}}
{{- define "ragdown.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 45 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart-version, for the helm.sh/chart label. */}}
{{- define "ragdown.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of one component: call with (dict "ctx" $ "component" "indexer"). */}}
{{- define "ragdown.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ragdown.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Every label of one component's objects: call with (dict "ctx" $ "component" "indexer"). */}}
{{- define "ragdown.labels" -}}
helm.sh/chart: {{ include "ragdown.chart" .ctx }}
{{ include "ragdown.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: ragdown
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Component object names. */}}
{{- define "ragdown.indexerName" -}}
{{- printf "%s-indexer" (include "ragdown.fullname" .) }}
{{- end }}
{{- define "ragdown.readerName" -}}
{{- printf "%s-reader" (include "ragdown.fullname" .) }}
{{- end }}
{{- define "ragdown.indexerInternalName" -}}
{{- printf "%s-indexer-internal" (include "ragdown.fullname" .) }}
{{- end }}
{{- define "ragdown.operatorName" -}}
{{- printf "%s-operator" (include "ragdown.fullname" .) }}
{{- end }}

{{/* The claim holding docs/ and index/: the existing one or <fullname>-data. */}}
{{- define "ragdown.claimName" -}}
{{- default (printf "%s-data" (include "ragdown.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "ragdown.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "ragdown.operatorName" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference; the tag defaults to the chart's appVersion. */}}
{{- define "ragdown.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
The Secret holding the three tokens (docs/security.md), and each one's key: the agents' token
(MCP only), the admin's (the web UI and /api, the operator), and the internal one (readers to the
indexer's internal port, never routed by an Ingress).
*/}}
{{- define "ragdown.secretName" -}}
{{- default (printf "%s-token" (include "ragdown.fullname" .)) .Values.auth.existingSecret }}
{{- end }}
{{- define "ragdown.secretKey" -}}
{{- if .Values.auth.existingSecret }}
{{- .Values.auth.existingSecretKey }}
{{- else -}}
token
{{- end }}
{{- end }}
{{- define "ragdown.adminSecretKey" -}}
{{- if .Values.auth.existingSecret }}
{{- .Values.auth.existingSecretAdminKey }}
{{- else -}}
adminToken
{{- end }}
{{- end }}
{{- define "ragdown.internalSecretKey" -}}
{{- if .Values.auth.existingSecret }}
{{- .Values.auth.existingSecretInternalKey }}
{{- else -}}
internalToken
{{- end }}
{{- end }}

{{/* One env entry read from the Secret: call with (dict "ctx" $ "name" "RAGDOWN_TOKEN" "key" <key>). */}}
{{- define "ragdown.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "ragdown.secretName" .ctx }}
      key: {{ .key }}
{{- end }}

{{/* The agents' RAGDOWN_TOKEN. */}}
{{- define "ragdown.tokenEnv" -}}
{{ include "ragdown.secretEnv" (dict "ctx" . "name" "RAGDOWN_TOKEN" "key" (include "ragdown.secretKey" .)) }}
{{- end }}

{{/* The admin's token, as the server (RAGDOWN_ADMIN_TOKEN) and the operator read it. */}}
{{- define "ragdown.adminTokenEnv" -}}
{{ include "ragdown.secretEnv" (dict "ctx" . "name" "RAGDOWN_ADMIN_TOKEN" "key" (include "ragdown.adminSecretKey" .)) }}
{{- end }}

{{/* The internal token, shared by the indexer and the readers only. */}}
{{- define "ragdown.internalTokenEnv" -}}
{{ include "ragdown.secretEnv" (dict "ctx" . "name" "RAGDOWN_INTERNAL_TOKEN" "key" (include "ragdown.internalSecretKey" .)) }}
{{- end }}

{{/* The port of the indexer's internal listener (readers only; no Ingress routes it). */}}
{{- define "ragdown.internalPort" -}}
3001
{{- end }}

{{/*
Host header values MCP's DNS-rebinding check accepts: the ingress host and the in-cluster names of
both Services (short and namespaced, any port), so in-cluster callers and the ingress both pass.
*/}}
{{- define "ragdown.allowedHosts" -}}
{{- $hosts := list }}
{{- with .Values.ingress.host }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- range $service := list (include "ragdown.indexerName" .) (include "ragdown.readerName" .) }}
{{- range $name := list $service (printf "%s.%s.svc" $service $.Release.Namespace) }}
{{- $hosts = concat $hosts (list $name (printf "%s:*" $name)) }}
{{- end }}
{{- end }}
{{- $hosts = concat $hosts .Values.server.allowedHosts }}
{{- join "," $hosts }}
{{- end }}

{{/* The public URL the operator reports MCP endpoints under. */}}
{{- define "ragdown.publicUrl" -}}
{{- if .Values.operator.publicUrl }}
{{- .Values.operator.publicUrl | trimSuffix "/" }}
{{- else if .Values.ingress.host }}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tls.secretName "")) .Values.ingress.host }}
{{- end }}
{{- end }}

{{/* Where each pod writes its query log (an emptyDir the sidecar follows). */}}
{{- define "ragdown.queryLogFile" -}}
/var/log/ragdown/query-log.jsonl
{{- end }}

{{/*
The environment of `ragdown serve`, shared by the indexer and the readers.
Call with (dict "ctx" $ "role" "primary"|"reader" "extraEnv" <component extraEnv>).
*/}}
{{- define "ragdown.serverEnv" -}}
{{- $ctx := .ctx -}}
- name: RAGDOWN_ROLE
  value: {{ .role }}
{{- if eq .role "reader" }}
- name: RAGDOWN_PRIMARY_URL
  value: {{ printf "http://%s:%d" (include "ragdown.indexerInternalName" $ctx) (int $ctx.Values.service.internalPort) | quote }}
{{- else }}
- name: RAGDOWN_INTERNAL_PORT
  value: {{ include "ragdown.internalPort" $ctx | quote }}
{{ include "ragdown.adminTokenEnv" $ctx }}
{{- end }}
{{ include "ragdown.internalTokenEnv" $ctx }}
- name: RAGDOWN_DOCS_DIR
  value: /data/docs
- name: RAGDOWN_DATA_DIR
  value: /data/index
- name: RAGDOWN_HOST
  value: 0.0.0.0
- name: PORT
  value: "3000"
- name: RAGDOWN_METRICS_PORT
  value: "9090"
- name: LANCE_CPU_THREADS
  value: {{ $ctx.Values.server.lanceCpuThreads | quote }}
- name: RAGDOWN_THREADS
  value: {{ $ctx.Values.server.threads | quote }}
{{ include "ragdown.tokenEnv" $ctx }}
- name: RAGDOWN_ALLOWED_HOSTS
  value: {{ include "ragdown.allowedHosts" $ctx | quote }}
{{- with $ctx.Values.server.embedder }}
- name: RAGDOWN_EMBEDDER
  value: {{ . | quote }}
{{- end }}
- name: XDG_CACHE_HOME
  value: /tmp/cache
{{- if $ctx.Values.queryLog.enabled }}
- name: RAGDOWN_QUERY_LOG
  value: "true"
- name: RAGDOWN_QUERY_LOG_FILE
  value: {{ include "ragdown.queryLogFile" $ctx }}
{{- end }}
{{- with $ctx.Values.server.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with .extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The container ports of a server pod: call with (dict "ctx" $ "role" "primary"|"reader"). */}}
{{- define "ragdown.serverPorts" -}}
- name: http
  containerPort: 3000
  protocol: TCP
- name: metrics
  containerPort: 9090
  protocol: TCP
{{- if eq .role "primary" }}
- name: internal
  containerPort: {{ include "ragdown.internalPort" .ctx }}
  protocol: TCP
{{- end }}
{{- end }}

{{/* Liveness, readiness and startup probes of a server container. */}}
{{- define "ragdown.serverProbes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  {{- toYaml .Values.server.livenessProbe | nindent 2 }}
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  {{- toYaml .Values.server.readinessProbe | nindent 2 }}
startupProbe:
  httpGet:
    path: /healthz
    port: http
  {{- toYaml .Values.server.startupProbe | nindent 2 }}
{{- end }}

{{/* The query-log shipper: follows the pod's query log to stdout. */}}
{{- define "ragdown.queryLogSidecar" -}}
- name: query-log
  image: {{ include "ragdown.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if .Values.queryLog.nativeSidecar }}
  # A native sidecar: started before the server, stopped after it (Kubernetes >= 1.29).
  restartPolicy: Always
  {{- end }}
  args:
    - tail-log
    - --file
    - {{ include "ragdown.queryLogFile" . }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  resources:
    {{- toYaml .Values.queryLog.resources | nindent 4 }}
  volumeMounts:
    - name: query-log
      mountPath: /var/log/ragdown
      readOnly: true
    - name: tmp
      mountPath: /tmp
{{- end }}

{{/* Volumes of a server pod: the shared claim, /tmp, and the query log. */}}
{{- define "ragdown.serverVolumes" -}}
- name: data
  persistentVolumeClaim:
    claimName: {{ include "ragdown.claimName" .ctx }}
    readOnly: {{ .readOnly }}
- name: tmp
  emptyDir: {}
{{- if .ctx.Values.queryLog.enabled }}
- name: query-log
  emptyDir: {}
{{- end }}
{{- end }}

{{/* Volume mounts of a server container. */}}
{{- define "ragdown.serverVolumeMounts" -}}
- name: data
  mountPath: /data
  readOnly: {{ .readOnly }}
- name: tmp
  mountPath: /tmp
{{- if .ctx.Values.queryLog.enabled }}
- name: query-log
  mountPath: /var/log/ragdown
{{- end }}
{{- end }}

{{/*
Annotations of the operator's per-folder MCP Ingresses, as JSON: the base Ingress's without
cert-manager.io/* (the certificate is issued once, for the base Ingress), then ingress.mcpAnnotations.
*/}}
{{- define "ragdown.mcpIngressAnnotations" -}}
{{- $annotations := dict -}}
{{- range $key, $value := .Values.ingress.annotations -}}
{{- if not (hasPrefix "cert-manager.io/" $key) -}}
{{- $_ := set $annotations $key $value -}}
{{- end -}}
{{- end -}}
{{- range $key, $value := .Values.ingress.mcpAnnotations -}}
{{- $_ := set $annotations $key $value -}}
{{- end -}}
{{- $annotations | toJson -}}
{{- end -}}
