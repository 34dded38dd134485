package org.apiary.benchmarks.workload;

import java.util.List;
import org.apiary.benchmarks.counter.CounterWorkload;
import org.apiary.benchmarks.hotel.HotelWorkload;
import org.apiary.benchmarks.retwis.RetwisWorkload;
import org.apiary.benchmarks.shop.ShopWorkload;

/** The workloads, by command-line name. */
public final class Workloads {
  /** Every workload's name, in the order {@code all} runs them. */
  public static final List<String> NAMES = List.of("shop", "hotel", "retwis", "counter");

  private Workloads() {}

  public static Workload byName(String name) {
    return switch (name) {
      case "shop" -> new ShopWorkload();
      case "hotel" -> new HotelWorkload();
      case "retwis" -> new RetwisWorkload();
      case "counter" -> new CounterWorkload();
      default -> throw new IllegalArgumentException("unknown workload '" + name + "'; the workloads are " + NAMES);
    };
  }
}
