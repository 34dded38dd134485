package org.apiary.provenance.loader;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.BufferUnderflowException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.apiary.DatabaseException;
import org.apiary.provenance.BatchSink;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceTable;

/**
 * A database server's connection to a provenance loader ({@link LoaderServer}): a {@link BatchSink} whose loads
 * return once the loader answers that it committed them into its database. Its spooler thus keeps its guarantees
 * with the loader in between: rows leave its memory and spill files only once they are in the database, a loader or
 * link that fails fails the load (the spooler keeps the rows, spills, and retries, skipping rows already loaded),
 * and a slow loader slows the loads.
 *
 * <p>Every wait is bounded by the timeout: connecting, and each answer (a load's answer comes after the loader's
 * transaction, so the timeout must exceed its longest load). Failures are {@link SQLException}s of SQL state
 * {@code 08006} (connection failure), or the loader's own (with the database's SQL state).
 *
 * <p>Not thread-safe, like every {@link BatchSink}.
 */
public final class LoaderClient implements BatchSink {
  /** The default timeout: twice a sink's own, since a load's answer waits for the loader's load. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
  private static final String CONNECTION_FAILURE = "08006";

  private final String address;
  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private final String loaderSink;
  private boolean broken;

  private LoaderClient(String address, Socket socket, DataInputStream in, OutputStream out, String loaderSink) {
    this.address = address;
    this.socket = socket;
    this.in = in;
    this.out = out;
    this.loaderSink = loaderSink;
  }

  /**
   * Connects to the loader at {@code address} ({@code host:port}) and introduces this client.
   *
   * @param identity who this client loads for, the same across its reconnections (for a database server: its host
   *     and spill directory): the loader finishes a client's earlier connection's load before it takes the next
   *     connection's, so a load resent after a lost answer never runs beside its first attempt
   * @param secret the loader's shared secret ({@code apiary loader --secret-file}), or {@code null} for a loader
   *     that has none
   * @throws SQLException if the loader cannot be reached or refuses the client
   */
  public static LoaderClient connect(String address, String identity, String secret, Duration timeout)
      throws SQLException {
    Objects.requireNonNull(identity, "identity");
    InetSocketAddress target = LoaderProtocol.parseAddress(address);
    int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.setKeepAlive(true);
      socket.connect(new InetSocketAddress(target.getHostString(), target.getPort()), millis);
      socket.setSoTimeout(millis);
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
      OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
      LoaderProtocol.hello(identity, secret).writeTo(out);
      LoaderProtocol.Frame answer = LoaderProtocol.readFrame(in, LoaderProtocol.MAX_FRAME_BYTES,
          LoaderProtocol.ByteBudget.NONE,
          LoaderProtocol.ReadTimer.SOCKET_TIMEOUT);
      if (answer == null) {
        throw new IOException("the loader closed the connection");
      }
      if (answer.type() == LoaderProtocol.ERROR) {
        throw errorOf(answer, "the loader at " + address + " refused this client");
      }
      if (answer.type() != LoaderProtocol.WELCOME) {
        throw new IOException("the loader answered with a frame of type " + (answer.type() & 0xFF));
      }
      return new LoaderClient(address, socket, in, out, LoaderProtocol.readString(answer.body()));
    } catch (IOException | LoaderProtocol.MalformedFrameException | BufferUnderflowException e) {
      closeAfter(socket, e);
      throw failure("cannot connect to the provenance loader at " + address, e);
    } catch (SQLException | RuntimeException e) {
      closeAfter(socket, e);
      throw e;
    }
  }

  /**
   * A factory for {@link org.apiary.provenance.ProvenanceSpooler#start}: each call connects anew, and a failure
   * to connect is thrown as a {@link DatabaseException} (the spooler backs off and calls it again).
   *
   * @throws IllegalArgumentException if the address is not {@code host:port}
   */
  public static Supplier<LoaderClient> opener(String address, String identity, String secret, Duration timeout) {
    LoaderProtocol.parseAddress(address);
    return () -> {
      try {
        return connect(address, identity, secret, timeout);
      } catch (SQLException e) {
        throw new DatabaseException(e.getMessage(), e);
      }
    };
  }

  /** {@code apiary-loader://host:port}, and the sink the loader loads into. */
  @Override
  public String url() {
    return "apiary-loader://" + address + " (into " + loaderSink + ")";
  }

  /** Nothing to do here: each load carries its table's definition, and the loader ensures the table. */
  @Override
  public void ensureTable(ProvenanceTable table) {}

  @Override
  public int loadBatch(ProvenanceTable table, List<ProvenanceRow> rows, boolean fresh) throws SQLException {
    if (broken) {
      throw new SQLException("the connection to the provenance loader at " + address + " failed earlier",
          CONNECTION_FAILURE);
    }
    int added = 0;
    int from = 0;
    try {
      while (from < rows.size()) {
        LoaderProtocol.FrameWriter frame = LoaderProtocol.load(table, fresh);
        int countAt = frame.length() - 4;
        int to = from;
        while (to < rows.size() && frame.length() < LoaderProtocol.TARGET_FRAME_BYTES) {
          int before = frame.length();
          LoaderProtocol.putRow(frame, rows.get(to));
          if (frame.length() > LoaderProtocol.MAX_FRAME_BYTES) {
            if (to == from) {
              throw new SQLException("a row of provenance table " + table.name() + " takes more than "
                  + LoaderProtocol.MAX_FRAME_BYTES + " bytes, more than the loader takes in a frame", "22001");
            }
            frame.truncate(before);
            break;
          }
          to++;
        }
        frame.putInt(countAt, to - from);
        frame.writeTo(out);
        LoaderProtocol.Frame answer = LoaderProtocol.readFrame(in, LoaderProtocol.MAX_FRAME_BYTES,
            LoaderProtocol.ByteBudget.NONE,
          LoaderProtocol.ReadTimer.SOCKET_TIMEOUT);
        if (answer == null) {
          throw new IOException("the loader closed the connection before answering");
        }
        if (answer.type() == LoaderProtocol.ERROR) {
          boolean fatal = answer.body().get(0) != 0;
          SQLException error = errorOf(answer, "the provenance loader at " + address + " did not load "
              + (to - from) + " rows of " + table.name());
          if (fatal) {
            broken = true;
          }
          throw error;
        }
        if (answer.type() != LoaderProtocol.ACK || answer.body().remaining() != 4) {
          throw new IOException("the loader answered a load with a frame of type " + (answer.type() & 0xFF));
        }
        int count = answer.body().getInt();
        added = added < 0 || count < 0 ? -1 : added + count;
        from = to;
      }
      return added;
    } catch (IOException | LoaderProtocol.MalformedFrameException | BufferUnderflowException e) {
      broken = true;
      throw failure("cannot load " + rows.size() + " rows of provenance table " + table.name()
          + " through the loader at " + address, e);
    }
  }

  private static SQLException errorOf(LoaderProtocol.Frame frame, String what)
      throws LoaderProtocol.MalformedFrameException {
    java.nio.ByteBuffer body = frame.body();
    body.get(); // whether the loader closes the connection
    String state = LoaderProtocol.readString(body);
    String message = LoaderProtocol.readString(body);
    return new SQLException(what + ": " + message, state.isEmpty() ? null : state);
  }

  private static SQLException failure(String what, Exception e) {
    if (e instanceof SocketTimeoutException) {
      return new SQLTimeoutException(what + ": timed out, the loader did not answer in time", CONNECTION_FAILURE, e);
    }
    return new SQLException(what + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()),
        CONNECTION_FAILURE, e);
  }

  private static void closeAfter(Socket socket, Exception failure) {
    try {
      socket.close();
    } catch (IOException e) {
      failure.addSuppressed(e);
    }
  }

  @Override
  public void close() throws SQLException {
    try {
      socket.close();
    } catch (IOException e) {
      throw new SQLException("closing the connection to the provenance loader at " + address + " failed: "
          + e.getMessage(), CONNECTION_FAILURE, e);
    }
  }

  @Override
  public String toString() {
    return "LoaderClient[" + address + "]";
  }
}
