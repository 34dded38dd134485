#!/usr/bin/env bash
# The soak (issue 14): Shop's mix with every guarantee on (variant apiary: exactly-once and provenance) held at one
# offered load for a long time, with a short retention so cleanup deletes while it loads. Prints, every --progress
# seconds, what the interval achieved, heap after the last GC and resident memory; at the end heap after a full GC
# and resident memory before and after the held window. A benchmark profile, not a CI test.
#   scripts/bench-soak.sh [--rate R] [--minutes M] [--retention SECONDS] [--progress SECONDS] [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rate=2000 minutes=10 retention=120 progress=30 out="bench-results/soak"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --retention) retention="$2"; shift 2 ;;
    --progress) progress="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "bench-soak.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
exec "$root/scripts/bench.sh" shop --variants apiary --hold "$rate" --seconds $((minutes * 60)) --warmup 30 \
  --progress "$progress" --retention "$retention" --out "$out"
