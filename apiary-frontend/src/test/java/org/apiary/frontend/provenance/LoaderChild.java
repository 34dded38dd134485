package org.apiary.frontend.provenance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Properties;
import org.apiary.provenance.loader.LoaderServer;

/**
 * A provenance loader in a process of its own, for tests that kill it: {@code LoaderChild SINK_URL PORT [SECRET]} prints
 * {@code listening PORT} once it serves, and stops when its standard input closes (the test ends it, or died).
 */
public final class LoaderChild {
  private LoaderChild() {}

  public static void main(String[] args) throws Exception {
    try (LoaderServer server = LoaderServer.start(LoaderServer.Settings.of(args[0], new Properties(),
        new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1]))).withSecret(args.length > 2 ? args[2] : null))) {
      System.out.println("listening " + server.port());
      System.out.flush();
      try {
        while (System.in.read() >= 0) {
          // runs until the parent closes our input
        }
      } catch (IOException e) {
        System.err.println("loader child: reading standard input failed: " + e.getMessage());
      }
    }
  }
}
