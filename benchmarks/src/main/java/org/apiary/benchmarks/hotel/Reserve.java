package org.apiary.benchmarks.hotel;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/**
 * Reserves rooms at the hotel (partition key) for a user and a stay, if the user exists and the hotel has room on
 * those days; returns the reservation ID, or -1 when the hotel is full.
 */
public class Reserve extends LocalFunction<Long> {
  static final Statement USER = Statement.of("SELECT user_id, username FROM hotel_users WHERE user_id = ?");
  static final Statement CAPACITY = Statement.of("SELECT hotel_id, capacity FROM hotel_profiles WHERE hotel_id = ?");
  static final Statement BOOKED = Statement.of("SELECT COUNT(*) AS reservations, SUM(rooms) AS rooms "
      + "FROM hotel_reservations WHERE hotel_id = ? AND in_date < ? AND out_date > ?");
  static final Statement PLAN = Statement.of(
      "SELECT hotel_id, plan_code, price_cents FROM hotel_rates WHERE hotel_id = ? AND plan_code = ?");
  static final Statement INSERT = Statement.of("INSERT INTO hotel_reservations (hotel_id, reservation_id, user_id, "
      + "in_date, out_date, rooms, price_cents) VALUES (?, ?, ?, ?, ?, ?, ?)");

  /** A reservation request. */
  public record Reservation(long userId, long inDate, long outDate, long rooms, String planCode) {}

  @Override
  protected void run() {
    Reservation req = retrieveInput(SOURCE, Reservation.class);
    queueSQL(USER, req.userId());
    queueSQL(CAPACITY, partitionKey());
    queueSQL(BOOKED, partitionKey(), req.outDate(), req.inDate());
    queueSQL(PLAN, partitionKey(), req.planCode());
    List<QueryResult> r = executeSQL();
    if (r.get(0).isEmpty()) {
      throw new IllegalArgumentException("no user " + req.userId());
    }
    Row hotel = r.get(1).firstRow().orElseThrow(() -> new IllegalArgumentException("no hotel " + partitionKey()));
    Row plan = r.get(3).firstRow().orElseThrow(() -> new IllegalArgumentException("no rate plan " + req.planCode()));
    Row booked = r.get(2).rows().get(0);
    long taken = booked.isNull("rooms") ? 0 : booked.getLong("rooms");
    if (taken + req.rooms() > hotel.getLong("capacity")) {
      returnOutput(-1L);
      return;
    }
    long id = uniqueId();
    queueSQL(INSERT, partitionKey(), id, req.userId(), req.inDate(), req.outDate(), req.rooms(),
        plan.getLong("price_cents") * req.rooms() * (req.outDate() - req.inDate()));
    // left queued: runs when run() returns, in the transaction's last batch
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), id, "hotel_users", "USER_ID", r.get(0));
      ManualLog.reads(functionName(), id, "hotel_profiles", "HOTEL_ID", r.get(1));
      ManualLog.reads(functionName(), id, "hotel_rates", "PLAN_CODE", r.get(3));
      ManualLog.event(functionName(), id, "insert", "hotel_reservations", List.of(partitionKey(), id), req);
    }
    returnOutput(id);
  }
}
