package org.apiary.cli;

import java.util.concurrent.Callable;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Runs ad-hoc SQL or DDL on the database as its administrator. */
@Command(name = "sql", mixinStandardHelpOptions = true,
    description = {"Run ad-hoc SQL (a query, a write, or DDL) on the database as its administrator, and print each "
        + "result table.",
        "For looking at data and for repairs. Change an application's tables through its schema migrations "
            + "(apiary deploy), not here: a table changed here is not what the application's migrations expect."})
public final class SqlCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "SQL", description = "The statement(s), for example \"SELECT * FROM t\".")
  String sql;

  @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
  ServiceTarget.Database target;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    try (ApiaryDatabase db = ServiceTarget.openDatabase(target, spec)) {
      for (Rows rows : db.queryEach("sql", sql)) {
        System.out.print(rows.formatted());
        System.out.println();
      }
      return 0;
    }
  }
}
