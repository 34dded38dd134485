package org.apiary.docs.guide;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.ProvenanceLevel;
import org.apiary.Statement;

// docs/programming-guide.md, "Provenance level per statement".
public class Balance extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT balance FROM accounts WHERE id = ?");

  @Override
  protected void run() {
    queueSQL(GET, List.of(partitionKey()), ProvenanceLevel.NONE);   // this read is not captured
    returnOutput(executeSQL().get(0).rows().get(0).getLong("balance"));
  }
}
