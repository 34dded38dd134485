package org.apiary.benchmarks.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.Output;
import org.apiary.benchmarks.workload.Workloads;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.voltdb.client.ClientResponse;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;
import org.voltdb.client.ProcCallException;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * One long-running microservice server of the RPC-servers baseline, as its own process: a JeroMQ ROUTER socket in
 * front of a pool of worker threads (the classic ZeroMQ multithreaded server), each running service methods
 * synchronously, the way thread-per-request RPC servers do. Every query is a separate database round trip; calls to
 * other services go over TCP to their processes. The {@code frontend} service speaks Apiary's client protocol, so
 * the load generator drives both systems with the same client.
 */
@Command(name = "rpc-service", mixinStandardHelpOptions = true, description = "One service of the RPC-servers baseline.")
public final class RpcService implements Callable<Integer> {
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  @Option(names = "--workload", required = true)
  String workload;

  @Option(names = "--service", required = true)
  String service;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--database", required = true, description = "VoltDB client address host:port.")
  String database;

  @Option(names = "--peer", description = "Another service as name=port (repeatable).")
  Map<String, Integer> peers = new HashMap<>();

  @Option(names = "--threads", defaultValue = "64", description = "Worker threads (default ${DEFAULT-VALUE}).")
  int threads;

  @Override
  public Integer call() throws Exception {
    ServiceDefinition definition = Workloads.byName(workload).rpcServices().stream()
        .filter(s -> s.name().equals(service)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("workload " + workload + " has no service " + service));
    Client db = ApiaryDatabase.connect(List.of(database), Duration.ofSeconds(30), CALL_TIMEOUT);
    try (ZContext zmq = new ZContext()) {
      ZMQ.Socket front = zmq.createSocket(SocketType.ROUTER);
      front.setLinger(0);
      front.bind("tcp://127.0.0.1:" + port);
      ZMQ.Socket back = zmq.createSocket(SocketType.DEALER);
      back.setLinger(0);
      back.bind("inproc://workers");
      for (int i = 0; i < threads; i++) {
        Thread t = new Thread(new Worker(zmq, definition, db), service + "-worker-" + i);
        t.setDaemon(true);
        t.start();
      }
      System.out.println("READY " + service);
      System.out.flush();
      ZMQ.proxy(front, back, null);
    } finally {
      db.close();
    }
    return 0;
  }

  /** A worker: takes requests from the pool's socket, runs them, answers; holds its own sockets to peers. */
  private final class Worker implements Runnable, ServiceContext {
    private final ZContext zmq;
    private final ServiceDefinition definition;
    private final Client db;
    private final Map<String, ZMQ.Socket> peerSockets = new HashMap<>();
    private long nextCall;

    Worker(ZContext zmq, ServiceDefinition definition, Client db) {
      this.zmq = zmq;
      this.definition = definition;
      this.db = db;
    }

    @Override
    public void run() {
      ZMQ.Socket socket = zmq.createSocket(SocketType.DEALER);
      socket.setLinger(0);
      socket.connect("inproc://workers");
      while (!Thread.currentThread().isInterrupted()) {
        ZMsg msg = ZMsg.recvMsg(socket);
        if (msg == null) {
          return;
        }
        byte[] payload = msg.removeLast().getData();
        msg.add(service.equals(ServiceDefinition.FRONTEND) ? client(payload) : internal(payload));
        msg.send(socket);
      }
    }

    /** A client's request, in Apiary's wire protocol: the method is the operation, the key its first argument. */
    private byte[] client(byte[] payload) {
      WireRequest request;
      try {
        request = Json.read(payload, WireRequest.class, "request");
      } catch (RuntimeException e) {
        return Json.bytes(WireReply.error(null, WireReply.INVALID_REQUEST, e.getMessage()));
      }
      List<JsonNode> args = new ArrayList<>();
      args.add(request.key());
      args.addAll(request.args());
      try {
        Object value = method(request.graph()).handle(this, args);
        return Json.bytes(WireReply.ok(request.id(), List.of(new Output("sink", null, Json.tree(value)))));
      } catch (Exception e) {
        return Json.bytes(WireReply.functionFailed(request.id(), request.graph(), e.getClass().getSimpleName(),
            String.valueOf(e.getMessage())));
      }
    }

    private byte[] internal(byte[] payload) {
      ObjectNode reply = Json.MAPPER.createObjectNode();
      try {
        JsonNode request = Json.parse(payload);
        reply.put("call", request.path("call").asLong());
        List<JsonNode> args = new ArrayList<>();
        request.path("args").forEach(args::add);
        reply.set("value", Json.tree(method(request.path("method").asText()).handle(this, args)));
      } catch (Exception e) {
        reply.put("error", service + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
      }
      return Json.bytes(reply);
    }

    private ServiceDefinition.Method method(String name) {
      ServiceDefinition.Method m = definition.methods().get(name);
      if (m == null) {
        throw new IllegalArgumentException("service " + service + " has no method " + name);
      }
      return m;
    }

    @Override
    public VoltTable query(String procedure, Object... params) {
      try {
        return db.callProcedure(procedure, params).getResults()[0];
      } catch (ProcCallException e) {
        throw new IllegalStateException(procedure + ": " + e.getClientResponse().getStatusString(), e);
      } catch (java.io.IOException e) {
        throw new IllegalStateException(procedure + ": " + e.getMessage(), e);
      }
    }

    @Override
    public List<VoltTable> queryAll(List<Object[]> calls) {
      List<CompletableFuture<VoltTable>> futures = new ArrayList<>();
      for (Object[] c : calls) {
        CompletableFuture<VoltTable> f = new CompletableFuture<>();
        Object[] params = java.util.Arrays.copyOfRange(c, 1, c.length);
        try {
          boolean queued = db.callProcedure(r -> {
            if (r.getStatus() == ClientResponse.SUCCESS) {
              f.complete(r.getResults()[0]);
            } else {
              f.completeExceptionally(new IllegalStateException(c[0] + ": " + r.getStatusString()));
            }
          }, (String) c[0], params);
          if (!queued) {
            f.completeExceptionally(new IllegalStateException(c[0] + ": not queued"));
          }
        } catch (java.io.IOException e) {
          f.completeExceptionally(e);
        }
        futures.add(f);
      }
      List<VoltTable> results = new ArrayList<>();
      for (CompletableFuture<VoltTable> f : futures) {
        try {
          results.add(f.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        } catch (Exception e) {
          throw new IllegalStateException("query failed: " + e.getMessage(), e);
        }
      }
      return results;
    }

    @Override
    public JsonNode call(String peer, String method, Object... args) {
      ZMQ.Socket socket = peerSockets.computeIfAbsent(peer, p -> {
        Integer peerPort = peers.get(p);
        if (peerPort == null) {
          throw new IllegalArgumentException(service + " knows no service " + p);
        }
        ZMQ.Socket s = zmq.createSocket(SocketType.DEALER);
        s.setLinger(0);
        s.setReceiveTimeOut((int) CALL_TIMEOUT.toMillis());
        s.connect("tcp://127.0.0.1:" + peerPort);
        return s;
      });
      long id = nextCall++;
      ObjectNode request = Json.MAPPER.createObjectNode();
      request.put("call", id);
      request.put("method", method);
      request.set("args", Json.tree(args));
      socket.send(Json.bytes(request));
      while (true) {
        byte[] answer = socket.recv();
        if (answer == null) {
          throw new IllegalStateException(peer + "." + method + " did not answer within " + CALL_TIMEOUT);
        }
        JsonNode reply = Json.parse(answer);
        if (reply.path("call").asLong() != id) {
          continue; // the late answer to an earlier call that timed out
        }
        if (reply.has("error")) {
          throw new IllegalStateException(reply.get("error").asText());
        }
        return reply.get("value");
      }
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new RpcService()).execute(args));
  }
}
