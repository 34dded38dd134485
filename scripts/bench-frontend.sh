#!/usr/bin/env bash
# Frontend and exactly-once benchmark (issue 3): graphs through a frontend against direct procedure calls.
#   scripts/bench-frontend.sh [--seconds N] [--warmup N] [--concurrency N] [--rounds N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && mvn -q -B -DskipTests install) >&2
flags=(--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
       --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
       --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.net=ALL-UNNAMED
       --add-opens java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED)
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
exec java "${flags[@]}" -Xmx4g -cp "$cp" org.apiary.benchmarks.frontend.FrontendBenchmark "$@"
