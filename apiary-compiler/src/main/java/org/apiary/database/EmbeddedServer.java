package org.apiary.database;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.voltdb.ServerThread;
import org.voltdb.VoltDB;

/** A VoltDB server running inside this JVM, listening on loopback only. */
final class EmbeddedServer implements AutoCloseable {
  // VoltDB keeps its server in a process-wide singleton, so one process can run only one embedded server at a time.
  // VoltDB cannot start again in a process where it once stopped, so the first start is also the last.
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private final ServerThread thread;
  private final Path root;
  private final boolean deleteRoot;
  private final int clientPort;

  private EmbeddedServer(ServerThread thread, Path root, boolean deleteRoot, int clientPort) {
    this.thread = thread;
    this.root = root;
    this.deleteRoot = deleteRoot;
    this.clientPort = clientPort;
  }

  static EmbeddedServer start(DatabaseConfig config) {
    if (!STARTED.compareAndSet(false, true)) {
      throw new DatabaseException("an embedded VoltDB was already started in this process, and VoltDB runs at most "
          + "once per process: share that ApiaryDatabase, or connect with DatabaseConfig.external(...)");
    }
    try {
      boolean temporary = config.dataDirectory() == null;
      Path root = temporary ? Files.createTempDirectory("apiary-voltdb-") : config.dataDirectory().toAbsolutePath();
      Files.createDirectories(root);
      Path deployment = root.resolve("apiary-deployment.xml");
      Files.writeString(deployment, Deployments.singleNode(config.partitions(), config.provenance(),
          root.resolve("provenance-spill")));

      int clientPort = config.clientPort() == 0 ? freePort() : config.clientPort();
      VoltDB.Configuration vc = new VoltDB.Configuration();
      vc.m_voltdbRoot = new File(root.toString());
      vc.m_pathToDeployment = deployment.toString();
      vc.m_forceVoltdbCreate = true;
      vc.m_port = clientPort;
      vc.m_clientInterface = "127.0.0.1";
      vc.m_adminPort = freePort();
      vc.m_adminInterface = "127.0.0.1";
      vc.m_internalPort = freePort();
      vc.m_internalInterface = "127.0.0.1";
      vc.m_zkInterface = "127.0.0.1:" + freePort();
      vc.m_httpPort = 0;
      vc.m_pathToLicense = root.resolve("license.xml").toString();
      vc.m_leader = "127.0.0.1";
      vc.m_coordinators = new java.util.TreeSet<>(java.util.List.of("127.0.0.1:" + vc.m_internalPort));

      ServerThread thread = new ServerThread(vc);
      thread.setName("apiary-embedded-voltdb");
      thread.setDaemon(true);
      thread.start();
      // The server thread returns once VoltDB is up, so only the port says whether it is serving.
      awaitListening(clientPort, config.connectTimeout(), "the embedded VoltDB", () -> true);
      return new EmbeddedServer(thread, root, temporary, clientPort);
    } catch (IOException | RuntimeException e) {
      throw new DatabaseException("could not start the embedded VoltDB: " + e.getMessage(), e);
    }
  }

  int clientPort() {
    return clientPort;
  }

  Path root() {
    return root;
  }

  @Override
  public void close() {
    try {
      thread.shutdown();
      thread.join(30_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while stopping the embedded VoltDB", e);
    } finally {
      if (deleteRoot) {
        deleteTree(root);
      }
    }
  }

  /**
   * Waits until something accepts connections on a loopback port.
   *
   * @param what names the server in error messages
   * @param alive false once the server is known dead, to stop waiting early
   */
  static void awaitListening(int port, java.time.Duration timeout, String what, java.util.function.BooleanSupplier alive) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (!alive.getAsBoolean()) {
        throw new DatabaseException(what + " exited while starting");
      }
      try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
        return;
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          throw new DatabaseException(what + " did not accept clients on port " + port + " within " + timeout);
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DatabaseException("interrupted while waiting for " + what, e);
      }
    }
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free TCP port on loopback", e);
    }
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + root, e);
    }
  }
}
