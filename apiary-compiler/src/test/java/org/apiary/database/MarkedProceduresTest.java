package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.JournaledProcedure;
import org.apiary.runtime.procedure.MarksPartitions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.voltdb.VoltTable;

/**
 * Every multi-partition procedure of Apiary's system schema that writes runs, in a journaled cluster, as a class that
 * marks its place in every partition's journal ({@link ClusterJournal}'s marked classes). One that does not leaves a
 * journal that recovery after every node's SIGKILL refuses ("has no mark on partition 0"): {@code DeclareQueue} did, and
 * only the cluster durability drill found it. This reads the procedures VoltDB holds after every migration, so a new
 * one is checked the day it is added.
 */
class MarkedProceduresTest {
  @TempDir
  Path work;

  @Test
  void everyMultiPartitionWriteOfTheSystemSchemaHasAMarkedClass() throws Exception {
    Set<Class<?>> markedBases = new java.util.HashSet<>();
    for (Class<?> marked : ClusterJournal.markedProcedures()) {
      assertTrue(MarksPartitions.class.isAssignableFrom(marked), marked + " marks no partition");
      assertEquals(marked.getSimpleName(), marked.getSuperclass().getSimpleName(), marked + " runs in place of "
          + "the procedure of its own name");
      markedBases.add(marked.getSuperclass());
    }
    List<String> checked = new ArrayList<>();
    Set<String> missing = new TreeSet<>();
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2).withDataDirectory(work.resolve("data")))) {
      SystemSchema.ensure(db);
      VoltTable procedures = db.callAdmin("listing procedures", "@SystemCatalog", "PROCEDURES").getResults()[0];
      ObjectMapper json = new ObjectMapper();
      while (procedures.advanceRow()) {
        String name = procedures.getString("PROCEDURE_NAME");
        JsonNode remarks = json.readTree(procedures.getString("REMARKS"));
        Class<?> cls;
        try {
          cls = Class.forName("org.apiary.runtime.procedure." + name);
        } catch (ClassNotFoundException e) {
          continue; // a procedure defined by its SQL alone, which is not journaled as a class
        }
        if (!JournaledProcedure.class.isAssignableFrom(cls) || remarks.path("singlePartition").asBoolean()
            || remarks.path("readOnly").asBoolean()) {
          continue;
        }
        checked.add(name);
        if (!markedBases.contains(cls)) {
          missing.add(name);
        }
      }
    }
    assertTrue(checked.size() >= 5, "too few multi-partition writes found to believe the listing: " + checked);
    assertEquals(Set.of(), missing, "multi-partition writes with no marked class in ClusterJournal (checked "
        + checked + ")");
  }
}
