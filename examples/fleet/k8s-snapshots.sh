#!/usr/bin/env bash
# One wheeldoctor snapshot per node (k8s-daemonset.yaml), collected and compared.
#
#   examples/fleet/k8s-snapshots.sh [OUT_DIR [DEADLINE]]     (defaults: snapshots, 10m)
#   REFERENCE=golden.json examples/fleet/k8s-snapshots.sh    every node against a reference snapshot
#
# It ends by itself: when every node's pod is ready, or at DEADLINE, whichever comes first.
# Every node whose snapshot arrived is kept as OUT_DIR/snap-NODE.json; every pod without one
# (not scheduled, image not pulled, snapshot failed) is named on stderr; the DaemonSet is
# deleted; then `wheeldoctor diff` compares what arrived. Exit: diff's (0 agree, 1 differ,
# 2 unreadable), or 1 where a node is missing and the others agree.
set -euo pipefail
out=${1:-snapshots}
deadline=${2:-10m}
here=$(dirname "$0")
mkdir -p "$out"
rm -f "$out"/snap-*.json  # a node that gives none this run must not pass with the last run's

kubectl apply -f "$here/k8s-daemonset.yaml"
kubectl rollout status daemonset/wheeldoctor-snapshot --timeout="$deadline" \
  || echo "not every node's snapshot arrived within $deadline" >&2

lost=0
pods=$(kubectl get pods -l app=wheeldoctor-snapshot \
  -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}')
while read -r pod node; do
  [ -n "$pod" ] || continue
  # Node names are DNS names; anything else is not used in a file name.
  if [[ ! "$node" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]; then
    echo "lost: $pod: not scheduled on a node" >&2
    lost=$((lost + 1))
    continue
  fi
  code=$(kubectl get pod "$pod" -o jsonpath='{.status.initContainerStatuses[0].state.terminated.exitCode}')
  if [ "$code" = 0 ]; then
    kubectl logs "$pod" -c snapshot > "$out/snap-$node.json"
  else
    echo "lost: $node ($pod): no snapshot; see kubectl describe pod $pod" >&2
    lost=$((lost + 1))
  fi
done <<< "$pods"
kubectl delete daemonset/wheeldoctor-snapshot --wait=false

status=0
snaps=("$out"/snap-*.json)
[ -e "${snaps[0]}" ] || snaps=()
if [ -n "${REFERENCE:-}" ]; then
  wheeldoctor diff --reference "$REFERENCE" "${snaps[@]}" || status=$?
elif [ "${#snaps[@]}" -ge 2 ]; then
  wheeldoctor diff "${snaps[@]}" || status=$?
else
  echo "${#snaps[@]} snapshot(s): nothing to compare them with (REFERENCE=golden.json compares with one)" >&2
fi
if [ "$status" -eq 0 ] && [ "$lost" -gt 0 ]; then
  status=1
fi
exit "$status"
