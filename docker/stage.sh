#!/usr/bin/env bash
# Stages this project's built artifacts for the images: every jar of apiary-cli's runtime classpath (Apiary's
# modules, VoltDB, Jackson, JeroMQ, picocli, the DuckDB/PostgreSQL/Vertica JDBC drivers) into docker/build/lib.
# Run from anywhere; needs Maven and a JDK 17. Not run here: this machine has no Docker engine (see README.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lib="$root/docker/build/lib"
rm -rf "$root/docker/build"
mkdir -p "$lib"
cd "$root"
# package builds apiary-core, -provenance, -compiler, -frontend and -cli (not the drills); copy-dependencies then
# copies, for each of them, its runtime dependencies (the sibling modules' jars among them) into one directory.
mvn -B -q -DskipTests -pl apiary-cli -am package dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$lib"
cp apiary-cli/target/apiary-cli-*.jar "$lib/"
rm -f "$lib"/*-tests.jar
# apiary-core replaces one JeroMQ class (zmq.Signaler, see its Javadoc), so it must precede JeroMQ on the class path,
# which a directory wildcard does not order: it goes in a directory of its own, listed first.
mkdir -p "$root/docker/build/first"
mv "$lib"/apiary-core-*.jar "$root/docker/build/first/"
cp "$root/scripts/voltdb-jvm-flags.sh" "$root/docker/build/"
echo "staged $(ls "$lib" | wc -l) jars in $lib"
