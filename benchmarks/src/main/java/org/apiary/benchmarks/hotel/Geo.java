package org.apiary.benchmarks.hotel;

/** Distances on the Earth's surface, for the geo search. */
final class Geo {
  static final double SEARCH_RADIUS_KM = 10;
  static final int NEAREST = 5;
  private static final double EARTH_RADIUS_KM = 6371.0;

  private Geo() {}

  /** Great-circle distance (haversine). */
  static double distanceKm(double lat1, double lon1, double lat2, double lon2) {
    double dLat = Math.toRadians(lat2 - lat1);
    double dLon = Math.toRadians(lon2 - lon1);
    double a = Math.sin(dLat / 2) * Math.sin(dLat / 2)
        + Math.cos(Math.toRadians(lat1)) * Math.cos(Math.toRadians(lat2)) * Math.sin(dLon / 2) * Math.sin(dLon / 2);
    return 2 * EARTH_RADIUS_KM * Math.asin(Math.sqrt(a));
  }

  /** {minLat, maxLat, minLon, maxLon} of a box holding every point within {@code km} of the centre. */
  static double[] box(double lat, double lon, double km) {
    double dLat = Math.toDegrees(km / EARTH_RADIUS_KM);
    double dLon = Math.toDegrees(km / (EARTH_RADIUS_KM * Math.cos(Math.toRadians(lat))));
    return new double[] {lat - dLat, lat + dLat, lon - dLon, lon + dLon};
  }
}
