#!/usr/bin/env bash
# Entry point of the VoltDB node image: one VoltDB server process started the way LocalCluster starts each node
# (org.apiary.database.LocalCluster: `voltdb initialize` once on the node's root, then `voltdb probe`), with this
# project's classpath, so the server has Apiary's runtime (FunctionProcedure, the provenance connector) and Jackson.
#
# Environment:
#   HOSTCOUNT            nodes in the cluster (default 3)
#   SITESPERHOST         partitions per node (default 2)
#   KFACTOR              replicas of each partition beyond the first (default 1)
#   MESH                 the node every node meshes with, host[:internal port] (default voltdb0; LocalCluster uses node 0)
#   SNAPSHOT_INTERVAL_S  seconds between automatic snapshots (default 60, DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL_SECONDS)
#   PROVENANCE_SINK_URL  a JDBC URL to capture provenance into (default: none); with it
#   PROVENANCE_SINK_USER, PROVENANCE_SINK_PASSWORD, PROVENANCE_FLUSH_MS (10), PROVENANCE_DURABLE (false),
#   PROVENANCE_READS (true)
# The first start writes /data/deployment.xml and initializes /data/node; later starts reuse them (VoltDB then
# restores the newest complete snapshot), so HOSTCOUNT, SITESPERHOST, KFACTOR and the interval are fixed by the first.
set -euo pipefail
source /opt/apiary/voltdb-jvm-flags.sh
HOSTCOUNT="${HOSTCOUNT:-3}"
SITESPERHOST="${SITESPERHOST:-2}"
KFACTOR="${KFACTOR:-1}"
MESH="${MESH:-voltdb0}"
SNAPSHOT_INTERVAL_S="${SNAPSHOT_INTERVAL_S:-60}"
root=/data/node
deployment=/data/deployment.xml

xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' <<<"$1"; }
property() { [ -n "$2" ] && echo "          <property name=\"$1\">$(xml "$2")</property>"; return 0; }

# The same document org.apiary.database.Deployments.cluster writes (automatic snapshots: Snapshots.deploymentElement).
write_deployment() {
  {
    echo '<?xml version="1.0"?>'
    echo '<deployment>'
    echo "  <cluster hostcount=\"$HOSTCOUNT\" sitesperhost=\"$SITESPERHOST\" kfactor=\"$KFACTOR\" schema=\"ddl\"/>"
    echo '  <httpd enabled="false"/>'
    echo "  <snapshot prefix=\"apiary\" frequency=\"${SNAPSHOT_INTERVAL_S}s\" retain=\"2\" enabled=\"true\"/>"
    if [ -n "${PROVENANCE_SINK_URL:-}" ]; then
      echo '  <export>'
      echo '    <configuration target="apiary_provenance" enabled="true" type="custom" exportconnectorclass="org.apiary.runtime.provenance.ProvenanceExporter">'
      property sink.url "$PROVENANCE_SINK_URL"
      property sink.user "${PROVENANCE_SINK_USER:-}"
      property sink.password "${PROVENANCE_SINK_PASSWORD:-}"
      property flush.ms "${PROVENANCE_FLUSH_MS:-10}"
      property spill.dir /data/provenance-spill
      property durable "${PROVENANCE_DURABLE:-false}"
      property reads "${PROVENANCE_READS:-true}"
      echo '    </configuration>'
      echo '  </export>'
      echo '  <systemsettings>'
      echo '    <flushinterval minimum="100">'
      echo '      <export interval="100"/>'
      echo '    </flushinterval>'
      echo '  </systemsettings>'
    fi
    echo '</deployment>'
  } > "$deployment"
}

voltdb() {
  java "${voltdb_jvm_flags[@]}" ${VOLTDB_JAVA_OPTS:--Xmx1g} -cp '/opt/apiary/first/*:/opt/apiary/lib/*' org.voltdb.VoltDB "$@"
}

if [ ! -e "$root/voltdbroot/.initialized" ]; then
  write_deployment
  mkdir -p "$root"
  voltdb initialize voltdbroot "$root" deployment "$deployment" force
fi
# Unlike LocalCluster (loopback only), the client and internal ports listen on the container's interfaces; no
# httpport is given (given one, VoltDB serves HTTP on every interface despite <httpd enabled="false"/>).
exec java "${voltdb_jvm_flags[@]}" ${VOLTDB_JAVA_OPTS:--Xmx1g} -cp '/opt/apiary/first/*:/opt/apiary/lib/*' org.voltdb.VoltDB \
  probe voltdbroot "$root" mesh "$MESH" hostcount "$HOSTCOUNT" \
  port 21212 adminport 21211 internalport 3021 zkport 127.0.0.1:7181 replicationport 5555
