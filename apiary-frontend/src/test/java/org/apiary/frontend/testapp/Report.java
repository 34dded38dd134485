package org.apiary.frontend.testapp;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Returns [the value bump computed, counter k as read now]. */
public class Report extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM g_counters WHERE k = ?");

  @Override
  protected void run() {
    long bumped = retrieveInput("bumped", Long.class);
    queueSQL(GET, partitionKey());
    long now = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L);
    returnOutput(List.of(bumped, now));
  }
}
