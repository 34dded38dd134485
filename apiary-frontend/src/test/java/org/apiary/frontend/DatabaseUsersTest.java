package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.apiary.Application;
import org.apiary.DatabaseException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseLogin;
import org.apiary.database.DatabaseUsers;
import org.apiary.database.LocalCluster;
import org.apiary.frontend.holes.HolesApp;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 14: a database Apiary starts with users runs VoltDB's security, and a frontend connected as the frontends'
 * user serves calls, takes over and cleans up with only the permissions it needs: it cannot change the schema,
 * write through ad-hoc SQL, load classes or stop the database. Wrong or missing logins are refused at once.
 */
@Tag("database")
class DatabaseUsersTest {
  @Test
  void aFrontendServesWithTheFrontendUsersLeastPrivilegesAndNothingMore() throws Exception {
    DatabaseUsers users = DatabaseUsers.generate();
    try (LocalCluster cluster = LocalCluster.start(ClusterConfig.of(1, 2, 0).withUsers(users)
        .withStartTimeout(Duration.ofSeconds(120)));
         ApiaryDatabase admin = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(admin, Application.of(HolesApp.SCHEMA, HolesApp.ONE_BUMP));
      DatabaseConfig asFrontend = DatabaseConfig.external(cluster.clientAddresses().toArray(String[]::new))
          .withLogin(users.frontend());
      try (ApiaryDatabase db = ApiaryDatabase.open(asFrontend);
           FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
           ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
               .withAttemptTimeout(Duration.ofSeconds(10)))) {
        assertEquals(List.of(1L), client.invoke(InvocationRequest.of("h_oneBump", 7L, 1L)).values(Long.class));
        assertEquals(List.of(2L), client.invoke(InvocationRequest.of("h_oneBump", 7L, 1L)).values(Long.class));

        // Maintenance under the same user: the takeover's reassignment, dead-lease lookup and retention's steps.
        InvocationLog log = new InvocationLog(db);
        assertEquals(0, log.reassign("gone-frontend", frontend.id()));
        new FrontendLeases(db, "probe", "tcp://127.0.0.1:1").expired();
        log.deleteOlderThan(Duration.ofHours(1));

        for (String[] call : List.of(
            new String[] {"@AdHoc", "INSERT INTO h_counters (k, v) VALUES (99, 1)"},
            new String[] {"@AdHoc", "DELETE FROM h_counters"},
            new String[] {"@AdHoc", "CREATE TABLE sneaky (k BIGINT NOT NULL)"},
            new String[] {"@AdHoc", "DROP ROLE " + DatabaseUsers.FRONTEND_ROLE + " IF EXISTS; CREATE ROLE "
                + DatabaseUsers.FRONTEND_ROLE + " WITH ALLPROC, SQLREAD"},
            new String[] {"@Pause"},
            new String[] {"@Shutdown"})) {
          Object[] params = java.util.Arrays.copyOfRange(call, 1, call.length);
          DatabaseException refused = assertThrows(DatabaseException.class,
              () -> db.callAdmin("probing " + call[0], call[0], params), "the frontend's user may run " + call[0]
                  + " " + java.util.Arrays.toString(params));
          assertTrue(refused.getMessage().toLowerCase(java.util.Locale.ROOT).contains("permission"),
              refused.getMessage());
        }
        assertEquals(2L, admin.callAdmin("reading", "@AdHoc", "SELECT v FROM h_counters WHERE k = 7")
            .getResults()[0].asScalarLong());
        assertEquals(0L, admin.callAdmin("reading", "@AdHoc", "SELECT COUNT(*) FROM h_counters WHERE k = 99")
            .getResults()[0].asScalarLong());
      }

      DatabaseConfig wrong = DatabaseConfig.external(cluster.clientAddresses().toArray(String[]::new))
          .withLogin(new DatabaseLogin(DatabaseUsers.FRONTEND_USER, "not-the-password"))
          .withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(5));
      long started = System.nanoTime();
      DatabaseException refused = assertThrows(DatabaseException.class, () -> ApiaryDatabase.open(wrong).close());
      assertTrue(refused.getMessage().contains("refused the login of user '" + DatabaseUsers.FRONTEND_USER + "'"),
          refused.getMessage());
      assertTrue(System.nanoTime() - started < Duration.ofSeconds(20).toNanos(), "a refused login is not retried");
      DatabaseException anonymous = assertThrows(DatabaseException.class, () -> ApiaryDatabase.open(
          DatabaseConfig.external(cluster.clientAddresses().toArray(String[]::new))
              .withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(5))).close());
      assertTrue(anonymous.getMessage().contains("security is on"), anonymous.getMessage());
    }
  }
}
