package zmq.io.mechanism;

import static zmq.io.Metadata.IDENTITY;
import static zmq.io.Metadata.SOCKET_TYPE;

import org.apiary.internal.wire.WireGuard;
import zmq.Msg;
import zmq.Options;
import zmq.ZError;
import zmq.ZMQ;
import zmq.io.SessionBase;
import zmq.io.coder.v2.V2Decoder;
import zmq.io.net.Address;

/**
 * Apiary's replacement for JeroMQ 0.6.0's NULL security mechanism (the class of the same name in the JeroMQ jar, with
 * the same constructor and the same protocol: READY or ERROR commands, ZAP where a handler is connected), one per
 * connection, made once the peer's greeting is read.
 *
 * <p>It differs from JeroMQ's in one respect: where the connection's socket has a {@link WireGuard} (as its message
 * allocator: the frontend's ROUTER), it tells the guard when the peer's READY has arrived, by the peer's address. The
 * guard closes a connection whose handshake has not come that far within its timeout: JeroMQ 0.6.0 ends its handshake
 * timer once the greeting is read and starts heartbeats only once the handshake is over, so a peer that sent its
 * greeting and then nothing held its connection for as long as it liked.
 *
 * <p>Like {@code zmq.io.coder.v2.V2Decoder}, this class must precede the JeroMQ jar on the class path;
 * {@link WireGuard#install} refuses to guard a socket otherwise.
 */
class NullMechanism extends Mechanism {
  /** {@link WireGuard} looks this field up by name to tell this class from JeroMQ's. */
  public static final boolean APIARY_GUARDED = true;

  private static final String OK = "200";
  private static final String READY = "READY";
  private static final String ERROR = "ERROR";

  private final Address peer;
  private final WireGuard guard;
  private boolean readySent;
  private boolean errorSent;
  private boolean readyReceived;
  private boolean errorReceived;
  private boolean zapConnected;
  private boolean zapRequestSent;
  private boolean zapReplyReceived;

  NullMechanism(SessionBase session, Address peerAddress, Options options) {
    super(session, peerAddress, options);
    this.peer = peerAddress;
    this.guard = options.allocator instanceof WireGuard g ? g : null;
    V2Decoder decoder = V2Decoder.takeMadeOnThisThread();
    if (guard != null && decoder != null && peerAddress != null) {
      guard.receiving(peerAddress.address(), decoder);
    }
    // The NULL mechanism asks ZAP only where a domain is set and a handler is there (no request on naive sockets).
    if (options.zapDomain != null && !options.zapDomain.isEmpty() && session.zapConnect() == 0) {
      zapConnected = true;
    }
  }

  @Override
  public int nextHandshakeCommand(Msg msg) {
    if (readySent || errorSent) {
      return ZError.EAGAIN;
    }
    if (zapConnected && !zapReplyReceived) {
      if (zapRequestSent) {
        return ZError.EAGAIN;
      }
      sendZapRequest(Mechanisms.NULL, false);
      zapRequestSent = true;
      int rc = receiveAndProcessZapReply();
      if (rc != 0) {
        return rc;
      }
      zapReplyReceived = true;
    }
    if (zapReplyReceived && !OK.equals(statusCode)) {
      msg.putShortString(ERROR);
      msg.putShortString(statusCode);
      errorSent = true;
      return 0;
    }
    msg.putShortString(READY);
    addProperty(msg, SOCKET_TYPE, socketType());
    if (options.type == ZMQ.ZMQ_REQ || options.type == ZMQ.ZMQ_DEALER || options.type == ZMQ.ZMQ_ROUTER) {
      addProperty(msg, IDENTITY, options.identity);
    }
    readySent = true;
    return 0;
  }

  @Override
  public int processHandshakeCommand(Msg msg) {
    if (readyReceived || errorReceived) {
      session.getSocket().eventHandshakeFailedProtocol(session.getEndpoint(),
          ZMQ.ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
      return ZError.EPROTO;
    }
    int size = msg.size();
    if (size >= 6 && compare(msg, READY, true)) {
      readyReceived = true;
      int rc = parseMetadata(msg, 6, false);
      if (rc == 0 && guard != null && peer != null) {
        guard.handshaken(peer.address());
      }
      return rc;
    }
    if (size >= 6 && compare(msg, ERROR, true)) {
      errorReceived = true;
      return parseErrorMessage(msg);
    }
    session.getSocket().eventHandshakeFailedProtocol(session.getEndpoint(),
        ZMQ.ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
    return ZError.EPROTO;
  }

  @Override
  public int zapMsgAvailable() {
    if (zapReplyReceived) {
      return ZError.EFSM;
    }
    int rc = receiveAndProcessZapReply();
    if (rc == 0) {
      zapReplyReceived = true;
    }
    return rc;
  }

  @Override
  public Status status() {
    if (readySent && readyReceived) {
      return Status.READY;
    }
    if ((readySent || errorSent) && (readyReceived || errorReceived)) {
      return Status.ERROR;
    }
    return Status.HANDSHAKING;
  }
}
