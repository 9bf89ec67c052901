#!/usr/bin/env bash
# End to end on a local kind cluster, from the repository's own images and charts:
#   1. create a cluster, build Dockerfile.api and Dockerfile.reporter, load both images;
#   2. install charts/verity on its embedded database (no PostgreSQL) and charts/verity-agent;
#   3. apply the CRD samples (crds/samples/) and a sample Deployment in namespace shop-e2e;
#   4. assert a snapshot of prod-k8s appears with the Deployment's image digest, and every
#      Environment, Policy, Action and Deployment is Ready;
#   5. roll the Deployment to another image and assert exactly one new snapshot starts it.
#
# Needs Docker (a running engine), kind, kubectl, helm (or HELM=/path/to/helm), curl, node,
# and network access for the base images. Not part of `npm test`. Run from anywhere:
#   bash test/e2e/kind.sh            # KEEP_CLUSTER=1 keeps the cluster for a look afterwards
set -euo pipefail
cd "$(dirname "$0")/../.."

needs() {
  printf 'kind.sh needs Docker (and kind, kubectl, helm): %s\n' "$1" >&2
  exit 2
}
command -v docker >/dev/null 2>&1 || needs "no docker command on PATH"
timeout 20 docker info >/dev/null 2>&1 || needs "no Docker engine answers 'docker info'"
command -v kind >/dev/null 2>&1 || needs "no kind command on PATH (https://kind.sigs.k8s.io)"
command -v kubectl >/dev/null 2>&1 || needs "no kubectl command on PATH"
HELM="${HELM:-$(command -v helm || ls node_modules/.cache/verity-helm/*/helm 2>/dev/null | head -n1 || true)}"
[ -n "$HELM" ] && [ -x "$HELM" ] || needs "no helm (put it on PATH, set HELM, or run npm run test:charts once)"
command -v curl >/dev/null 2>&1 || needs "no curl command on PATH"
command -v node >/dev/null 2>&1 || needs "no node command on PATH"
[ -f Dockerfile.reporter ] || needs "no Dockerfile.reporter in the repository"

CLUSTER="${KIND_CLUSTER:-verity-e2e}"
NS=verity-system
APP_NS=shop-e2e
ORG=e2e
ENV_NAME=prod-k8s
KEY="e2e-admin-$(node -e 'process.stdout.write(require("node:crypto").randomBytes(16).toString("hex"))')"
PORT="${E2E_API_PORT:-18080}"
API="http://127.0.0.1:${PORT}/api/v2"
IMAGE_A=registry.k8s.io/pause:3.9
IMAGE_B=registry.k8s.io/pause:3.10
PF_PID=""

log() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'kind.sh: FAILED: %s\n' "$*" >&2
  exit 1
}
cleanup() {
  [ -n "$PF_PID" ] && kill "$PF_PID" 2>/dev/null || true
  if [ "${KEEP_CLUSTER:-0}" != 1 ]; then kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

api() { curl -sS --fail-with-body -H "Authorization: Bearer ${KEY}" "$@"; }
# Evaluates a JavaScript expression over the JSON on stdin (bound to `d`) and prints the result.
json() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const d=JSON.parse(s);const r=eval(process.argv[1]);process.stdout.write(typeof r==="string"?r:JSON.stringify(r))})' "$1"; }
# Retries a command until it succeeds or the seconds run out.
eventually() {
  local seconds=$1 what=$2
  shift 2
  local end=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || die "$what (not within ${seconds}s)"
    sleep 3
  done
}
digest_of_app() {
  kubectl -n "$APP_NS" get pods -l app=shop-web --field-selector=status.phase=Running \
    -o jsonpath='{.items[0].status.containerStatuses[0].imageID}' | sed -E 's/.*sha256://'
}
latest_snapshot() { api "${API}/snapshots/${ORG}/${ENV_NAME}/-1"; }
latest_has() { latest_snapshot | json "d.artifacts.some(a => a.fingerprint === '$1' && a.annotation.now > 0) ? 'yes' : process.exit(1)"; }
latest_lacks() { latest_snapshot | json "d.artifacts.some(a => a.fingerprint === '$1' && a.annotation.now > 0) ? process.exit(1) : 'yes'"; }

log "kind cluster ${CLUSTER}"
kind get clusters 2>/dev/null | grep -qx "$CLUSTER" || kind create cluster --name "$CLUSTER" --wait 180s
kubectl config use-context "kind-${CLUSTER}" >/dev/null

log "images"
docker build -f Dockerfile.api -t verity-api:e2e .
docker build -f Dockerfile.reporter -t verity-agent:e2e .
docker pull "$IMAGE_A" >/dev/null
docker pull "$IMAGE_B" >/dev/null
kind load docker-image --name "$CLUSTER" verity-api:e2e verity-agent:e2e "$IMAGE_A" "$IMAGE_B"

log "Verity on its embedded database"
"$HELM" upgrade --install verity charts/verity --namespace "$NS" --create-namespace \
  --set image.repository=verity-api --set image.tag=e2e --set image.pullPolicy=Never \
  --set bootstrap.org="$ORG" --set bootstrap.apiKey="$KEY" --wait --timeout 5m
kubectl -n "$NS" port-forward svc/verity "${PORT}:8080" >/dev/null 2>&1 &
PF_PID=$!
eventually 60 "the API answers /readyz through the port-forward" curl -sf "http://127.0.0.1:${PORT}/readyz"

log "what the samples refer to without declaring: a lambda environment and two flows"
api -X PUT "${API}/environments/${ORG}" -H 'Content-Type: application/json' \
  -d '{"name":"prod-lambda","type":"lambda","description":"e2e"}' >/dev/null
for flow in shop-backend shop-frontend; do
  printf 'version: 1\n' | api -X PUT "${API}/flows/${ORG}/template_file" \
    -F "data_json={\"name\":\"${flow}\",\"description\":\"e2e\"};type=application/json" \
    -F 'template_file=@-;filename=template.yml' >/dev/null
done
kubectl -n "$NS" create secret generic release-hook --from-literal=address=https://hooks.example.com/release \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

log "the agent: reporter (${ENV_NAME}: namespaces ^shop-) and operator"
kubectl -n "$NS" create secret generic verity-agent-token --from-literal=token="$KEY" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
"$HELM" upgrade --install verity-agent charts/verity-agent --namespace "$NS" \
  --set image.repository=verity-agent --set image.tag=e2e --set image.pullPolicy=Never \
  --set api.url="http://verity.${NS}.svc:8080" --set org="$ORG" \
  --set token.existingSecret=verity-agent-token \
  --set "reporter.environments[0].name=${ENV_NAME}" \
  --set "reporter.environments[0].namespacesRegex[0]=^shop-.*" \
  --set reporter.heartbeatSeconds=60 --wait --timeout 5m

log "CRD samples and a sample Deployment"
kubectl apply -f crds/samples/
kubectl create namespace "$APP_NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$APP_NS" create deployment shop-web --image="$IMAGE_A" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$APP_NS" rollout status deploy/shop-web --timeout=180s
DIGEST_A="$(digest_of_app)"
[ -n "$DIGEST_A" ] || die "no image digest on the shop-web pod"

log "a snapshot of ${ENV_NAME} runs sha256:${DIGEST_A}"
eventually 180 "snapshot of ${ENV_NAME} with the Deployment's digest" latest_has "$DIGEST_A"
BEFORE="$(latest_snapshot | json 'String(d.index)')"

log "every resource is Ready"
kubectl -n "$NS" wait --for=condition=Ready environments.verity.dev,policies.verity.dev,actions.verity.dev \
  --all --timeout=180s
for deploy in verity verity-agent-reporter verity-agent-operator; do
  kubectl -n "$NS" rollout status "deploy/${deploy}" --timeout=60s
done

log "roll shop-web to ${IMAGE_B}: one new snapshot starts it"
kubectl -n "$APP_NS" set image deploy/shop-web "pause=${IMAGE_B}"
kubectl -n "$APP_NS" rollout status deploy/shop-web --timeout=180s
eventually 60 "the old pod is gone" test "$(kubectl -n "$APP_NS" get pods -l app=shop-web -o name | wc -l)" -eq 1
DIGEST_B="$(digest_of_app)"
[ -n "$DIGEST_B" ] && [ "$DIGEST_B" != "$DIGEST_A" ] || die "the rolled pod has no new digest"
eventually 180 "a snapshot runs the new digest" latest_has "$DIGEST_B"
eventually 180 "a snapshot no longer runs the old digest" latest_lacks "$DIGEST_A"
AFTER="$(latest_snapshot | json 'String(d.index)')"
STARTS=0
for i in $(seq $((BEFORE + 1)) "$AFTER"); do
  if api "${API}/snapshots/${ORG}/${ENV_NAME}/${i}" |
    json "d.artifacts.some(a => a.fingerprint === '${DIGEST_B}' && a.annotation.type.startsWith('started')) ? 'yes' : process.exit(1)" >/dev/null; then
    STARTS=$((STARTS + 1))
  fi
done
[ "$STARTS" -eq 1 ] || die "expected exactly one new snapshot starting sha256:${DIGEST_B}, saw ${STARTS} (snapshots $((BEFORE + 1))..${AFTER})"

log "passed: snapshots ${BEFORE} -> ${AFTER}, digest ${DIGEST_A:0:12} -> ${DIGEST_B:0:12}"
