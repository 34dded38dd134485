package org.apiary.drills.exactlyonce;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apiary.ExternalFunction;

/**
 * The external step of {@code drill_queued}: posts the item to the drill's stub service with its idempotency key and
 * passes on the stub's answer (the number of this call among the key's calls), so that the last function records
 * which call's answer Apiary kept.
 */
public class QueuedCall extends ExternalFunction {
  /** The header that carries the attempt's number within its execution, for the drill's report. */
  public static final String ATTEMPT_HEADER = "X-Drill-Attempt";

  @Override
  protected void run() throws IOException {
    String arg = retrieveInput(DrillApp.NEXT, String.class);
    int bar = arg.indexOf('|');
    String item = arg.substring(0, bar);
    HttpURLConnection http = (HttpURLConnection) URI.create(arg.substring(bar + 1)).toURL().openConnection();
    http.setConnectTimeout(2_000);
    http.setReadTimeout(8_000);
    http.setRequestMethod("POST");
    http.setRequestProperty("Idempotency-Key", idempotencyKey());
    http.setRequestProperty(ATTEMPT_HEADER, Integer.toString(attempt()));
    http.setDoOutput(true);
    try (OutputStream out = http.getOutputStream()) {
      out.write(item.getBytes(StandardCharsets.UTF_8));
    }
    try {
      if (http.getResponseCode() != 200) {
        throw new IOException("the drill's stub answered " + http.getResponseCode());
      }
      String call = new String(http.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      returnOutput(item + "|" + call, DrillApp.NEXT, DrillApp.keyOf(item));
    } finally {
      http.disconnect();
    }
  }
}
