package com.example.shop;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apiary.ApiaryFunction;
import org.apiary.ExternalFunction;

/**
 * An external step: takes a payment from the payment service over HTTP, outside the database. Apiary records what
 * it returns before {@link RecordPayment} runs, so a recovered {@code pay} invocation never charges twice once the
 * service answered; a call cut off before that is repeated with the same idempotency key, which the service uses to
 * drop the repeat.
 */
public class Charge extends ExternalFunction {
  @Override
  protected void run() throws IOException {
    Payment p = retrieveInput(ApiaryFunction.SOURCE, Payment.class);
    HttpURLConnection http = (HttpURLConnection) URI.create(p.service()).toURL().openConnection();
    http.setConnectTimeout(2_000);
    http.setReadTimeout(5_000);
    http.setRequestMethod("POST");
    http.setRequestProperty("Idempotency-Key", idempotencyKey());
    http.setDoOutput(true);
    try (OutputStream out = http.getOutputStream()) {
      out.write((p.customer() + " " + p.order() + " " + p.amount()).getBytes(StandardCharsets.UTF_8));
    }
    try {
      if (http.getResponseCode() != 200) {
        throw new IOException("the payment service answered " + http.getResponseCode());
      }
      String receipt = new String(http.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      returnOutput(p.withReceipt(receipt), "paid", p.customer());
    } finally {
      http.disconnect();
    }
  }
}
