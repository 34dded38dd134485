package org.apiary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class StatementTest {
  @Test
  void trailingSemicolonAndSpaceAreDropped() {
    assertEquals("SELECT 1 FROM t", Statement.of("  SELECT 1 FROM t ; ").sql());
    assertEquals(Statement.of("SELECT 1 FROM t"), Statement.of("SELECT 1 FROM t;"));
  }

  @Test
  void blankSqlIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Statement.of("  ;"));
  }
}
