package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apiary.cli.InProcessCli.Run;
import org.apiary.cli.edges.EdgesApp;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a new user met calling graphs with {@code apiary invoke} (issue 44, the rough edges): each refusal or failure
 * is one clear line saying what was wrong, and a graph that needs no argument can be called without one.
 */
@DatabaseTest
class InvokeRoughEdgesTest {
  private static FrontendServer frontend;

  @BeforeAll
  static void deploy(TestDatabase database) {
    Registrar.register(database.database(), EdgesApp.APP);
    frontend = FrontendServer.start(database.database(), FrontendConfig.defaults());
  }

  @AfterAll
  static void stop() {
    if (frontend != null) {
      frontend.close();
    }
  }

  private static Run invoke(String... args) {
    String[] all = new String[args.length + 3];
    all[0] = "invoke";
    System.arraycopy(args, 0, all, 1, args.length);
    all[args.length + 1] = "--frontend";
    all[args.length + 2] = frontend.endpoint();
    return run(all);
  }

  /** One line on stderr, no Java stack frame, no exception class of Jackson or VoltDB. */
  private static void oneClearLine(Run r) {
    String err = r.err().strip();
    assertEquals(1, err.lines().count(), err);
    assertFalse(err.contains("\tat ") || err.contains("Exception:") || err.contains("DeserializationConfig")
        || err.contains("org.voltdb"), err);
  }

  @Test
  void aRecordArgumentMissingAFieldIsRefusedBeforeRunningNamingTheField() {
    Run r = invoke("edge_add", "--key", "1", "{\"product\":7}");
    assertEquals(1, r.code(), r.out());
    oneClearLine(r);
    assertTrue(r.err().contains("nothing ran") && r.err().contains("'edge_add'") && r.err().contains("'addItem'")
        && r.err().contains("'source'") && r.err().contains("'quantity'") && r.err().contains("missing"), r.err());
  }

  @Test
  void aRecordArgumentWithAnUnknownFieldIsRefusedNamingItAndTheExpectedOnes() {
    Run r = invoke("edge_add", "--key", "1", "{\"product\":7,\"quantity\":1,\"colour\":\"red\"}");
    assertEquals(1, r.code(), r.out());
    oneClearLine(r);
    assertTrue(r.err().contains("nothing ran") && r.err().contains("'addItem'") && r.err().contains("'colour'")
        && r.err().contains("product") && r.err().contains("quantity") && r.err().contains("note"), r.err());
  }

  @Test
  void aRecordFieldOfTheWrongTypeIsRefusedNamingItsPath() {
    Run wrong = invoke("edge_add", "--key", "1", "{\"product\":\"seven\",\"quantity\":1}");
    assertEquals(1, wrong.code(), wrong.out());
    oneClearLine(wrong);
    assertTrue(wrong.err().contains("'product'") && wrong.err().contains("an integer")
        && wrong.err().contains("\"seven\""), wrong.err());
    Run nested = invoke("edge_add", "--key", "1", "{\"product\":7,\"quantity\":1,\"note\":{\"text\":\"x\"}}");
    assertEquals(1, nested.code(), nested.out());
    assertTrue(nested.err().contains("'note.priority'") && nested.err().contains("missing"), nested.err());
    Run ok = invoke("edge_add", "--key", "3", "{\"product\":7,\"quantity\":2,\"note\":{\"text\":\"x\",\"priority\":1}}");
    assertEquals(0, ok.code(), ok.err());
    assertEquals("2", ok.out().strip());
  }

  @Test
  void aDuplicateInsertIsOneLineNamingTheConstraint() {
    assertEquals(0, invoke("edge_add", "--key", "2", "{\"product\":7,\"quantity\":1}").code());
    Run again = invoke("edge_add", "--key", "2", "{\"product\":7,\"quantity\":1}");
    assertEquals(1, again.code(), again.out());
    oneClearLine(again);
    assertTrue(again.err().contains("EDGE_ITEMS") && again.err().contains("rolled back"), again.err());
  }

  @Test
  void aPurposeRefusalSaysWhichPurposeAndDoesNotAskForAKey() {
    Run r = invoke("edge_audited", "--key", "2");
    assertEquals(1, r.code(), r.out());
    oneClearLine(r);
    assertTrue(r.err().contains("purposes [audit]") && r.err().contains("--purpose"), r.err());
    assertFalse(r.err().contains("--credential-file"), r.err());
    Run stated = invoke("edge_audited", "--key", "2", "--purpose", "audit");
    assertEquals(0, stated.code(), stated.err());
  }

  @Test
  void aGraphThatNeedsNoArgumentIsCalledWithOnlyItsKey() {
    assertEquals(0, invoke("edge_add", "--key", "5", "{\"product\":1,\"quantity\":1}").code());
    Run r = invoke("edge_count", "--key", "5");
    assertEquals(0, r.code(), r.err());
    assertEquals("1", r.out().strip());
  }
}
