package org.apiary.frontend.migration;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Version 0 of the account reader: the balance alone. */
public class ReadV0 extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT balance FROM sm_accounts WHERE id = ?");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    returnOutput("balance=" + executeSQL().get(0).firstRow().map(r -> r.getLong("balance")).orElse(-1L));
  }
}
