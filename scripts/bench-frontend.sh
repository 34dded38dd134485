#!/usr/bin/env bash
# Frontend and exactly-once benchmark (issue 3): graphs through a frontend against direct procedure calls.
#   scripts/bench-frontend.sh [--seconds N] [--warmup N] [--concurrency N] [--rounds N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && mvn -q -B -DskipTests install) >&2
source "$root/scripts/voltdb-jvm-flags.sh"
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
exec java "${voltdb_jvm_flags[@]}" -Xmx4g -cp "$cp" org.apiary.benchmarks.frontend.FrontendBenchmark "$@"
