package org.apiary.console;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.http.HttpEndpoint;

/**
 * A running console: the JSON API of {@link ConsoleApi} and its meters ({@code /metrics}, {@code /health},
 * {@code /ready}; {@link ConsoleMetrics}) on an {@link HttpEndpoint}, its queries on a bounded pool of
 * its own ({@link ConsoleConfig#queryThreads()} threads, {@link #QUERY_QUEUE} queued, beyond that {@code 503}), each
 * request's queries bounded by {@link ConsoleConfig#queryTimeout()}. Closing it stops both; the database is the
 * caller's to close.
 */
public final class ConsoleServer implements AutoCloseable {
  private static final Logger LOG = System.getLogger(ConsoleServer.class.getName());

  /** Queries queued for the pool before a request is refused with {@code 503}. */
  public static final int QUERY_QUEUE = 32;

  private final HttpEndpoint endpoint;
  private final ThreadPoolExecutor queries;
  private final ConsoleMetrics metrics;

  private ConsoleServer(HttpEndpoint endpoint, ThreadPoolExecutor queries, ConsoleMetrics metrics) {
    this.endpoint = endpoint;
    this.queries = queries;
    this.metrics = metrics;
  }

  /**
   * Starts serving {@code db}'s executions, graphs and cluster.
   *
   * @throws IOException if the address cannot be bound
   */
  public static ConsoleServer start(ApiaryDatabase db, ConsoleConfig config) throws IOException {
    return start(db, config, ConsoleApi.SQL_TIMEOUT);
  }

  /** As {@link #start(ApiaryDatabase, ConsoleConfig)}, the SQL page's queries stopped after {@code sqlTimeout}. */
  static ConsoleServer start(ApiaryDatabase db, ConsoleConfig config, java.time.Duration sqlTimeout)
      throws IOException {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor queries = new ThreadPoolExecutor(config.queryThreads(), config.queryThreads(), 30,
        TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUERY_QUEUE), r -> {
          Thread t = new Thread(r, "console-query-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    queries.allowCoreThreadTimeOut(true);
    ConsoleMetrics metrics = new ConsoleMetrics(config);
    ConsoleApi api = new ConsoleApi(db, config, queries, sqlTimeout, metrics);
    try {
      HttpEndpoint endpoint = HttpEndpoint.start(config.bind(), config.port(), api::handle, "console",
          config.queryThreads() + 2);
      return new ConsoleServer(endpoint, queries, metrics);
    } catch (IOException | RuntimeException e) {
      queries.shutdownNow();
      metrics.close();
      throw e;
    }
  }

  /** {@code http://host:port}. */
  public String url() {
    return endpoint.url();
  }

  @Override
  public void close() {
    endpoint.close();
    queries.shutdownNow();
    try {
      if (!queries.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.log(Level.WARNING, "console " + url() + ": its query threads did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      metrics.close();
    }
  }
}
