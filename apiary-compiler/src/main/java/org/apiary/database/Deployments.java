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

  static String singleNode(int sitesPerHost, ProvenanceConfig provenance, Path spillDefault, Duration snapshotInterval) {
    return cluster(1, sitesPerHost, 0, provenance, spillDefault, snapshotInterval);
  }

  /** A deployment for {@code hostCount} hosts without automatic snapshots; {@code provenance} may be {@code null}. */
  public static String cluster(int hostCount, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                               Path spillDefault) {
    return cluster(hostCount, sitesPerHost, kfactor, provenance, spillDefault, null);
  }

  /**
   * A deployment for {@code hostCount} hosts; {@code provenance} may be {@code null}; with a {@code snapshotInterval}
   * (whole seconds), automatic snapshots at that interval into each server's {@code voltdbroot/snapshots}, the newest
   * {@value Snapshots#RETAINED} kept, which a server started on that root restores ({@code null}: none).
   */
  public static String cluster(int hostCount, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                               Path spillDefault, Duration snapshotInterval) {
    return """
        <?xml version="1.0"?>
        <deployment>
          <cluster hostcount="%d" sitesperhost="%d" kfactor="%d" schema="ddl"/>
          <httpd enabled="false"/>
        %s%s</deployment>
        """.formatted(hostCount, sitesPerHost, kfactor,
            snapshotInterval == null ? "" : Snapshots.deploymentElement(snapshotInterval),
            provenance == null ? "" : export(provenance, spillDefault));
  }

  private static String export(ProvenanceConfig p, Path spillDefault) {
    Path spill = p.spillDirectory() != null ? p.spillDirectory() : spillDefault;
    StringBuilder props = new StringBuilder();
    property(props, "sink.url", p.sinkUrl());
    property(props, "sink.user", p.sinkUser());
    property(props, "sink.password", p.sinkPassword());
    property(props, "flush.ms", String.valueOf(p.flushInterval().toMillis()));
    property(props, "spill.dir", spill.toAbsolutePath().toString());
    property(props, "durable", String.valueOf(p.durable()));
    property(props, "reads", String.valueOf(p.captureReads()));
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

  private static String xml(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
