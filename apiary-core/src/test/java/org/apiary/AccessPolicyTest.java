package org.apiary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.apiary.internal.Json;
import org.junit.jupiter.api.Test;

/** Issue 14, item 2: what a graph's access policy allows, what it says when it refuses, and how it is stored. */
class AccessPolicyTest {
  private static final AccessPolicy NURSES = AccessPolicy.roles("nurse", "doctor", "nurse")
      .withPurposes("treatment", "billing");

  @Test
  void namesAreSortedDeduplicatedAndChecked() {
    assertEquals(List.of("doctor", "nurse"), NURSES.roles());
    assertEquals(List.of("billing", "treatment"), NURSES.purposes());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AccessPolicy.roles("a b"));
    assertTrue(e.getMessage().contains("'a b'"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> AccessPolicy.purposes(""));
    assertTrue(AccessPolicy.OPEN.allowsEveryCall());
    assertEquals(AccessPolicy.OPEN, Graph.named("g").access());
  }

  @Test
  void aCallNeedsOneOfTheRolesAndOneOfThePurposes() {
    assertNull(NURSES.refusal("graph 'g'", "ann", Set.of("nurse", "clerk"), "billing"));
    String role = NURSES.refusal("graph 'g'", "bob", Set.of("clerk"), "billing");
    assertEquals("graph 'g' may be called by the roles [doctor, nurse]; caller 'bob' has the roles [clerk]; "
        + "nothing ran", role);
    assertTrue(NURSES.refusal("graph 'g'", null, Set.of(), "billing").contains("an anonymous caller has no roles"));
    String purpose = NURSES.refusal("graph 'g'", "ann", Set.of("nurse"), "marketing");
    assertEquals("graph 'g' may be called for the purposes [billing, treatment]; the call states purpose "
        + "'marketing'; nothing ran", purpose);
    assertTrue(NURSES.refusal("graph 'g'", "ann", Set.of("nurse"), null).contains("states no purpose"));
    assertNull(NURSES.refusal("g", "root", Set.of(AccessPolicy.ADMIN_ROLE), null), "admin may call anything");
    assertNull(AccessPolicy.purposes("research").refusal("g", null, Set.of(), "research"), "no roles: anyone");
    assertNull(AccessPolicy.OPEN.refusal("g", null, Set.of(), null));
  }

  @Test
  void itIsStoredAsJsonAndReadBack() {
    byte[] json = Json.bytes(NURSES);
    assertEquals("{\"roles\":[\"doctor\",\"nurse\"],\"purposes\":[\"billing\",\"treatment\"]}", new String(json,
        java.nio.charset.StandardCharsets.UTF_8));
    assertEquals(NURSES, Json.read(json, AccessPolicy.class, "policy"));
  }
}
