package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.RecordingMode;
import org.apiary.RegistrationException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.testapp.Bump;
import org.apiary.frontend.testapp.Figure8;
import org.apiary.frontend.testapp.GraphApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/** Registration: graph checks, the recording decision per mode, and graphs stored for every frontend. */
@DatabaseTest
class RegistrarTest {
  @Test
  void figure8RecordsF1AndF3ButNotF2(TestDatabase database) {
    ApiaryDatabase db = database.database();
    TestGraphs.registerOnce(db);
    Application app = Application.of(GraphApp.SCHEMA, Figure8.GRAPH);
    assertEquals(List.of("F1", "F3"), Registrar.register(db, app).get(0).recordedFunctions());
    assertEquals(List.of(), Registrar.register(db, app, RecordingMode.NONE).get(0).recordedFunctions());
    assertEquals(List.of("F1", "F2", "F3"), Registrar.register(db, app, RecordingMode.NAIVE).get(0).recordedFunctions());

    RegisteredGraph stored = Registrar.register(db, app, RecordingMode.SELECTIVE).get(0);
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
      TestGraphs.clear(db);
      assertEquals(List.of("read:0", "wrote:1"), client.invoke("figure8", 3L, 0L).values(String.class));
      assertEquals(1L, TestGraphs.counter(db, 3L));
    }
    assertEquals(stored, new GraphCatalog(db, java.time.Duration.ZERO).graph("figure8").orElseThrow());
  }

  @Test
  void aCatalogReloadReadsTheGraphsOnlyWhenSomethingWasRegisteredOrDeployed(TestDatabase database) {
    ApiaryDatabase db = database.database();
    TestGraphs.registerOnce(db);
    GraphCatalog catalog = new GraphCatalog(db, java.time.Duration.ZERO);
    long loads = catalog.loads();
    catalog.reload();
    catalog.reload();
    assertEquals(loads, catalog.loads(), "an unchanged catalog was read again (every heartbeat of every frontend)");

    int before = catalog.known("figure8").map(GraphCatalog.Versioned::version).orElse(0);
    Registrar.register(db, Application.of(GraphApp.SCHEMA, Figure8.GRAPH)); // a new version of figure8
    catalog.reload();
    assertEquals(loads + 1, catalog.loads());
    assertEquals(before + 1, catalog.known("figure8").orElseThrow().version(), "the new version was not seen");
  }

  @Test
  void invalidGraphsAreRejectedWithEveryProblemNamed(TestDatabase database) {
    Graph bad = Graph.named("bad")
        .addLocalFunction("bump", Bump.class)
        .addLocalFunction("again", Bump.class)
        .addEdge(Graph.SOURCE, "bump", "source", Long.class)
        .addEdge(Graph.SOURCE, "again", "source", String.class)
        .addEdge("bump", "again", "x")
        .addEdge("again", "bump", "y")
        .addEdge("bump", "nowhere", "z");
    RegistrationException e = assertThrows(RegistrationException.class,
        () -> Registrar.register(database.database(), Application.of(GraphApp.SCHEMA, bad)));
    String all = String.join("\n", e.problems());
    assertTrue(all.contains("goes to unknown function 'nowhere'"), all);
    assertTrue(all.contains("has a cycle: "), all);
    assertTrue(all.contains("declares type String but another edge 'source' out of the source declares Long"), all);
    assertEquals(3, e.problems().size(), all);
  }
}
