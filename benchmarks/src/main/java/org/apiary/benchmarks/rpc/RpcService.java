package org.apiary.benchmarks.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apiary.internal.Output;
import org.apiary.benchmarks.workload.Workloads;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
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
 * front of a pool of worker threads, each running service methods
 * synchronously, the way thread-per-request RPC servers do. Every query is a separate database round trip; calls to
 * other services go over TCP to their processes. Every service speaks Apiary's client protocol (the method name in
 * place of the graph), so the load generator drives both systems with the same client and services call each other
 * with it.
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
      ZMQ.Socket answers = zmq.createSocket(SocketType.PULL);
      answers.bind("inproc://answers");
      ZMQ.Socket answerSender = zmq.createSocket(SocketType.PUSH);
      answerSender.setLinger(0);
      answerSender.connect("inproc://answers");
      Map<String, ApiaryClient> peerClients = new HashMap<>();
      peers.forEach((name, peerPort) -> peerClients.put(name, ApiaryClient.connect(ClientConfig.of(
          "tcp://127.0.0.1:" + peerPort).withAttemptTimeout(CALL_TIMEOUT).withMaxAttempts(1))));
      Context context = new Context(definition, db, peerClients);
      ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
        Thread t = new Thread(r, service + "-worker");
        t.setDaemon(true);
        return t;
      });
      System.out.println("READY " + service);
      System.out.flush();
      ZMQ.Poller poller = zmq.createPoller(2);
      poller.register(front, ZMQ.Poller.POLLIN);
      poller.register(answers, ZMQ.Poller.POLLIN);
      // One thread owns the TCP socket: requests go to the worker pool, answers come back through an inproc pipe.
      while (!Thread.currentThread().isInterrupted() && poller.poll(1000) >= 0) {
        for (ZMsg m = ZMsg.recvMsg(front, false); m != null; m = ZMsg.recvMsg(front, false)) {
          // The client's identity, then one request per frame (an Apiary client batches them)
          byte[] peer = m.pop().getData();
          for (org.zeromq.ZFrame frame = m.pop(); frame != null; frame = m.pop()) {
            ZMsg request = new ZMsg();
            request.add(peer);
            request.add(frame);
            pool.execute(() -> {
              ZMsg answer = context.handle(request);
              synchronized (answerSender) {
                answer.send(answerSender);
              }
            });
          }
        }
        for (ZMsg m = ZMsg.recvMsg(answers, false); m != null; m = ZMsg.recvMsg(answers, false)) {
          m.send(front);
        }
      }
    } finally {
      db.close();
    }
    return 0;
  }

  /** What a service method sees: the database and the other services. Thread-safe. */
  private final class Context implements ServiceContext {
    private final ServiceDefinition definition;
    private final Client db;
    private final Map<String, ApiaryClient> peerClients;

    Context(ServiceDefinition definition, Client db, Map<String, ApiaryClient> peerClients) {
      this.definition = definition;
      this.db = db;
      this.peerClients = peerClients;
    }

    /** Answers one request: the routing frames as they came, then the answer. */
    ZMsg handle(ZMsg msg) {
      byte[] payload = msg.removeLast().getData();
      msg.add(answer(payload));
      return msg;
    }

    /** A request in Apiary's client protocol: the method is the "graph", the first argument the "key". */
    private byte[] answer(byte[] payload) {
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
        ServiceDefinition.Method m = definition.methods().get(request.graph());
        if (m == null) {
          throw new IllegalArgumentException("service " + service + " has no method " + request.graph());
        }
        Object value = m.handle(this, args);
        return Json.bytes(WireReply.ok(request.id(), List.of(new Output("sink", null, Json.tree(value)))));
      } catch (Exception e) {
        return Json.bytes(WireReply.functionFailed(request.id(), service + "." + request.graph(),
            e.getClass().getSimpleName(), String.valueOf(e.getMessage())));
      }
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
      ApiaryClient client = peerClients.get(peer);
      if (client == null) {
        throw new IllegalArgumentException(service + " knows no service " + peer);
      }
      Object key = args.length == 0 ? null : args[0];
      Object[] rest = args.length == 0 ? args : java.util.Arrays.copyOfRange(args, 1, args.length);
      return client.invoke(method, key, rest).values(JsonNode.class).get(0);
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new RpcService()).execute(args));
  }
}
