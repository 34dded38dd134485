package org.apiary.benchmarks.rpc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.LocalCluster;

/**
 * Starts a workload's RPC-servers baseline: one {@link RpcService} process per service, on loopback ports, each
 * logging to a file in a temporary directory.
 */
public final class RpcServers implements AutoCloseable {
  private final List<Process> processes = new ArrayList<>();
  private final int frontendPort;

  private RpcServers(int frontendPort) {
    this.frontendPort = frontendPort;
  }

  /** Starts every service of {@code workload} against the database at {@code database} and waits until all listen. */
  public static RpcServers start(Workload workload, String database) throws IOException, InterruptedException {
    Path logs = Files.createTempDirectory("apiary-rpc-" + workload.name() + "-");
    // All the services' ports at once: picked one by one, two services could get the same port.
    int[] free = LocalCluster.freePorts(workload.rpcServices().size());
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (ServiceDefinition s : workload.rpcServices()) {
      ports.put(s.name(), free[ports.size()]);
    }
    RpcServers servers = new RpcServers(ports.get(ServiceDefinition.FRONTEND));
    try {
      List<CompletableFuture<Void>> ready = new ArrayList<>();
      for (String service : ports.keySet()) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
        cmd.addAll(List.of("-Xmx512m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
            RpcService.class.getName(), "--workload", workload.name(), "--service", service,
            "--port", String.valueOf(ports.get(service)), "--database", database));
        ports.forEach((name, port) -> {
          if (!name.equals(service)) {
            cmd.addAll(List.of("--peer", name + "=" + port));
          }
        });
        Path log = logs.resolve(service + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        servers.processes.add(p);
        ready.add(awaitReady(service, p, log));
      }
      CompletableFuture.allOf(ready.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
    } catch (Exception e) {
      servers.close();
      throw new IOException("the RPC services did not start: " + e.getMessage(), e);
    }
    return servers;
  }

  /** Completes when the service's log says READY; fails if the service exits first. */
  private static CompletableFuture<Void> awaitReady(String service, Process p, Path log) {
    return CompletableFuture.runAsync(() -> {
      try {
        while (true) {
          if (Files.exists(log) && Files.readString(log).contains("READY " + service)) {
            return;
          }
          if (!p.isAlive()) {
            throw new IllegalStateException("service " + service + " exited: " + Files.readString(log));
          }
          Thread.sleep(50);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    });
  }

  /** The frontend service's address, for an {@link org.apiary.client.ApiaryClient}. */
  public String endpoint() {
    return "tcp://127.0.0.1:" + frontendPort;
  }

  @Override
  public void close() {
    processes.forEach(Process::destroy);
    for (Process p : processes) {
      try {
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
  }
}
