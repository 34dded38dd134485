package org.apiary.drills.netns;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Listens on ADDRESS PORT, accepting and closing every connection, until killed: a host's service for cut tests. */
public final class TcpListen {
  private TcpListen() {}

  public static void main(String[] args) throws IOException {
    try (ServerSocket server = new ServerSocket(Integer.parseInt(args[1]), 50, InetAddress.getByName(args[0]))) {
      System.out.println("listening on " + server.getLocalSocketAddress());
      System.out.flush();
      while (true) {
        try (Socket s = server.accept()) {
          s.getOutputStream().write('k');
        }
      }
    }
  }
}
