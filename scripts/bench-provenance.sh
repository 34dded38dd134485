#!/usr/bin/env bash
# Provenance capture benchmark (issue 4): capture off, writes only, reads and writes, manual logging.
#   scripts/bench-provenance.sh [--seconds N] [--warmup N] [--concurrency N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && mvn -q -B -DskipTests install) >&2
source "$root/scripts/voltdb-jvm-flags.sh"
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
exec java "${voltdb_jvm_flags[@]}" -Xmx1g -cp "$cp" org.apiary.benchmarks.provenance.ProvenanceBenchmark "$@"
