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
{{ include "ragdown.podLabels" . }}
{{- end }}

{{/* The labels of a component's pod template: all but helm.sh/chart, since any change to a pod
template rolls its pods and a chart version bump alone must not restart every pod. */}}
{{- define "ragdown.podLabels" -}}
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
{{- define "ragdown.indexerHeadlessName" -}}
{{- printf "%s-indexer-headless" (include "ragdown.fullname" .) }}
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

{{/*
"true" when the data claim is ReadWriteMany: readers may then run on any node. Otherwise the
readers' read-only mounts of the claim only work on the node that has it attached, the indexer's.
ReadWriteOncePod admits one pod only, so readers could never mount it.
*/}}
{{- define "ragdown.sharedStorage" -}}
{{- if include "ragdown.objectStore" . }}true
{{- else }}
{{- if has "ReadWriteOncePod" .Values.persistence.accessModes }}
{{- fail "persistence.accessModes: ReadWriteOncePod admits only the indexer, and readers mount the same claim: use ReadWriteOnce (readers on the indexer's node) or ReadWriteMany" }}
{{- end }}
{{- if has "ReadWriteMany" .Values.persistence.accessModes }}true{{ end }}
{{- end }}
{{- end }}

{{/*
Refuse a topology the storage cannot give, and a reader budget no drain could satisfy
(docs/cluster.md#topologies). singleNode: a ReadWriteOnce claim, every reader on the indexer's node.
multiNode: readers on any node, which needs ReadWriteMany or the index on object storage.
*/}}
{{- define "ragdown.checkTopology" -}}
{{- $shared := include "ragdown.sharedStorage" . }}
{{- if eq .Values.topology "multiNode" }}
{{- if not $shared }}
{{- fail (printf "topology=multiNode needs readers that can mount the index on any node, but persistence.accessModes is %s: set persistence.accessModes=[ReadWriteMany] or index.objectStore.uri, or topology=singleNode" (toJson .Values.persistence.accessModes)) }}
{{- end }}
{{- $readers := int (ternary .Values.reader.autoscaling.minReplicas .Values.reader.replicas .Values.reader.autoscaling.enabled) }}
{{- $budget := .Values.reader.podDisruptionBudget }}
{{- if and $budget.enabled (gt $readers 1) }}
{{- $min := 0 }}
{{- if kindIs "string" $budget.minAvailable }}
{{- $min = int (ceil (divf (mul $readers (int (trimSuffix "%" $budget.minAvailable))) 100)) }}
{{- else }}
{{- $min = int $budget.minAvailable }}
{{- end }}
{{- if ge $min $readers }}
{{- fail (printf "reader.podDisruptionBudget.minAvailable=%v keeps all %d readers up, so no node drain could evict one: set it below the fewest readers (reader.autoscaling.minReplicas, or reader.replicas without autoscaling)" $budget.minAvailable $readers) }}
{{- end }}
{{- end }}
{{- else if $shared }}
{{- fail "topology=singleNode holds every reader on the indexer's node, but persistence.accessModes ReadWriteMany (or index.objectStore.uri) lets them spread: set topology=multiNode" }}
{{- end }}
{{- end }}

{{/* "true" when every pod runs on the indexer's node (topology singleNode, a ReadWriteOnce claim). */}}
{{- define "ragdown.singleNode" -}}
{{- if eq .Values.topology "singleNode" }}true{{ end }}
{{- end }}

{{/* "true" when the index is on object storage: readers then mount no claim (docs/design.md#readers-without-the-folder). */}}
{{- define "ragdown.objectStore" -}}
{{- if .Values.index.objectStore.uri }}true{{ end }}
{{- end }}

{{/*
The indexer's ServiceAccount, when one is named or rendered (IRSA, Workload Identity): read-write
access to the store. The readers have their own (ragdown.readerServiceAccountName), read-only.
*/}}
{{- define "ragdown.serverServiceAccountName" -}}
{{- $sa := .Values.index.objectStore.serviceAccount }}
{{- if $sa.create }}{{ default (printf "%s-server" (include "ragdown.fullname" .)) $sa.name }}
{{- else }}{{ $sa.name }}{{ end }}
{{- end }}

{{/* The readers' ServiceAccount, when one is named or rendered: read-only access to the store. */}}
{{- define "ragdown.readerServiceAccountName" -}}
{{- $sa := .Values.index.objectStore.reader.serviceAccount }}
{{- if $sa.create }}{{ default (printf "%s-reader" (include "ragdown.fullname" .)) $sa.name }}
{{- else }}{{ $sa.name }}{{ end }}
{{- end }}

{{/*
The store's credentials, as a container's envFrom (empty without a Secret): the indexer's
read-write index.objectStore.existingSecret, the readers' read-only index.objectStore.reader one.
Readers never get the indexer's: with the index on the store and credentials given for the indexer
only, the chart refuses to guess. Call with (dict "ctx" $ "role" "primary"|"reader").
*/}}
{{- define "ragdown.serverEnvFrom" -}}
{{- $store := .ctx.Values.index.objectStore }}
{{- if and (eq .role "reader") $store.uri (or $store.existingSecret (include "ragdown.serverServiceAccountName" .ctx)) (not (or $store.reader.existingSecret (include "ragdown.readerServiceAccountName" .ctx))) }}
{{- fail "index.objectStore gives the indexer read-write credentials (existingSecret or serviceAccount) and the readers none: set index.objectStore.reader.existingSecret or index.objectStore.reader.serviceAccount to read-only ones (docs/cluster.md#object-storage-credentials)" }}
{{- end }}
{{- with (eq .role "reader" | ternary $store.reader.existingSecret $store.existingSecret) }}
envFrom:
  - secretRef:
      name: {{ . | quote }}
{{- end }}
{{- end }}

{{/* A pod affinity term: same node as the pods of one component. Call with (dict "ctx" $ "component" "indexer"). */}}
{{- define "ragdown.sameNodeTerm" -}}
topologyKey: kubernetes.io/hostname
labelSelector:
  matchLabels:
    {{- include "ragdown.selectorLabels" . | nindent 4 }}
{{- end }}

{{/*
The readers' affinity: reader.affinity, plus what the storage needs. ReadWriteOnce: a required
podAffinity to the indexer pod's node (the only node the claim can be mounted on), which caps the
readers at what that node holds. ReadWriteMany: unless reader.affinity is given, spread readers over
nodes when the scheduler can (preferred, never refusing to schedule one).
*/}}
{{- define "ragdown.readerAffinity" -}}
{{- $affinity := deepCopy (default (dict) .Values.reader.affinity) }}
{{- if include "ragdown.sharedStorage" . }}
{{- if not .Values.reader.affinity }}
{{- $term := dict "weight" 100 "podAffinityTerm" (include "ragdown.sameNodeTerm" (dict "ctx" . "component" "reader") | fromYaml) }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list $term)) }}
{{- end }}
{{- else }}
{{- $podAffinity := default (dict) $affinity.podAffinity }}
{{- $required := default (list) $podAffinity.requiredDuringSchedulingIgnoredDuringExecution }}
{{- $term := include "ragdown.sameNodeTerm" (dict "ctx" . "component" "indexer") | fromYaml }}
{{- $_ := set $podAffinity "requiredDuringSchedulingIgnoredDuringExecution" (append $required $term) }}
{{- $_ := set $affinity "podAffinity" $podAffinity }}
{{- end }}
{{- toYaml $affinity }}
{{- end }}

{{/*
The indexer's affinity: indexer.affinity, plus, with ReadWriteOnce, a preference for the readers'
node: a restarted indexer then goes back to the node that still has the claim attached for the
readers, instead of waiting for a volume another node holds.
*/}}
{{- define "ragdown.indexerAffinity" -}}
{{- $affinity := deepCopy (default (dict) .Values.indexer.affinity) }}
{{- if not (include "ragdown.sharedStorage" .) }}
{{- $podAffinity := default (dict) $affinity.podAffinity }}
{{- $preferred := default (list) $podAffinity.preferredDuringSchedulingIgnoredDuringExecution }}
{{- $term := dict "weight" 100 "podAffinityTerm" (include "ragdown.sameNodeTerm" (dict "ctx" . "component" "reader") | fromYaml) }}
{{- $_ := set $podAffinity "preferredDuringSchedulingIgnoredDuringExecution" (append $preferred $term) }}
{{- $_ := set $affinity "podAffinity" $podAffinity }}
{{- end }}
{{- with $affinity }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
A component's topologySpreadConstraints; one without a labelSelector gets the component's pods.
Call with (dict "ctx" $ "component" "reader" "constraints" <list>).
*/}}
{{- define "ragdown.topologySpreadConstraints" -}}
{{- $constraints := list }}
{{- range .constraints }}
{{- $constraint := deepCopy . }}
{{- if not $constraint.labelSelector }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" (include "ragdown.selectorLabels" (dict "ctx" $.ctx "component" $.component) | fromYaml)) }}
{{- end }}
{{- $constraints = append $constraints $constraint }}
{{- end }}
{{- with $constraints }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
The pod security context. openshift: true leaves out the fixed ids (runAsUser, runAsGroup, fsGroup):
OpenShift's restricted SCC assigns them from the namespace's range and refuses pods that name others.
*/}}
{{- define "ragdown.podSecurityContext" -}}
{{- if .Values.openshift }}
{{- toYaml (omit .Values.podSecurityContext "runAsUser" "runAsGroup" "fsGroup") }}
{{- else }}
{{- toYaml .Values.podSecurityContext }}
{{- end }}
{{- end }}

{{/* The container security context; with openshift: true, without fixed ids (as above). */}}
{{- define "ragdown.securityContext" -}}
{{- if .Values.openshift }}
{{- toYaml (omit .Values.securityContext "runAsUser" "runAsGroup") }}
{{- else }}
{{- toYaml .Values.securityContext }}
{{- end }}
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "ragdown.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "ragdown.operatorName" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- /* Never the namespace's `default`: every pod running as it would get the operator's Role. */}}
{{- if not .Values.operator.serviceAccount.name }}
{{- fail "operator.serviceAccount.create=false needs operator.serviceAccount.name (an existing ServiceAccount for the operator alone): the chart would otherwise bind the operator's Role to the namespace's `default`" }}
{{- end }}
{{- if eq .Values.operator.serviceAccount.name "default" }}
{{- fail "operator.serviceAccount.name=default would give the operator's Role to every pod running as the namespace's `default` ServiceAccount: name one for the operator alone, or set operator.serviceAccount.create=true" }}
{{- end }}
{{- .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The image reference: [registry/]repository:tag[@digest]; the tag defaults to the chart's appVersion.
With a digest the runtime pulls by digest and the tag is only there for people reading the spec.
*/}}
{{- define "ragdown.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository }}
{{- end }}
{{- $reference := printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- with .Values.image.digest }}
{{- $reference = printf "%s@%s" $reference . }}
{{- end }}
{{- $reference }}
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

{{/*
The rendered Secret's data as JSON (key: base64 value). Each token: the one given, else the one
already in the cluster (kept across upgrades), else a new random one. Worked out once per render and
kept on the root context (Helm shares it between templates), so the Secret and the pods'
checksum/secret annotation see the same random tokens. Call with the root context ($).
*/}}
{{- define "ragdown.tokenData" -}}
{{- if not (hasKey . "ragdownTokenData") }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "ragdown.secretName" .) }}
{{- $data := dict }}
{{- range $key, $given := dict "token" .Values.auth.token "adminToken" .Values.auth.adminToken "internalToken" .Values.auth.internalToken }}
{{- if $given }}
{{- $_ := set $data $key ($given | b64enc) }}
{{- else if and $existing $existing.data (hasKey $existing.data $key) }}
{{- $_ := set $data $key (index $existing.data $key) }}
{{- else }}
{{- $_ := set $data $key (randAlphaNum 40 | b64enc) }}
{{- end }}
{{- end }}
{{- $_ := set . "ragdownTokenData" ($data | toJson) }}
{{- end }}
{{- index . "ragdownTokenData" }}
{{- end }}

{{/*
Annotations of a pod template: checksum/secret (so pods roll when the chart's tokens change; an
auth.existingSecret is not the chart's to read) and the component's own podAnnotations.
Call with (dict "ctx" $ "annotations" <component podAnnotations>).
*/}}
{{- define "ragdown.podAnnotations" -}}
{{- $annotations := deepCopy (default (dict) .annotations) }}
{{- if not .ctx.Values.auth.existingSecret }}
{{- $_ := set $annotations "checksum/secret" (include "ragdown.tokenData" .ctx | sha256sum) }}
{{- end }}
{{- with $annotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
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
Whether some Ingress of the release routes any Host: the base Ingress and the operator's per-folder
ones share ingress.host, and without it they have no host rule at all.
*/}}
{{- define "ragdown.routesAnyHost" -}}
{{- if and (not .Values.ingress.host) (or .Values.ingress.enabled .Values.operator.enabled) }}true{{ end }}
{{- end }}

{{/*
Host header values the servers answer to (RAGDOWN_ALLOWED_HOSTS, serving/guard.py), derived from
what the chart renders: "*" only when ingress.allowAnyHost asks for it (the server still requires a
browser's Origin to be the request's own host), ingress.host, the host of operator.publicUrl, the in-cluster names of both Services (short
and namespaced, any port), then server.allowedHosts.
*/}}
{{- define "ragdown.allowedHosts" -}}
{{- $hosts := list }}
{{- if .Values.ingress.allowAnyHost }}
{{- $hosts = append $hosts "*" }}
{{- end }}
{{- with .Values.ingress.host }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- with .Values.operator.publicUrl }}
{{- $hosts = append $hosts (urlParse .).host }}
{{- end }}
{{- range $service := list (include "ragdown.indexerName" .) (include "ragdown.readerName" .) }}
{{- range $name := list $service (printf "%s.%s.svc" $service $.Release.Namespace) }}
{{- $hosts = concat $hosts (list $name (printf "%s:*" $name)) }}
{{- end }}
{{- end }}
{{- $hosts = concat $hosts .Values.server.allowedHosts }}
{{- join "," (uniq $hosts) }}
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
{{- /* A reader of an index on object storage has no docs volume: it reads its copy of the folders
(an empty value clears the image's default). */}}
- name: RAGDOWN_DOCS_DIR
  value: {{ if and (eq .role "reader") (include "ragdown.objectStore" $ctx) }}""{{ else }}/data/docs{{ end }}
- name: RAGDOWN_DATA_DIR
  value: /data/index
{{- with $ctx.Values.index.objectStore }}
{{- if .uri }}
- name: RAGDOWN_INDEX_URI
  value: {{ .uri | quote }}
- name: RAGDOWN_INDEX_REFRESH_SECONDS
  value: {{ .refreshSeconds | quote }}
{{- with .endpoint }}
- name: AWS_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
{{- with .region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
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
# Hub models and the int8 MiniLM build: on the data claim by default, so the indexer fetches or
# builds them once and readers read the same files through their read-only mount.
- name: RAGDOWN_MODELS
  value: {{ $ctx.Values.server.modelsDir | quote }}
{{- with $ctx.Values.server.hubUrl }}
- name: RAGDOWN_HUB_URL
  value: {{ . | quote }}
{{- end }}
{{- if $ctx.Values.queryLog.enabled }}
- name: RAGDOWN_QUERY_LOG
  value: "true"
- name: RAGDOWN_QUERY_LOG_FILE
  value: {{ include "ragdown.queryLogFile" $ctx }}
{{- if $ctx.Values.queryLog.includePrompts }}
- name: RAGDOWN_QUERY_LOG_PROMPTS
  value: "true"
{{- end }}
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
    # It starts before the server has logged anything: --wait follows the file once it appears.
    - tail-log
    - --wait
    - --file
    - {{ include "ragdown.queryLogFile" . }}
  securityContext:
    {{- include "ragdown.securityContext" . | nindent 4 }}
  resources:
    {{- toYaml .Values.queryLog.resources | nindent 4 }}
  volumeMounts:
    - name: query-log
      mountPath: /var/log/ragdown
      readOnly: true
    - name: tmp
      mountPath: /tmp
{{- end }}

{{/*
Volumes of a server pod: the shared claim, /tmp, the query log, then the component's extraVolumes.
Call with (dict "ctx" $ "readOnly" <bool> "extra" <component extraVolumes>).
*/}}
{{- define "ragdown.serverVolumes" -}}
{{- if and .readOnly (include "ragdown.objectStore" .ctx) }}
# The index is on object storage: this reader's own scratch (its copy of the folders, models, its files).
- name: data
  emptyDir:
    sizeLimit: {{ .ctx.Values.index.objectStore.readerScratchSize }}
{{- else }}
- name: data
  persistentVolumeClaim:
    claimName: {{ include "ragdown.claimName" .ctx }}
    readOnly: {{ .readOnly }}
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .ctx.Values.tmpSizeLimit }}
{{- if .ctx.Values.queryLog.enabled }}
# The log rotates at 10 MiB and keeps one old file.
- name: query-log
  emptyDir:
    sizeLimit: 64Mi
{{- end }}
{{- with .extra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Volume mounts of a server container, then the component's extraVolumeMounts. */}}
{{- define "ragdown.serverVolumeMounts" -}}
- name: data
  mountPath: /data
  readOnly: {{ and .readOnly (not (include "ragdown.objectStore" .ctx)) }}
- name: tmp
  mountPath: /tmp
{{- if .ctx.Values.queryLog.enabled }}
- name: query-log
  mountPath: /var/log/ragdown
{{- end }}
{{- with .extra }}
{{ toYaml . }}
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


{{/*
One ingress rule of a NetworkPolicy: `port` admits the `peer` (a networkPolicy.ingressController or
.monitoring value: namespaceSelector and podSelector as given) and the pods of this release's
`components`. An empty peer admits any source, as if there were no policy: the default install then
works with any ingress controller (hostNetwork ones, LoadBalancer Services) and any Prometheus.
Call with (dict "ctx" $ "peer" <value> "components" <list> "port" <port name>).
*/}}
{{- define "ragdown.networkRule" -}}
{{- $rule := dict "ports" (list (dict "port" .port "protocol" "TCP")) }}
{{- if .peer }}
{{- $from := list (pick .peer "namespaceSelector" "podSelector") }}
{{- range $component := .components }}
{{- $labels := include "ragdown.selectorLabels" (dict "ctx" $.ctx "component" $component) | fromYaml }}
{{- $from = append $from (dict "podSelector" (dict "matchLabels" $labels)) }}
{{- end }}
{{- $_ := set $rule "from" $from }}
{{- end }}
{{- toYaml (list $rule) }}
{{- end }}
