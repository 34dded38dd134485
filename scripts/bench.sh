#!/usr/bin/env bash
# The workload benchmarks (issue 5): Shop, Hotel, Retwis and the counter on every variant and baseline.
#   scripts/bench.sh WORKLOAD [--quick] [--variants a,b] [--rounds N] [--seconds N] [--warmup N] [--bisections N] [--p99-bound-ms N] [--hold RATE] [--timeline] [--out DIR]
# --rounds N runs the variants in turn N times and reports each one's median round (one sweep is noisy).
# WORKLOAD: shop, hotel, retwis, counter or all. Prints a table with the target ratios and writes
# bench-results/WORKLOAD.json and bench-results/WORKLOAD-p50.png / -p99.png (variant logs in bench-results/logs).
# --quick (small data, short load points) is a smoke run that checks everything runs; it says nothing about speed.
# --hold RATE (profiling) holds one load in each variant's process instead of the sweep; --timeline logs slow 100 ms.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: scripts/bench.sh shop|hotel|retwis|counter|all [--quick] [options]  (--help for all options)" >&2
  [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]] && set -- all --help || exit 2
fi
(cd "$root" && mvn -q -B -DskipTests install) >&2
source "$root/scripts/voltdb-jvm-flags.sh"
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
cd "$root"
exec java "${voltdb_jvm_flags[@]}" -Xmx1g -Djava.awt.headless=true -cp "$cp" \
  org.apiary.benchmarks.WorkloadBenchmark "$@"
