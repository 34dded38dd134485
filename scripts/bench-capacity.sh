#!/usr/bin/env bash
# The capacity check (issue 12): a VoltDB server, N frontends and the load generator as separate processes on this
# machine, each one's CPU per request read from /proc over the measured window (org.apiary.benchmarks.CapacityCheck).
#   scripts/bench-capacity.sh [--variant apiary-no-eo|apiary-no-prov|raw-voltdb] [--frontends N] [--rate R]
#                             [--seconds S] [--warmup S] [--sites-per-host S] [--frontend-args "ARGS"]
# apiary-no-eo: nothing recorded, no invocation log; apiary-no-prov: exactly-once (Algorithm 1 and the log);
# raw-voltdb: the load generator calls the procedure itself. The cluster captures no provenance.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
variant=apiary-no-eo frontends=1 rate=3000 seconds=20 warmup=10 sites=2 frontend_args=
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) variant=$2; shift 2 ;;
    --frontends) frontends=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --sites-per-host) sites=$2; shift 2 ;;
    --frontend-args) frontend_args=$2; shift 2 ;;
    *) echo "bench-capacity: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$variant" in
  apiary-no-eo) recording=NONE log=--no-invocation-log ;;
  apiary-no-prov) recording=SELECTIVE log= ;;
  raw-voltdb) recording=NONE log= ;;
  *) echo "bench-capacity: --variant is apiary-no-eo, apiary-no-prov or raw-voltdb, not $variant" >&2; exit 2 ;;
esac
(cd "$root" && mvn -q -B -DskipTests install) >&2
source "$root/scripts/voltdb-jvm-flags.sh" # VoltDB's client needs them on Java 17 too
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
dir=$(mktemp -d /tmp/apiary-capacity-XXXXXX)
frontend_pids=()
cleanup() {
  for p in "${frontend_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${frontend_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  java "${voltdb_jvm_flags[@]}" -cp "$cp" org.apiary.cli.Main cluster stop --data "$dir/cluster" > /dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
java "${voltdb_jvm_flags[@]}" -Xmx512m -cp "$cp" org.apiary.cli.Main cluster start --nodes 1 --kfactor 0 --sites-per-host "$sites" \
  --snapshot-interval-s 3600 --data "$dir/cluster" > "$dir/cluster.out"
database=$(awk '$1 == "--database" {print $2; exit}' "$dir/cluster.out")
db_pid=$(awk '$1 == "node" && $3 == "pid" {sub(",", "", $4); print $4; exit}' "$dir/cluster.out")
java "${voltdb_jvm_flags[@]}" -Xmx1g -cp "$cp" org.apiary.benchmarks.CapacityCheck setup --database "$database" --recording "$recording"
processes="database=$db_pid"
endpoints=
if [ "$variant" != raw-voltdb ]; then
  for i in $(seq 1 "$frontends"); do
    java "${voltdb_jvm_flags[@]}" -Xmx1g -cp "$cp" org.apiary.cli.Main frontend --database "$database" --port 0 --no-credentials $log $frontend_args \
      > "$dir/frontend-$i.log" 2>&1 &
    frontend_pids+=($!)
    processes="$processes,frontend$i=$!"
  done
  for i in $(seq 1 "$frontends"); do
    for _ in $(seq 1 120); do grep -q "listening on" "$dir/frontend-$i.log" && break; sleep 0.5; done
    endpoint=$(awk '/listening on/ {print $NF; exit}' "$dir/frontend-$i.log")
    [ -n "$endpoint" ] || { echo "bench-capacity: frontend $i did not start:" >&2; cat "$dir/frontend-$i.log" >&2; exit 1; }
    endpoints="${endpoints:+$endpoints,}$endpoint"
  done
  target=(--frontends "$endpoints")
else
  target=(--direct "$database")
fi
echo "bench-capacity: $variant, $frontends frontend(s), VoltDB with $sites sites, offered $rate/s, $(nproc) cores"
java "${voltdb_jvm_flags[@]}" -Xmx1g -cp "$cp" org.apiary.benchmarks.CapacityCheck load "${target[@]}" --rate "$rate" \
  --seconds "$seconds" --warmup "$warmup" --process "$processes"
