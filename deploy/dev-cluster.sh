#!/usr/bin/env bash
# A real Kubernetes control plane on this machine, built from Go modules (docs/cluster.md#a-real-control-plane):
# etcd, kube-apiserver (RBAC, ServiceAccount tokens, the default admission plugins), kube-controller-manager,
# kube-scheduler, and kwok simulating three nodes in two zones. Every port listens on 127.0.0.1 only.
#
#   deploy/dev-cluster.sh build   build the pinned binaries into the cache (once per machine)
#   deploy/dev-cluster.sh up      build what is missing, start the cluster, wait until its nodes are Ready
#   deploy/dev-cluster.sh env     print KUBECONFIG=, KUBECTL=, HELM= lines:
#                                 set -a; eval "$(deploy/dev-cluster.sh env)"; set +a
#   deploy/dev-cluster.sh down    stop every process `up` started (by pid file) and remove the state
#   deploy/dev-cluster.sh status  say whether the cluster answers
#   deploy/dev-cluster.sh built   succeed when every binary is in the cache (nothing to build)
#
# RAGDOWN_K8S_CACHE (default ~/.cache/ragdown-k8s) holds the binaries and the Go caches; RAGDOWN_K8S_STATE
# (default /tmp/ragdown-k8s-<uid>) the certificates, etcd's data, logs and pid files; RAGDOWN_K8S_PORT
# (default 16443) is the API server's port, and the next ports up are the other components'.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MODULES=$HERE/dev-cluster
say() { echo "dev-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

# The pinned versions are the wrapper modules' requirements, so go.mod is the one place to change them.
required() { awk -v m="$2" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$MODULES/$1/go.mod" | head -1; }
K8S_VERSION=$(required kubernetes k8s.io/kubernetes)
ETCD_VERSION=$(required etcd go.etcd.io/etcd/server/v3)
KWOK_VERSION=$(required kwok sigs.k8s.io/kwok)
HELM_VERSION=$(required helm helm.sh/helm/v3)
VERSIONS="k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION"
CACHE=${RAGDOWN_K8S_CACHE:-$HOME/.cache/ragdown-k8s}
BIN=$CACHE/$VERSIONS/bin
STATE=${RAGDOWN_K8S_STATE:-/tmp/ragdown-k8s-$(id -u)}
PORT=${RAGDOWN_K8S_PORT:-16443}
ETCD_PORT=$((PORT + 1)) ETCD_PEER_PORT=$((PORT + 2)) KCM_PORT=$((PORT + 3)) SCHED_PORT=$((PORT + 4))
SERVICE_CIDR=10.96.0.0/16 SERVICE_IP=10.96.0.1
NODES=("node-a1 zone-a" "node-a2 zone-a" "node-b1 zone-b")
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# --- build ----------------------------------------------------------------------------------------

# module:package pairs; each binary is named after its package's last element.
TARGETS=(
    "kubernetes:k8s.io/kubernetes/cmd/kube-apiserver"
    "kubernetes:k8s.io/kubernetes/cmd/kube-controller-manager"
    "kubernetes:k8s.io/kubernetes/cmd/kube-scheduler"
    "kubernetes:k8s.io/kubernetes/cmd/kubectl"
    "etcd:."
    "kwok:sigs.k8s.io/kwok/cmd/kwok"
    "helm:helm.sh/helm/v3/cmd/helm"
)

# kwok's default stages (what kwokctl gives its controller): nodes initialised and kept alive by
# leases, pods made Ready, Jobs' pods Succeeded, deleted pods removed. Copied from the pinned module.
STAGES=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)

binary_name() { local pkg=${1#*:}; [ "$pkg" = . ] && echo "${1%%:*}" || echo "${pkg##*/}"; }

missing_binaries() {
    local target
    for target in "${TARGETS[@]}"; do
        [ -x "$BIN/$(binary_name "$target")" ] || echo "$target"
    done
    [ -f "$BIN/kwok-stages.yaml" ] || echo "kwok:stages"
}

build() {
    local todo
    mapfile -t todo < <(missing_binaries)
    [ ${#todo[@]} -eq 0 ] && return 0
    command -v go >/dev/null 2>&1 || die "Go is missing: install the Go toolchain (go1.26 or newer) to build the control plane, or put its binaries in $BIN"
    # The Go caches live beside the binaries, so the whole build is one directory to keep or remove.
    export GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build GOFLAGS="-trimpath -buildvcs=false" CGO_ENABLED=0
    mkdir -p "$BIN"
    local target module pkg name started=$SECONDS
    for target in "${todo[@]}"; do
        module=${target%%:*} pkg=${target#*:} name=$(binary_name "$target")
        if [ "$pkg" = stages ]; then
            kwok_stages || die "copying kwok's stages from its module failed"
            continue
        fi
        say "building $name ($module, $VERSIONS)"
        # go.mod and go.sum are committed and read-only here: every module is pinned by its hash.
        (cd "$MODULES/$module" && nice -n 10 go build -ldflags="-s -w $(version_flags "$module")" -o "$BIN/$name.tmp" "$pkg") \
            || die "building $name failed (see the output above)"
        mv "$BIN/$name.tmp" "$BIN/$name"
    done
    say "built ${#todo[@]} binaries in $((SECONDS - started))s into $BIN"
    # The build cache (about 5 GB) only speeds up a rebuild of a new version set; the module cache
    # (about 2 GB) is kept, so that rebuild downloads only what changed.
    [ -n "${RAGDOWN_K8S_KEEP_BUILD_CACHE:-}" ] || rm -rf "$CACHE/go/build"
}

# The version a release build stamps in (Kubernetes' hack/lib/version.sh does the same): without it the
# API server reports v0.0.0-master, which charts' kubeVersion constraints refuse.
version_flags() {
    local pkg minor=${K8S_VERSION#v1.}
    minor=${minor%%.*}
    case "$1" in
    kubernetes)
        for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
            printf ' -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean' \
                "$pkg" "$K8S_VERSION" "$pkg" "$pkg" "$minor" "$pkg"
        done
        ;;
    helm)
        # And the Kubernetes version `helm template` and `helm lint` assume offline (.Capabilities),
        # as helm's Makefile derives it from its client-go: v0.Y.Z is Kubernetes 1.Y.
        minor=$(required helm k8s.io/client-go)
        minor=${minor#v0.}
        minor=${minor%%.*}
        printf ' -X helm.sh/helm/v3/internal/version.version=%s' "$HELM_VERSION"
        for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
            printf ' -X %s.k8sVersionMajor=1 -X %s.k8sVersionMinor=%s' "$pkg" "$pkg" "$minor"
        done
        ;;
    esac
}

kwok_stages() {
    local dir stage
    dir=$(cd "$MODULES/kwok" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) || return 1
    for stage in "${STAGES[@]}"; do
        echo "---"
        cat "$dir/kustomize/stage/$stage"
    done >"$BIN/kwok-stages.yaml.tmp"
    mv "$BIN/kwok-stages.yaml.tmp" "$BIN/kwok-stages.yaml"
}

# --- up -------------------------------------------------------------------------------------------

need() { command -v "$1" >/dev/null 2>&1 || die "$1 is missing: $2"; }

running() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

kubectl_() { "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

answers() { [ -f "$STATE/admin.kubeconfig" ] && kubectl_ get --raw /readyz >/dev/null 2>&1; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

certificates() {
    local pki=$STATE/pki
    mkdir -p "$pki" && chmod 700 "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=ragdown-dev-ca" \
        -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
    # The API server's serving certificate: loopback and the in-cluster names of the kubernetes Service.
    local names="DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    names="$names,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$SERVICE_IP"
    sign apiserver "/CN=kube-apiserver" "subjectAltName=$names
extendedKeyUsage=serverAuth"
    # Client certificates, one identity per component as a real cluster has them.
    sign admin "/O=system:masters/CN=ragdown-dev-admin" "extendedKeyUsage=clientAuth"
    sign controller-manager "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
    sign scheduler "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth"
    # kwok plays every kubelet: it writes node and pod status for nodes it does not authenticate as.
    sign kwok "/O=system:masters/CN=kwok" "extendedKeyUsage=clientAuth"
    # The front-proxy identity (a CA of its own, as kubeadm makes it), so aggregated-API authentication
    # is configured as on a real cluster and the components find its CA where they look.
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=ragdown-dev-front-proxy-ca" \
        -keyout "$pki/front-proxy-ca.key" -out "$pki/front-proxy-ca.crt" 2>/dev/null
    sign front-proxy-client "/CN=front-proxy-client" "extendedKeyUsage=clientAuth" front-proxy-ca
    # ServiceAccount tokens are signed with this key and checked with its public half.
    openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

sign() { # name subject extensions [ca]
    local pki=$STATE/pki ca=${4:-ca}
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
    printf '%s\n' "$3" >"$pki/$1.ext"
    openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$ca.crt" -CAkey "$pki/$ca.key" -CAcreateserial -days 30 \
        -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
}

kubeconfig() { # name (its certificate) -> $STATE/<name>.kubeconfig
    local pki=$STATE/pki
    cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ragdown-dev
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: $pki/ca.crt
users:
- name: $1
  user:
    client-certificate: $pki/$1.crt
    client-key: $pki/$1.key
contexts:
- name: ragdown-dev
  context: {cluster: ragdown-dev, user: $1}
current-context: ragdown-dev
EOF
}

start() { # name args... : run in the background, logging to $STATE/<name>.log
    local name=$1
    shift
    # Its own session: a Ctrl-C meant for the shell or the test run that called `up` does not reach it.
    setsid "$BIN/$name" "$@" </dev/null >"$STATE/$name.log" 2>&1 &
    echo $! >"$STATE/$name.pid"
}

wait_for() { # seconds what command...
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || { down_quietly; die "$what did not happen in time; logs were in $STATE"; }
        sleep 1
    done
}

down_quietly() { # keep the logs of a failed start for the message above
    local name
    for name in "${COMPONENTS[@]}"; do stop "$name"; done
    for name in "${COMPONENTS[@]}"; do [ -f "$STATE/$name.log" ] && tail -5 "$STATE/$name.log" | sed "s/^/$name: /" >&2; done
}

nodes() {
    local entry name zone
    for entry in "${NODES[@]}"; do
        read -r name zone <<<"$entry"
        cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: $name
    topology.kubernetes.io/region: dev
    topology.kubernetes.io/zone: $zone
    type: kwok
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110", ephemeral-storage: 100Gi}
  capacity: {cpu: "8", memory: 32Gi, pods: "110", ephemeral-storage: 100Gi}
  nodeInfo: {architecture: amd64, operatingSystem: linux, kubeletVersion: $K8S_VERSION-kwok}
EOF
    done
    # A default class, so claims that name none are admitted as on a real cluster. Nothing provisions
    # it: tests create the PersistentVolumes they bind (no CSI driver here).
    cat <<EOF
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOF
}

up() {
    need openssl "install openssl (apt-get install openssl): it makes the cluster's certificates"
    if answers && running kube-apiserver; then
        say "already up ($STATE)"
        return 0
    fi
    command -v go >/dev/null 2>&1 || [ -z "$(missing_binaries)" ] \
        || die "Go is missing: install the Go toolchain (go1.26 or newer) to build the control plane"
    build
    # A state directory left by a crash or a reboot: stop what still runs from it and start clean.
    [ -d "$STATE" ] && down
    local port
    for port in "$PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$KCM_PORT" "$SCHED_PORT"; do
        port_free "$port" || die "port $port on 127.0.0.1 is taken: set RAGDOWN_K8S_PORT to a free range (default 16443)"
    done
    mkdir -p "$STATE" && chmod 700 "$STATE"
    echo "$VERSIONS" >"$STATE/versions"
    certificates
    local pki=$STATE/pki name
    for name in admin controller-manager scheduler kwok; do kubeconfig "$name"; done

    start etcd --name ragdown-dev --data-dir "$STATE/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "ragdown-dev=http://127.0.0.1:$ETCD_PEER_PORT" \
        --unsafe-no-fsync
    # No admission flags beyond NodeRestriction: the defaults are what a real cluster runs.
    start kube-apiserver --bind-address 127.0.0.1 --secure-port "$PORT" --advertise-address 127.0.0.1 \
        --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" \
        --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --service-cluster-ip-range "$SERVICE_CIDR" --endpoint-reconciler-type none \
        --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
        --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
        --requestheader-extra-headers-prefix X-Remote-Extra- \
        --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
        ${RAGDOWN_K8S_APISERVER_ARGS:-}
    wait_for 120 "the API server answering /readyz" answers

    start kube-controller-manager --kubeconfig "$STATE/controller-manager.kubeconfig" \
        --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
        --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
        --controllers '*' --use-service-account-credentials \
        --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
        --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
        --service-cluster-ip-range "$SERVICE_CIDR"
    start kube-scheduler --kubeconfig "$STATE/scheduler.kubeconfig" \
        --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
        --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false
    # kwok manages only the nodes annotated as its own, and serves nothing (no --server-address).
    start kwok --config "$BIN/kwok-stages.yaml" --kubeconfig "$STATE/kwok.kubeconfig" --manage-all-nodes=false \
        --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
        --node-ip 127.0.0.1 --node-lease-duration-seconds 40

    nodes | kubectl_ apply -f - >/dev/null
    wait_for 120 "three Ready nodes" kubectl_ wait --for condition=Ready node --all --timeout 5s
    # Pods need the namespace's default ServiceAccount, which the controller-manager creates.
    wait_for 120 "the default ServiceAccount" kubectl_ get serviceaccount default
    say "up: Kubernetes $K8S_VERSION at https://127.0.0.1:$PORT, 3 nodes in 2 zones; set -a; eval \"\$($0 env)\"; set +a"
}

# --- down, env ------------------------------------------------------------------------------------

stop() {
    local pidfile=$STATE/$1.pid pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    # Only a process of this cluster (its command line names the state directory): after a reboot
    # the pid may be another program's.
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$STATE/"; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

down() {
    local i
    # In reverse order of start: kwok and the controllers before the API server, etcd last.
    for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop "${COMPONENTS[$i]}"; done
    case "$STATE" in /|"$HOME"|"") die "refusing to remove RAGDOWN_K8S_STATE=$STATE" ;; esac
    rm -rf "$STATE"
}

env_() {
    [ -f "$STATE/admin.kubeconfig" ] || die "not up: run $0 up first"
    # NAME=value lines (shell-quoted), for `set -a; eval "$(deploy/dev-cluster.sh env)"; set +a`
    # or a script that reads them.
    printf 'KUBECONFIG=%q\nKUBECTL=%q\nHELM=%q\n' "$STATE/admin.kubeconfig" "$BIN/kubectl" "$BIN/helm"
}

case "${1:-}" in
build) build ;;
up) up ;;
down) down && say "down" ;;
env) env_ ;;
status) if answers; then say "up ($(cat "$STATE/versions"))"; else say "not up"; exit 1; fi ;;
versions) echo "$VERSIONS" ;;
built) [ -z "$(missing_binaries)" ] || { say "not built: run $0 build (once per machine; needs Go)"; exit 1; } ;;
*) die "usage: $0 build|up|down|env|status (docs/cluster.md#a-real-control-plane)" ;;
esac
