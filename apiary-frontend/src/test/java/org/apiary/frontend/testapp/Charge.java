package org.apiary.frontend.testapp;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apiary.ApiaryFunction;
import org.apiary.ExternalFunction;

/**
 * Charges a payment stub over HTTP: arguments [stub URL, account k, amount]; POSTs the amount with the step's
 * idempotency key, sends the amount on to {@code bump} under key k and the stub's receipt to the sink. Plain
 * HTTP/1.1 over a socket, so that it needs nothing of the JVM's URL handlers (which VoltDB replaces in a JVM that
 * embeds it; see the http opens in {@code LocalCluster.VOLTDB_JVM_FLAGS}).
 */
public class Charge extends ExternalFunction {
  @Override
  protected void run() throws Exception {
    List<JsonNode> args = retrieveInputs(ApiaryFunction.SOURCE, JsonNode.class);
    URI url = URI.create(args.get(0).asText());
    long account = args.get(1).asLong();
    long amount = args.get(2).asLong();
    byte[] body = (account + ":" + amount).getBytes(StandardCharsets.UTF_8);
    String status;
    String answer;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(url.getHost(), url.getPort()), 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(("POST " + url.getPath() + " HTTP/1.1\r\nHost: " + url.getHost() + "\r\nIdempotency-Key: "
          + idempotencyKey() + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.UTF_8));
      out.write(body);
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      String response = all.toString(StandardCharsets.UTF_8);
      status = response.substring(0, response.indexOf("\r\n"));
      answer = response.substring(response.indexOf("\r\n\r\n") + 4);
    }
    if (!status.contains(" 200 ")) {
      throw new IllegalStateException("the payment service answered " + status + ": " + answer);
    }
    returnOutput(amount, ApiaryFunction.SOURCE, account);
    returnOutput(answer, "receipt");
  }
}
