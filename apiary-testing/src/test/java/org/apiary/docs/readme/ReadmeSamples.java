package org.apiary.docs.readme;

import java.nio.file.Path;
import java.util.Set;
import org.apiary.AccessPolicy;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.server.Apiary;

/**
 * The Java fragments of README.md and of the sections docs/ took over from it, each inside a method so that it
 * compiles; DocSamplesTest finds them here.
 */
@SuppressWarnings("unused")
final class ReadmeSamples {
  static final String SCHEMA = """
      CREATE TABLE accounts (id BIGINT NOT NULL, balance BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE accounts ON COLUMN id;
      """;

  private ReadmeSamples() {}

  // "Deploying and calling"
  static void deployAndCall() {
    try (Apiary apiary = Apiary.start(DatabaseConfig.embedded())) {   // or DatabaseConfig.external("host:21212", ...)
      apiary.deploy(Application.of(SCHEMA, Graph.ofFunction("deposit", Deposit.class)));   // a graph of one function
      long balance = apiary.invoke("deposit", 1L, 100L).value(Long.class);                  // partition key, arguments
      apiary.client().invokeAsync(InvocationRequest.of("deposit", 1L, 5L))                  // asynchronous
          .thenAccept(result -> System.out.println(result.value(Long.class)));
    }
  }

  // "Graphs, frontends and clients"
  static void graphsFrontendsClients(ApiaryDatabase db) {
    Graph timeline = Graph.named("timeline")
        .addLocalFunction("getFollowees", GetFollowees.class)     // returnOutput(f, "followees", f) per followee
        .addLocalFunction("getPosts", GetPosts.class)             // runs once per distinct followee key, in parallel
        .addEdge(Graph.SOURCE, "getFollowees", "source", Long.class)
        .addEdge("getFollowees", "getPosts", "followees")
        .addEdge("getPosts", Graph.SINK, "sink");

    try (Apiary apiary = Apiary.start(DatabaseConfig.embedded())) {   // or DatabaseConfig.external("host:21212", ...)
      apiary.deploy(Application.of(SCHEMA, timeline));            // checks, compiles, deploys, stores the graph
      GraphResult r = apiary.invoke("timeline", 42L, 42L);         // graph, partition key, arguments
      apiary.client().invokeAsync(InvocationRequest.of("timeline", 42L, 42L))   // CompletableFuture<GraphResult>
            .thenAccept(result -> System.out.println(result.toJson()));
    }

    // The parts, for programs that run them apart: a frontend of its own, a client in another process.
    Registrar.register(db, Application.of(SCHEMA, timeline));
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());   // or: ./apiary frontend --database host:port
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint(), "tcp://other-frontend:5555"))) {
      GraphResult r = client.invoke("timeline", 42L, 42L);
    }
  }

  // "Access control"
  static void accessControl(ApiaryDatabase db, String endpoint) {
    Graph record = Graph.named("patientRecord")
        .addLocalFunction("readRecord", ReadRecord.class)
        .addEdge(Graph.SOURCE, "readRecord", "source", String.class)
        .addEdge("readRecord", Graph.SINK, "sink")
        .withAccess(AccessPolicy.roles("nurse", "doctor").withPurposes("treatment", "billing"));

    Credentials.Issued nurse = Credentials.create(db, "nurse-17", Set.of("nurse"));   // roles are fixed per key
    ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint)
        .withCredential(nurse.apiKey()).withPurpose("treatment"));                     // the client's purpose
    client.invoke(InvocationRequest.of("patientRecord", 7L, "x").withPurpose("billing"));   // or one call's
  }

  // "Provenance"
  static void provenance() {
    DatabaseConfig config = DatabaseConfig.embedded(2)
        .withProvenance(ProvenanceConfig.duckdb(Path.of("apiary-provenance.duckdb")));     // the zero-setup default
    //  .withProvenance(ProvenanceConfig.sink("jdbc:postgresql://host/db").withCredentials("user", "pw"))
    //  .withProvenance(ProvenanceConfig.sink("jdbc:vertica://host:5433/db").withCredentials("user", "pw"))
    //  .withProvenance(ProvenanceConfig.loader("loaderhost:21720", "jdbc:postgresql://host/db"))  // `apiary loader`
    ProvenanceConfig apart = ProvenanceConfig.loader("loaderhost:21720", "jdbc:postgresql://host/db");
  }
}
