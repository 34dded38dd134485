package org.apiary.frontend;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Token buckets for refused calls, one per key and one per remote address: a refusal is recorded (an audit row and
 * a log line) only while both its buckets have a token; past them it is only counted, and the counts are summarized
 * in one log line per interval. Memory is bounded: at most {@code maxTracked} buckets of each kind, and refusals of
 * keys or addresses beyond that are counted, not recorded.
 */
final class RefusalLimiter {
  /**
   * What was refused since the last summary.
   *
   * @param refused calls refused by an access policy
   * @param recorded of those, recorded one by one
   * @param unauthenticated calls refused for want of a valid API key (never recorded one by one)
   * @param unrecordedByKey refusals counted but not recorded, by key identity
   * @param unrecordedByAddress the same by remote address
   */
  record Summary(long refused, long recorded, long unauthenticated, Map<String, Long> unrecordedByKey,
                 Map<String, Long> unrecordedByAddress) {
    boolean isEmpty() {
      return refused == 0 && unauthenticated == 0;
    }
  }

  /** Beyond this many keys or addresses in a summary, the rest are added up under one entry. */
  static final int MAX_NAMED = 10;
  private static final String OTHERS = "(others)";

  private final int burst;
  private final double tokensPerNano;
  private final int maxTracked;
  private final Map<String, Bucket> keys = new HashMap<>();
  private final Map<String, Bucket> addresses = new HashMap<>();
  private long refused;
  private long recorded;
  private long unauthenticated;
  private final Map<String, Long> unrecordedByKey = new HashMap<>();
  private final Map<String, Long> unrecordedByAddress = new HashMap<>();

  RefusalLimiter(int burst, double perSecond, int maxTracked) {
    this.burst = burst;
    this.tokensPerNano = perSecond / 1e9;
    this.maxTracked = maxTracked;
  }

  private final class Bucket {
    double tokens = burst;
    long at;

    Bucket(long now) {
      at = now;
    }

    double refill(long now) {
      tokens = Math.min(burst, tokens + (now - at) * tokensPerNano);
      at = now;
      return tokens;
    }
  }

  /** Counts a refusal for {@code key} from {@code address}; whether it may be recorded one by one. */
  synchronized boolean admit(String key, String address, long nanoTime) {
    refused++;
    Bucket k = bucket(keys, key, nanoTime);
    Bucket a = bucket(addresses, address, nanoTime);
    if (k != null && a != null && k.refill(nanoTime) >= 1 && a.refill(nanoTime) >= 1) {
      k.tokens--;
      a.tokens--;
      recorded++;
      return true;
    }
    count(unrecordedByKey, key);
    count(unrecordedByAddress, address);
    return false;
  }

  /** Counts a call refused for want of a valid key. */
  synchronized void unauthenticated() {
    unauthenticated++;
  }

  /** The counts since the last call, which start again from zero; buckets that refilled are forgotten. */
  synchronized Summary drain(long nanoTime) {
    Summary s = new Summary(refused, recorded, unauthenticated, named(unrecordedByKey), named(unrecordedByAddress));
    refused = 0;
    recorded = 0;
    unauthenticated = 0;
    unrecordedByKey.clear();
    unrecordedByAddress.clear();
    keys.values().removeIf(b -> b.refill(nanoTime) >= burst);
    addresses.values().removeIf(b -> b.refill(nanoTime) >= burst);
    return s;
  }

  private Bucket bucket(Map<String, Bucket> buckets, String name, long now) {
    Bucket b = buckets.get(name);
    if (b == null && buckets.size() < maxTracked) {
      b = new Bucket(now);
      buckets.put(name, b);
    }
    return b;
  }

  private void count(Map<String, Long> counts, String name) {
    counts.merge(counts.size() < maxTracked || counts.containsKey(name) ? name : OTHERS, 1L, Long::sum);
  }

  /** The {@link #MAX_NAMED} largest counts by name, the rest added up. */
  private static Map<String, Long> named(Map<String, Long> counts) {
    Map<String, Long> out = new TreeMap<>();
    counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).forEach(e ->
        out.merge(out.size() < MAX_NAMED || out.containsKey(e.getKey()) ? e.getKey() : OTHERS, e.getValue(),
            Long::sum));
    return out;
  }
}
