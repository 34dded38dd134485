package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;

/**
 * VoltDB deployment files Apiary writes. With provenance, the deployment declares the export target
 * {@value ProvenanceConfig#EXPORT_TARGET}, served by Apiary's connector class inside each server, and a short
 * export flush interval; a cluster you deploy yourself needs the same {@code <export>} and {@code <systemsettings>}
 * elements (see {@link #cluster}).
 */
public final class Deployments {
  /** The export connector class each server runs for provenance. */
  public static final String PROVENANCE_CONNECTOR = "org.apiary.runtime.provenance.ProvenanceExporter";

  private Deployments() {}

  static String singleNode(int sitesPerHost, ProvenanceConfig provenance, Path spillDefault, Duration snapshotInterval,
                           DatabaseUsers users) {
    return cluster(1, sitesPerHost, 0, provenance, spillDefault, snapshotInterval, users);
  }

  /** A deployment for {@code hostCount} hosts without automatic snapshots; {@code provenance} may be {@code null}. */
  public static String cluster(int hostCount, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                               Path spillDefault) {
    return cluster(hostCount, sitesPerHost, kfactor, provenance, spillDefault, null, null);
  }

  /**
   * A deployment for {@code hostCount} hosts; {@code provenance} may be {@code null}; with a {@code snapshotInterval}
   * (whole seconds), automatic snapshots at that interval into each server's {@code voltdbroot/snapshots}, the newest
   * {@value Snapshots#RETAINED} kept, which a server started on that root restores ({@code null}: none); with
   * {@code users}, VoltDB's security on and those users ({@code null}: security off, anyone who reaches the client
   * port may do anything).
   */
  public static String cluster(int hostCount, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                               Path spillDefault, Duration snapshotInterval, DatabaseUsers users) {
    return """
        <?xml version="1.0"?>
        <deployment>
          <cluster hostcount="%d" sitesperhost="%d" kfactor="%d" schema="ddl"/>
          <httpd enabled="false"/>
        %s%s%s</deployment>
        """.formatted(hostCount, sitesPerHost, kfactor,
            snapshotInterval == null ? "" : Snapshots.deploymentElement(snapshotInterval),
            provenance == null ? "" : export(provenance, spillDefault),
            users == null ? "" : users.deploymentElements());
  }

  /**
   * A deployment whose server keeps every directory (snapshots, overflow, command log, its configuration) under
   * {@code root}: a server started with VoltDB's legacy {@code create}, as the temporary embedded database is, puts
   * them under {@code voltdbroot/} in the process's working directory unless the deployment says where.
   */
  static String inRoot(String deployment, Path root) {
    String paths = "  <paths>\n    <voltdbroot path=\"" + xml(root.toAbsolutePath().toString())
        + "\"/>\n  </paths>\n";
    int end = deployment.lastIndexOf("</deployment>");
    return deployment.substring(0, end) + paths + deployment.substring(end);
  }

  /**
   * {@code deployment} with VoltDB's heartbeat timeout set to {@code timeout} (whole seconds, at least 1; VoltDB's
   * default is 90): how long a node goes unheard before the others count it failed and partition detection decides
   * which side of a split keeps running. Shorter means faster failover and more false alarms under a stalled link.
   */
  public static String withHeartbeatTimeout(String deployment, Duration timeout) {
    long seconds = timeout.toSeconds();
    if (seconds < 1 || timeout.toMillis() % 1000 != 0) {
      throw new IllegalArgumentException("a heartbeat timeout is whole seconds, at least 1, not " + timeout);
    }
    if (deployment.contains("<heartbeat")) {
      throw new IllegalArgumentException("the deployment already sets a heartbeat timeout");
    }
    int end = deployment.lastIndexOf("</deployment>");
    if (end < 0) {
      throw new IllegalArgumentException("not a deployment (no </deployment>)");
    }
    return deployment.substring(0, end) + "  <heartbeat timeout=\"" + seconds + "\"/>\n" + deployment.substring(end);
  }

  private static String export(ProvenanceConfig p, Path spillDefault) {
    Path spill = p.spillDirectory() != null ? p.spillDirectory() : spillDefault;
    StringBuilder props = new StringBuilder();
    property(props, "sink.url", p.sinkUrl());
    if (p.loaderAddress() == null) {
      property(props, "sink.user", p.sinkUser());
      property(props, "sink.password", p.sinkPassword());
    } else {
      property(props, "loader", p.loaderAddress()); // the loader holds the sink's credentials, the servers need none
      property(props, "loader.secret", p.loaderSecret());
    }
    property(props, "flush.ms", String.valueOf(p.flushInterval().toMillis()));
    property(props, "spill.dir", spill.toAbsolutePath().toString());
    property(props, "durable", String.valueOf(p.durable()));
    property(props, "reads", String.valueOf(p.captureReads()));
    property(props, "disk.reserve.bytes", String.valueOf(p.diskReserveBytes()));
    long exportMs = Math.max(1, p.exportFlushInterval().toMillis());
    return """
          <export>
            <configuration target="%s" enabled="true" type="custom" exportconnectorclass="%s">
        %s    </configuration>
          </export>
          <systemsettings>
            <flushinterval minimum="%d">
              <export interval="%d"/>
            </flushinterval>
          </systemsettings>
        """.formatted(ProvenanceConfig.EXPORT_TARGET, PROVENANCE_CONNECTOR, props, exportMs, exportMs);
  }

  private static void property(StringBuilder b, String name, String value) {
    if (value != null) {
      b.append("          <property name=\"").append(name).append("\">").append(xml(value)).append("</property>\n");
    }
  }

  /**
   * Writes a deployment readable and writable by its owner only (it may hold the sink's password and the database
   * users' passwords).
   */
  static void write(Path file, String deployment) throws java.io.IOException {
    OwnerOnlyFile.write(file, deployment);
  }

  static String xml(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
