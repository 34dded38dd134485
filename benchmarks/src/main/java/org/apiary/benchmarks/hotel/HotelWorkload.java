package org.apiary.benchmarks.hotel;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.benchmarks.rpc.ServiceDefinition;
import org.apiary.benchmarks.workload.DataLoader;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.voltdb.VoltTable;

/**
 * Hotel (after DeathStarBench's hotelReservation; paper Table 1): 80 hotels with rate plans, 501 users. Search 60%
 * (the five nearest hotels within 10 km, then each hotel's profile, rates, availability and rating on its own
 * partition: 6 functions, 22 queries), recommend 39% (1 query), reserve 1% (5 queries).
 */
public final class HotelWorkload implements Workload {
  static final int HOTELS = 80;
  static final int USERS = 501;
  static final double CENTER_LAT = 37.7749;
  static final double CENTER_LON = -122.4194;
  static final List<String> PLANS = List.of("STANDARD", "DELUXE", "SUITE");

  static final String SCHEMA = """
      CREATE TABLE hotel_geo (hotel_id BIGINT NOT NULL, lat FLOAT NOT NULL, lon FLOAT NOT NULL, rating FLOAT NOT NULL,
        price_cents BIGINT NOT NULL, PRIMARY KEY (hotel_id));
      CREATE INDEX hotel_geo_by_lat ON hotel_geo (lat);
      CREATE TABLE hotel_users (user_id BIGINT NOT NULL, username VARCHAR(32) NOT NULL, password VARCHAR(64) NOT NULL,
        PRIMARY KEY (user_id));
      CREATE TABLE hotel_profiles (hotel_id BIGINT NOT NULL, name VARCHAR(64) NOT NULL, address VARCHAR(128) NOT NULL,
        capacity BIGINT NOT NULL, PRIMARY KEY (hotel_id));
      PARTITION TABLE hotel_profiles ON COLUMN hotel_id;
      CREATE TABLE hotel_rates (hotel_id BIGINT NOT NULL, plan_code VARCHAR(16) NOT NULL, room_type VARCHAR(32) NOT NULL,
        in_date BIGINT NOT NULL, out_date BIGINT NOT NULL, price_cents BIGINT NOT NULL, PRIMARY KEY (hotel_id, plan_code));
      PARTITION TABLE hotel_rates ON COLUMN hotel_id;
      CREATE TABLE hotel_reservations (hotel_id BIGINT NOT NULL, reservation_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
        in_date BIGINT NOT NULL, out_date BIGINT NOT NULL, rooms BIGINT NOT NULL, price_cents BIGINT NOT NULL,
        PRIMARY KEY (hotel_id, reservation_id));
      PARTITION TABLE hotel_reservations ON COLUMN hotel_id;
      CREATE INDEX hotel_reservations_by_date ON hotel_reservations (hotel_id, in_date);
      """;

  /** source -> nearby -(one per hotel)-> offer -> sink. */
  public static final Graph SEARCH = Graph.named("search")
      .addLocalFunction("nearby", Nearby.class)
      .addLocalFunction("offer", Offer.class)
      .addEdge(Graph.SOURCE, "nearby", ApiaryFunction.SOURCE)
      .addEdge("nearby", "offer", "stay")
      .addEdge("offer", Graph.SINK, ApiaryFunction.SINK);

  public static final Graph RECOMMEND = Graph.named("recommend").addLocalFunction("recommend", Recommend.class)
      .addEdge(Graph.SOURCE, "recommend", ApiaryFunction.SOURCE, Long.class)
      .addEdge("recommend", Graph.SINK, ApiaryFunction.SINK);

  public static final Graph RESERVE = Graph.named("reserve").addLocalFunction("reserve", Reserve.class)
      .addEdge(Graph.SOURCE, "reserve", ApiaryFunction.SOURCE)
      .addEdge("reserve", Graph.SINK, ApiaryFunction.SINK);

  @Override
  public String name() {
    return "hotel";
  }

  @Override
  public Application application() {
    return Application.of(SCHEMA, SEARCH, RECOMMEND, RESERVE);
  }

  @Override
  public List<String> operations() {
    return List.of("search", "recommend", "reserve");
  }

  @Override
  public List<String> writtenTables() {
    return List.of("hotel_reservations");
  }

  @Override
  public void load(ApiaryDatabase db, Scale scale) throws InterruptedException {
    DataLoader loader = new DataLoader(db);
    SplittableRandom random = new SplittableRandom(3);
    for (long h = 0; h < HOTELS; h++) {
      double lat = CENTER_LAT + (random.nextDouble() - 0.5) * 0.2;
      double lon = CENTER_LON + (random.nextDouble() - 0.5) * 0.2;
      long price = 8_000 + random.nextInt(30_000);
      loader.insert("hotel_geo", h, lat, lon, 1 + random.nextDouble() * 4, price);
      loader.insert("hotel_profiles", h, "Hotel " + h, h + " Market Street, San Francisco", 50L + random.nextInt(150));
      for (int p = 0; p < PLANS.size(); p++) {
        loader.insert("hotel_rates", h, PLANS.get(p), "room type " + p, 0L, 365L, price * (p + 1));
      }
    }
    for (long u = 0; u < USERS; u++) {
      loader.insert("hotel_users", u, "Cornell_" + u, "password_" + u);
    }
    loader.finish();
  }

  @Override
  public Request next(RandomGenerator random) {
    int op = random.nextInt(100);
    long user = random.nextInt(USERS);
    long in = random.nextInt(360);
    long out = in + 1 + random.nextInt(4);
    if (op < 60) {
      return new Request(0, "search", user, new Nearby.Search(CENTER_LAT + (random.nextDouble() - 0.5) * 0.1,
          CENTER_LON + (random.nextDouble() - 0.5) * 0.1, in, out));
    }
    if (op < 99) {
      return new Request(1, "recommend", user, 10_000L + random.nextInt(30_000));
    }
    long hotel = random.nextInt(HOTELS);
    return new Request(2, "reserve", hotel,
        new Reserve.Reservation(user, in, out, 1, PLANS.get(random.nextInt(PLANS.size()))));
  }

  @Override
  public List<Double> fixedLoads(Scale scale) {
    return scale == Scale.QUICK ? List.of(100.0) : List.of(200.0, 1_000.0);
  }

  @Override
  public String rpcProcedures() {
    return """
        CREATE PROCEDURE rpc_hotel_user AS SELECT user_id, username FROM hotel_users WHERE user_id = ?;
        CREATE PROCEDURE rpc_hotel_box AS SELECT hotel_id, lat, lon FROM hotel_geo
          WHERE lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? ORDER BY hotel_id;
        CREATE PROCEDURE rpc_hotel_rating AS SELECT hotel_id, rating FROM hotel_geo WHERE hotel_id = ?;
        CREATE PROCEDURE rpc_hotel_recommend AS SELECT hotel_id, rating, price_cents FROM hotel_geo
          WHERE price_cents <= ? ORDER BY rating DESC, hotel_id LIMIT 1;
        CREATE PROCEDURE rpc_hotel_profile PARTITION ON TABLE hotel_profiles COLUMN hotel_id PARAMETER 0
          AS SELECT hotel_id, name, address, capacity FROM hotel_profiles WHERE hotel_id = ?;
        CREATE PROCEDURE rpc_hotel_rates PARTITION ON TABLE hotel_rates COLUMN hotel_id PARAMETER 0
          AS SELECT hotel_id, plan_code, room_type, price_cents FROM hotel_rates
             WHERE hotel_id = ? AND in_date <= ? AND out_date >= ?;
        CREATE PROCEDURE rpc_hotel_plan PARTITION ON TABLE hotel_rates COLUMN hotel_id PARAMETER 0
          AS SELECT hotel_id, plan_code, price_cents FROM hotel_rates WHERE hotel_id = ? AND plan_code = ?;
        CREATE PROCEDURE rpc_hotel_booked PARTITION ON TABLE hotel_reservations COLUMN hotel_id PARAMETER 0
          AS SELECT COUNT(*) AS reservations, SUM(rooms) AS rooms FROM hotel_reservations
             WHERE hotel_id = ? AND in_date < ? AND out_date > ?;
        CREATE PROCEDURE rpc_hotel_reserve PARTITION ON TABLE hotel_reservations COLUMN hotel_id PARAMETER 0
          AS INSERT INTO hotel_reservations (hotel_id, reservation_id, user_id, in_date, out_date, rooms, price_cents)
             VALUES (?, ?, ?, ?, ?, ?, ?);
        """;
  }

  /** DeathStarBench's services on these paths: frontend, search, geo, rate (with profile and availability), recommendation, reservation. */
  @Override
  public List<ServiceDefinition> rpcServices() {
    return List.of(
        new ServiceDefinition(ServiceDefinition.FRONTEND, Map.of(
            "search", (ctx, a) -> ctx.call("search", "search", a.get(0).asLong(), a.get(1)),
            "recommend", (ctx, a) -> ctx.call("recommendation", "best", a.get(1).asLong()),
            "reserve", (ctx, a) -> ctx.call("reservation", "reserve", a.get(0).asLong(), a.get(1)))),
        new ServiceDefinition("search", Map.of("search", (ctx, a) -> {
          JsonNode hotels = ctx.call("geo", "nearby", a.get(0).asLong(), a.get(1));
          return ctx.call("rate", "offers", hotels, a.get(1));
        })),
        new ServiceDefinition("geo", Map.of("nearby", (ctx, a) -> {
          Nearby.Search s = Json.convert(a.get(1), Nearby.Search.class, "search");
          if (ctx.query("rpc_hotel_user", a.get(0).asLong()).getRowCount() == 0) {
            throw new IllegalArgumentException("no user " + a.get(0).asLong());
          }
          double[] box = Geo.box(s.lat(), s.lon(), Geo.SEARCH_RADIUS_KM);
          VoltTable t = ctx.query("rpc_hotel_box", box[0], box[1], box[2], box[3]);
          List<double[]> near = new ArrayList<>();
          while (t.advanceRow()) {
            double km = Geo.distanceKm(s.lat(), s.lon(), t.getDouble("lat"), t.getDouble("lon"));
            if (km <= Geo.SEARCH_RADIUS_KM) {
              near.add(new double[] {km, t.getLong("hotel_id")});
            }
          }
          near.sort(Comparator.<double[]>comparingDouble(x -> x[0]).thenComparingDouble(x -> x[1]));
          return near.subList(0, Math.min(Geo.NEAREST, near.size())).stream().map(x -> (long) x[1]).toList();
        })),
        new ServiceDefinition("rate", Map.of("offers", (ctx, a) -> {
          Nearby.Search s = Json.convert(a.get(1), Nearby.Search.class, "search");
          List<Object[]> calls = new ArrayList<>();
          for (JsonNode h : a.get(0)) {
            long hotel = h.asLong();
            calls.add(new Object[] {"rpc_hotel_profile", hotel});
            calls.add(new Object[] {"rpc_hotel_rates", hotel, s.inDate(), s.outDate()});
            calls.add(new Object[] {"rpc_hotel_booked", hotel, s.outDate(), s.inDate()});
            calls.add(new Object[] {"rpc_hotel_rating", hotel});
          }
          List<VoltTable> r = ctx.queryAll(calls);
          List<Offer.HotelOffer> offers = new ArrayList<>();
          for (int i = 0; i < r.size(); i += 4) {
            VoltTable profile = r.get(i);
            profile.advanceRow();
            List<Offer.Rate> rates = new ArrayList<>();
            VoltTable rt = r.get(i + 1);
            while (rt.advanceRow()) {
              rates.add(new Offer.Rate(rt.getString("plan_code"), rt.getString("room_type"), rt.getLong("price_cents")));
            }
            VoltTable booked = r.get(i + 2);
            booked.advanceRow();
            long rooms = booked.getLong("rooms");
            rooms = booked.wasNull() ? 0 : rooms;
            VoltTable rating = r.get(i + 3);
            double stars = rating.advanceRow() ? rating.getDouble("rating") : 0;
            offers.add(new Offer.HotelOffer(profile.getLong("hotel_id"), profile.getString("name"),
                profile.getString("address"), stars, rooms < profile.getLong("capacity"), rates));
          }
          return offers;
        })),
        new ServiceDefinition("recommendation", Map.of("best", (ctx, a) -> {
          VoltTable t = ctx.query("rpc_hotel_recommend", a.get(0).asLong());
          return t.advanceRow() ? t.getLong("hotel_id") : -1L;
        })),
        new ServiceDefinition("reservation", Map.of("reserve", (ctx, a) -> {
          long hotel = a.get(0).asLong();
          Reserve.Reservation req = Json.convert(a.get(1), Reserve.Reservation.class, "reservation");
          if (ctx.query("rpc_hotel_user", req.userId()).getRowCount() == 0) {
            throw new IllegalArgumentException("no user " + req.userId());
          }
          VoltTable capacity = ctx.query("rpc_hotel_profile", hotel);
          VoltTable booked = ctx.query("rpc_hotel_booked", hotel, req.outDate(), req.inDate());
          VoltTable plan = ctx.query("rpc_hotel_plan", hotel, req.planCode());
          if (!capacity.advanceRow() || !plan.advanceRow()) {
            throw new IllegalArgumentException("no hotel " + hotel + " or plan " + req.planCode());
          }
          booked.advanceRow();
          long taken = booked.getLong("rooms");
          taken = booked.wasNull() ? 0 : taken;
          if (taken + req.rooms() > capacity.getLong("capacity")) {
            return -1L;
          }
          long id = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
          ctx.query("rpc_hotel_reserve", hotel, id, req.userId(), req.inDate(), req.outDate(), req.rooms(),
              plan.getLong("price_cents") * req.rooms() * (req.outDate() - req.inDate()));
          return id;
        })));
  }
}
