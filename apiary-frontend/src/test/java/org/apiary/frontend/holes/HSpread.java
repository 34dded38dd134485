package org.apiary.frontend.holes;

import org.apiary.GlobalFunction;

/** Sends 1..n along edge "keys", each with itself as the partition key. */
public class HSpread extends GlobalFunction {
  @Override
  protected void run() {
    int n = retrieveInput(SOURCE, Integer.class);
    for (long k = 1; k <= n; k++) {
      returnOutput(k, "keys", k);
    }
  }
}
