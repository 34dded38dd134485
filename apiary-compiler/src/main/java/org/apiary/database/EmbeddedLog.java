package org.apiary.database;

import java.util.Enumeration;
import java.util.List;
import org.apache.log4j.Appender;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.Filter;
import org.apache.log4j.spi.LoggingEvent;

/**
 * Keeps three of VoltDB's start-up warnings out of an embedded server's log, each untrue for the way
 * {@link EmbeddedServer} starts VoltDB, so a new user does not learn to skip warnings:
 * <ul>
 *   <li>"The database is accessible and could be modified or shut down by anyone on the network": every port of an
 *       embedded server listens on loopback only (client, admin, internal, ZooKeeper; HTTP is off);</li>
 *   <li>"The "create" command is deprecated": about VoltDB's command line, which an in-process start does not use;</li>
 *   <li>the frontend's database user "is assigned to non-existent role" on a first start: the deployment names the
 *       role before Apiary's system schema creates it, moments later, before the frontend connects.</li>
 * </ul>
 * Other warnings, other users' and roles' included, still show. Installed on the root logger's appenders once.
 */
final class EmbeddedLog {
  private static final List<String> UNTRUE_HERE = List.of(
      "The database is accessible and could be modified or shut down by anyone on the network",
      "The \"create\" command is deprecated",
      "is assigned to non-existent role \"" + DatabaseUsers.FRONTEND_ROLE + "\"");

  private EmbeddedLog() {}

  /** Adds the filter to every appender of the root logger that lacks it. */
  static synchronized void quietUntrueWarnings() {
    for (Enumeration<?> e = Logger.getRootLogger().getAllAppenders(); e.hasMoreElements(); ) {
      Appender appender = (Appender) e.nextElement();
      boolean present = false;
      for (Filter f = appender.getFilter(); f != null; f = f.getNext()) {
        present |= f instanceof UntrueWarnings;
      }
      if (!present) {
        appender.addFilter(new UntrueWarnings()); // one each: a filter is a link of its appender's chain
      }
    }
  }

  /** Denies the events whose message holds one of {@link #UNTRUE_HERE}; leaves the others to the next filter. */
  private static final class UntrueWarnings extends Filter {
    @Override
    public int decide(LoggingEvent event) {
      String message = event.getRenderedMessage();
      if (message != null) {
        for (String untrue : UNTRUE_HERE) {
          if (message.contains(untrue)) {
            return DENY;
          }
        }
      }
      return NEUTRAL;
    }
  }
}
