package org.apiary.docs.readme;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** The access control example of docs/access-control.md: reads one patient's record. */
public class ReadRecord extends LocalFunction<Long> {
  static final Statement READ = Statement.of("SELECT name FROM patients WHERE id = ?");

  @Override
  protected void run() {
    queueSQL(READ, partitionKey());
    returnOutput(executeSQL().get(0).rows().get(0).getString("name"));
  }
}
