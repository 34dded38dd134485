package org.apiary.frontend.migration;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Version 3 of the account reader: the balance, the nickname migration 1 added, the notes of migration 2's table,
 * and how many accounts share the nickname (by migration 3's index).
 */
public class ReadV3 extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT balance, nickname FROM sm_accounts WHERE id = ?");
  static final Statement NOTES = Statement.of("SELECT COUNT(*) AS n FROM sm_notes WHERE account = ?");
  static final Statement SAME = Statement.of("SELECT COUNT(*) AS n FROM sm_accounts WHERE nickname = ? AND id = ?");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    queueSQL(NOTES, partitionKey());
    var results = executeSQL();
    var row = results.get(0).firstRow().orElseThrow();
    String nickname = row.getString("nickname");
    long notes = results.get(1).firstRow().orElseThrow().getLong("n");
    queueSQL(SAME, nickname, partitionKey());
    long same = executeSQL().get(0).firstRow().orElseThrow().getLong("n");
    returnOutput("balance=" + row.getLong("balance") + " nickname=" + nickname + " notes=" + notes + " same=" + same);
  }
}
