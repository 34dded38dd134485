package com.example.shop;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apiary.ApiaryFunction;
import org.apiary.ExternalFunction;

/**
 * An external step run from the {@code receipts} queue: emails a paid order's receipt through the mail service
 * ({@code /mail} on the payment service's host, in this example), with its idempotency key; returns the receipt.
 */
public class SendReceipt extends ExternalFunction {
  @Override
  protected void run() throws IOException {
    Payment p = retrieveInput(ApiaryFunction.SOURCE, Payment.class);
    HttpURLConnection http = (HttpURLConnection) URI.create(p.service()).resolve("/mail").toURL().openConnection();
    http.setConnectTimeout(2_000);
    http.setReadTimeout(5_000);
    http.setRequestMethod("POST");
    http.setRequestProperty("Idempotency-Key", idempotencyKey());
    http.setDoOutput(true);
    try (OutputStream out = http.getOutputStream()) {
      out.write(("customer " + p.customer() + ": order " + p.order() + " paid, receipt " + p.receipt())
          .getBytes(StandardCharsets.UTF_8));
    }
    try {
      if (http.getResponseCode() != 200) {
        throw new IOException("the mail service answered " + http.getResponseCode());
      }
      returnOutput(p.receipt());
    } finally {
      http.disconnect();
    }
  }
}
