package org.apiary.benchmarks.hotel;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/**
 * Search, step 1 (the geo service): checks the user, finds the hotels in a box around the point and keeps the five
 * nearest within 10 km; sends the stay to {@code offer} on each hotel's partition.
 */
public class Nearby extends LocalFunction<Long> {
  static final Statement USER = Statement.of("SELECT user_id, username FROM hotel_users WHERE user_id = ?");
  static final Statement BOX = Statement.of("SELECT hotel_id, lat, lon FROM hotel_geo "
      + "WHERE lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? ORDER BY hotel_id");

  /** What a search asks for: where, and the stay. */
  public record Search(double lat, double lon, long inDate, long outDate) {}

  @Override
  protected void run() {
    Search s = retrieveInput(SOURCE, Search.class);
    double[] box = Geo.box(s.lat(), s.lon(), Geo.SEARCH_RADIUS_KM);
    queueSQL(USER, partitionKey());
    queueSQL(BOX, box[0], box[1], box[2], box[3]);
    List<QueryResult> r = executeSQL();
    if (r.get(0).isEmpty()) {
      throw new IllegalArgumentException("no user " + partitionKey());
    }
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "hotel_users", "USER_ID", r.get(0));
      ManualLog.reads(functionName(), uniqueId(), "hotel_geo", "HOTEL_ID", r.get(1));
    }
    record Candidate(long hotel, double km) {}
    List<Candidate> near = new ArrayList<>();
    for (Row row : r.get(1)) {
      double km = Geo.distanceKm(s.lat(), s.lon(), row.getDouble("lat"), row.getDouble("lon"));
      if (km <= Geo.SEARCH_RADIUS_KM) {
        near.add(new Candidate(row.getLong("hotel_id"), km));
      }
    }
    near.sort(Comparator.comparingDouble(Candidate::km).thenComparingLong(Candidate::hotel));
    for (Candidate c : near.subList(0, Math.min(Geo.NEAREST, near.size()))) {
      returnOutput(s, "stay", c.hotel());
    }
  }
}
