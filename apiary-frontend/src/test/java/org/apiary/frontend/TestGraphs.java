package org.apiary.frontend;

import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.testapp.GraphApp;
import org.voltdb.VoltTable;

/** Registers the test graphs once per JVM and reads their tables (the drills' failure tests use it too). */
public final class TestGraphs {
  private static boolean registered;

  private TestGraphs() {}

  public static synchronized void registerOnce(ApiaryDatabase db) {
    if (!registered) {
      Registrar.register(db, GraphApp.APP);
      registered = true;
    }
  }

  public static void clear(ApiaryDatabase db) {
    for (String t : new String[] {"g_counters", "g_hits"}) {
      db.callAdmin("clearing " + t, "@AdHoc", "DELETE FROM " + t);
    }
  }

  public static long counter(ApiaryDatabase db, long k) {
    return scalar(db, "SELECT v FROM g_counters WHERE k = ?", k);
  }

  static long hits(ApiaryDatabase db, long k) {
    return scalar(db, "SELECT n FROM g_hits WHERE k = ?", k);
  }

  static long count(ApiaryDatabase db, String table) {
    return scalar(db, "SELECT COUNT(*) FROM " + table);
  }

  static boolean logged(ApiaryDatabase db, String invocationId) {
    return scalar(db, "SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = ?", invocationId) > 0;
  }

  private static long scalar(ApiaryDatabase db, String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", all).getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }
}
