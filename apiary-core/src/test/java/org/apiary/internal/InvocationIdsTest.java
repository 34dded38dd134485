package org.apiary.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class InvocationIdsTest {
  @Test
  void idsAreVersion7UuidsThatCarryTheirMillisecond() {
    long before = System.currentTimeMillis();
    String id = InvocationIds.next();
    long after = System.currentTimeMillis();
    UUID uuid = UUID.fromString(id);
    assertEquals(36, id.length());
    assertEquals(7, uuid.version());
    assertEquals(2, uuid.variant());
    long millis = uuid.getMostSignificantBits() >>> 16;
    assertTrue(millis >= before && millis <= after, "timestamp " + millis + " outside [" + before + ", " + after + "]");
  }

  @Test
  void idsOfLaterMillisecondsSortAfterEarlierOnesAndNoneRepeat() throws InterruptedException {
    List<String> ids = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 10_000; i++) {
        String id = InvocationIds.next();
        ids.add(id);
        assertTrue(seen.add(id), "repeated ID " + id);
      }
      Thread.sleep(2);
    }
    // Within one millisecond the order is random; across the sleeps it follows time, as text.
    assertTrue(ids.get(0).compareTo(ids.get(ids.size() - 1)) < 0);
    assertTrue(ids.get(9_999).compareTo(ids.get(10_000)) < 0);
    assertTrue(ids.get(19_999).compareTo(ids.get(20_000)) < 0);
  }
}
