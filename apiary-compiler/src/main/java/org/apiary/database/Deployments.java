package org.apiary.database;

/** VoltDB deployment files Apiary writes. */
final class Deployments {
  private Deployments() {}

  static String singleNode(int sitesPerHost) {
    return cluster(1, sitesPerHost, 0);
  }

  static String cluster(int hostCount, int sitesPerHost, int kfactor) {
    return """
        <?xml version="1.0"?>
        <deployment>
          <cluster hostcount="%d" sitesperhost="%d" kfactor="%d" schema="ddl"/>
          <httpd enabled="false"/>
        </deployment>
        """.formatted(hostCount, sitesPerHost, kfactor);
  }
}
