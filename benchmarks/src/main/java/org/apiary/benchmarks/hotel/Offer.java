package org.apiary.benchmarks.hotel;

import java.util.ArrayList;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Search, step 2 (rate, reservation and profile services), on the hotel's partition: what it offers for the stay. */
public class Offer extends LocalFunction<Long> {
  static final Statement PROFILE = Statement.of(
      "SELECT hotel_id, name, address, capacity FROM hotel_profiles WHERE hotel_id = ?");
  static final Statement RATES = Statement.of("SELECT hotel_id, plan_code, room_type, price_cents FROM hotel_rates "
      + "WHERE hotel_id = ? AND in_date <= ? AND out_date >= ?");
  static final Statement BOOKED = Statement.of("SELECT COUNT(*) AS reservations, SUM(rooms) AS rooms "
      + "FROM hotel_reservations WHERE hotel_id = ? AND in_date < ? AND out_date > ?");
  static final Statement RATING = Statement.of("SELECT hotel_id, rating FROM hotel_geo WHERE hotel_id = ?");

  /** One rate plan of an offer. */
  public record Rate(String planCode, String roomType, long priceCents) {}

  /** What a hotel offers for a stay. */
  public record HotelOffer(long hotelId, String name, String address, double rating, boolean available,
                           List<Rate> rates) {}

  @Override
  protected void run() {
    Nearby.Search s = retrieveInput("stay", Nearby.Search.class);
    queueSQL(PROFILE, partitionKey());
    queueSQL(RATES, partitionKey(), s.inDate(), s.outDate());
    queueSQL(BOOKED, partitionKey(), s.outDate(), s.inDate());
    queueSQL(RATING, partitionKey());
    List<QueryResult> r = executeSQL();
    Row profile = r.get(0).firstRow().orElseThrow(() -> new IllegalStateException("no hotel " + partitionKey()));
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "hotel_profiles", "HOTEL_ID", r.get(0));
      ManualLog.reads(functionName(), uniqueId(), "hotel_rates", "PLAN_CODE", r.get(1));
      ManualLog.reads(functionName(), uniqueId(), "hotel_geo", "HOTEL_ID", r.get(3));
    }
    List<Rate> rates = new ArrayList<>();
    for (Row row : r.get(1)) {
      rates.add(new Rate(row.getString("plan_code"), row.getString("room_type"), row.getLong("price_cents")));
    }
    Row booked = r.get(2).rows().get(0);
    long rooms = booked.isNull("rooms") ? 0 : booked.getLong("rooms");
    double rating = r.get(3).firstRow().map(x -> x.getDouble("rating")).orElse(0.0);
    returnOutput(new HotelOffer(partitionKey(), profile.getString("name"), profile.getString("address"), rating,
        rooms < profile.getLong("capacity"), rates));
  }
}
