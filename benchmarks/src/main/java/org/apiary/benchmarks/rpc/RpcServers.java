package org.apiary.benchmarks.rpc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.LocalCluster;

/** Starts a workload's RPC-servers baseline: one {@link RpcService} process per service, on loopback ports. */
public final class RpcServers implements AutoCloseable {
  private final List<Process> processes = new ArrayList<>();
  private final int frontendPort;

  private RpcServers(int frontendPort) {
    this.frontendPort = frontendPort;
  }

  /** Starts every service of {@code workload} against the database at {@code database} and waits until all listen. */
  public static RpcServers start(Workload workload, String database) throws IOException, InterruptedException {
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (ServiceDefinition s : workload.rpcServices()) {
      ports.put(s.name(), freePort());
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
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        servers.processes.add(p);
        ready.add(awaitReady(service, p));
      }
      CompletableFuture.allOf(ready.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
    } catch (Exception e) {
      servers.close();
      throw new IOException("the RPC services did not start: " + e.getMessage(), e);
    }
    return servers;
  }

  /** Completes when the service prints READY; keeps draining its output so it never blocks on a full pipe. */
  private static CompletableFuture<Void> awaitReady(String service, Process p) {
    CompletableFuture<Void> ready = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      StringBuilder early = new StringBuilder();
      try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          if (line.startsWith("READY")) {
            ready.complete(null);
          } else if (!ready.isDone()) {
            early.append(line).append('\n');
          } else {
            System.err.println("[" + service + "] " + line);
          }
        }
      } catch (IOException e) {
        ready.completeExceptionally(e);
      }
      ready.completeExceptionally(new IOException("service " + service + " exited: " + early));
    }, "rpc-" + service + "-output");
    reader.setDaemon(true);
    reader.start();
    return ready;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
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
