package org.apiary.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.TestGraphs;
import org.apiary.frontend.provenance.ItemsApp;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console's pages in Debian's Chromium (issue 43 item 6), driven by Selenium through Debian's chromedriver (its
 * path given, so Selenium Manager never runs): a small workload (an item stocked and audited, a failure, a fan-out
 * over three keys, and a retry whose first function is answered from its record), then executions -> execution ->
 * record -> graphs -> cluster -> SQL, checking what each page shows; any error in the browser's console (a blocked
 * request included) fails it. A PNG of each page goes to {@code target/console-screenshots/}. Without the browser it
 * is skipped, printing the install line; with {@code CI=true} it fails.
 */
@DatabaseTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleBrowserTest {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final String INSTALL = "apt-get install -y chromium chromium-driver";
  private static final Path SHOTS = Path.of("target", "console-screenshots");
  private static final Duration WAIT = Duration.ofSeconds(20);

  private ApiaryDatabase db;
  private FrontendServer frontend;
  private ConsoleServer console;
  private ChromeDriverService service;
  private WebDriver browser;
  private Path profile;
  private String admin;
  private String run;
  private final long item = 4400L + (System.nanoTime() & 0x3f) * 10; // this run's items: item .. item + 3
  private final long chain = item + 5; // and chain .. chain + 2

  @BeforeAll
  void start(TestDatabase database) throws Exception {
    if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
      String message = "Debian's chromium and chromium-driver are not installed (" + CHROMIUM + ", " + CHROMEDRIVER
          + "); install them with: " + INSTALL;
      if ("true".equals(System.getenv("CI"))) {
        fail(message);
      }
      System.out.println("ConsoleBrowserTest skipped: " + message);
      Assumptions.abort(message);
    }
    db = database.database();
    TestGraphs.registerOnce(db);
    ItemsApp.registerOnce(db);
    run = "b" + UUID.randomUUID().toString().substring(0, 6) + "-";
    frontend = FrontendServer.start(db, FrontendConfig.defaults());
    // A retry answered from its record: the first attempt of 'failing' ran bump (here called directly, as a
    // frontend that then died would have), so the graph's execution under the same ID answers bump from its record,
    // then explode fails: one page shows both outcomes.
    Invocation firstAttempt = new Invocation(Map.of("source", List.of(Json.tree(1L))), run + "retry", true,
        "failing", null, false, false, null);
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    invoker.callAsync("bump", item + 3, firstAttempt).get(60, TimeUnit.SECONDS);
    invoker.callGlobal("stockRange", chain, chain + 3); // a lineage three steps deep, as ConsoleProvenanceTest's
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
        .withAttemptTimeout(Duration.ofSeconds(60)))) {
      client.invoke(InvocationRequest.of("itemLifecycle", item, "widget").withId(run + "ok"));
      assertThrows(FunctionFailedException.class, () -> client.invoke(InvocationRequest.of("stockThenFail",
          item + 1, "gadget").withId(run + "failed")));
      client.invoke(InvocationRequest.of("fanOut", null, 3).withId(run + "fan"));
      assertThrows(FunctionFailedException.class, () -> client.invoke(InvocationRequest.of("failing", item + 3, 1L)
          .withId(run + "retry")));
      client.invoke(InvocationRequest.of("readThenSetTwo", null, List.of(chain, chain + 1, 7L)).withId(run + "e1"));
      client.invoke(InvocationRequest.of("readThenSetTwo", null, List.of(chain + 1, chain + 2, 8L))
          .withId(run + "e2"));
      client.invoke(InvocationRequest.of("readItem", chain + 2, "x").withId(run + "e3"));
    }
    admin = Credentials.create(db, "console-browser", Set.of(Credentials.ADMIN_ROLE)).apiKey();
    String sink = db.config().provenance().sinkUrl();
    awaitSink(sink);
    console = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink).withSinkInProcess(true));

    Files.createDirectories(SHOTS);
    profile = Files.createTempDirectory("apiary-chromium-");
    service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort()
        .withTimeout(Duration.ofSeconds(30)).build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-quic", "--user-data-dir=" + profile, "--window-size=1280,800");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    browser = new ChromeDriver(service, options);
    browser.manage().timeouts().pageLoadTimeout(WAIT).scriptTimeout(WAIT);
  }

  /** Waits until the sink holds the workload's function executions and ended invocations. */
  private void awaitSink(String sink) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    long functions = 0;
    long ended = 0;
    while (System.nanoTime() < deadline) {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      functions = count(sink, "SELECT COUNT(*) FROM FunctionInvocations WHERE execution_id LIKE ?");
      ended = count(sink, "SELECT COUNT(*) FROM Invocations WHERE invocation_id LIKE ?");
      // ok: stock, audit; fan: spread, hit x3; retry: bump ran, bump answered from its record
      if (functions >= 11 && ended >= 7) { // and e1, e2, e3 one each
        return;
      }
      Thread.sleep(200);
    }
    fail("the sink holds " + functions + " function executions and " + ended + " ended invocations of " + run);
  }

  private long count(String sink, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(sink); PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, run + "%");
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (browser != null) {
      browser.quit();
    }
    if (service != null) {
      service.stop();
    }
    if (console != null) {
      console.close();
    }
    if (frontend != null) {
      frontend.close();
    }
    if (profile != null) {
      try (var files = Files.walk(profile)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Test
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void walkEveryPage() throws Exception {
    // Without a key the page says how to give one; the key is then kept in this tab only.
    open("/");
    assertTrue(text("banner").contains("needs an API key"), text("banner"));
    browser.findElement(By.id("key-input")).sendKeys(admin);
    browser.findElement(By.id("key-save")).click();
    new WebDriverWait(browser, WAIT).until(d -> !d.findElement(By.id("summary")).getText().isEmpty());
    assertEquals(admin, ((JavascriptExecutor) browser).executeScript(
        "return sessionStorage.getItem('apiary.console.key')"));
    List<String> expected401 = consoleErrors(); // the keyless request's 401, which the browser logs: expected
    assertTrue(expected401.stream().allMatch(e -> e.contains("401")), "before the key: " + expected401);

    // Executions, filtered by a shareable URL.
    open("/executions.html?prefix=" + enc(run));
    List<WebElement> rows = browser.findElements(By.cssSelector("#executions tbody tr"));
    assertEquals(7, rows.size(), text("content"));
    assertTrue(text("summary").startsWith("7 matching executions"), text("summary"));
    assertTrue(text("executions").contains("FAILED") && text("executions").contains("stockThenFail")
        && text("executions").contains("fanOut"), text("executions"));
    shot("executions");
    open("/executions.html?prefix=" + enc(run) + "&status=FAILED");
    assertEquals(2, browser.findElements(By.cssSelector("#executions tbody tr")).size());
    assertEquals("FAILED", browser.findElement(By.name("status")).getAttribute("value"), "the filter is shown");

    // Execution: the failed one, reached by its link.
    browser.findElement(By.linkText(run + "failed")).click(); // filters are in the URL: shareable
    awaitLoaded();
    assertEquals("failed", outcome("stockThenFail"));
    assertTrue(text("legend").contains("answered from record"), text("legend"));
    assertTrue(text("facts").contains("FAILED"), text("facts"));
    WebElement failedBar = browser.findElement(By.cssSelector("#timeline g.bar[data-function='stockThenFail']"));
    assertEquals("failed", failedBar.getAttribute("data-outcome"));
    assertTrue(text("functions").contains("stockThenFail fails"), "the error: " + text("functions"));
    open("/execution.html?id=" + enc(run + "ok"));
    assertEquals("ok", outcome("stock"));
    assertEquals("ok", outcome("audit"));
    // The timeline: a bar per function execution; the functions' reads and writes link to the record page.
    assertEquals(2, browser.findElements(By.cssSelector("#timeline g.bar.o-ok")).size(), text("content"));
    assertTrue(text("functions").contains("items id=" + item + " (insert)"), text("functions"));
    assertTrue(text("functions").contains("items id=" + item + " (delete)"), text("functions"));
    shot("execution-ok");
    browser.findElements(By.cssSelector("#functions a.record-link")).get(0).click();
    awaitLoaded();
    assertTrue(browser.getCurrentUrl().contains("/record.html?table=items"), browser.getCurrentUrl());
    // The retry: bump answered from its record, explode failed.
    open("/execution.html?id=" + enc(run + "retry"));
    assertEquals("answered from record", outcome("bump"));
    assertEquals("failed", outcome("explode"));
    assertTrue(text("functions").contains("answered from record"), text("functions"));
    shot("execution");
    open("/execution.html?id=" + enc(run + "fan"));
    assertEquals("ok", outcome("hit"));
    assertTrue(node("hit").getText().contains("3 keys"), node("hit").getText());
    assertNoOverlap();

    // Record: the stocked and audited item's versions, writers and reader.
    open("/record.html?table=items&key=" + enc("id=" + item));
    String versions = text("versions");
    assertTrue(versions.contains("insert") && versions.contains("update") && versions.contains("delete"), versions);
    assertTrue(versions.contains(run + "ok") && versions.contains("stock") && versions.contains("audit"), versions);
    assertTrue(text("readers").contains("audit"), text("readers"));
    // Its lineage: the record, audit's execution that read it, and the record it deleted (the same one).
    assertTrue(browser.findElements(By.cssSelector("#lineage a.lineage-execution")).size() >= 1, text("content"));
    assertTrue(text("lineage-summary").startsWith("2 nodes"), text("lineage-summary"));
    shot("record");
    // A lineage three steps deep: chain -> e1 -> chain+1 -> e2 -> chain+2 -> e3, each a link.
    open("/record.html?table=items&key=" + enc("id=" + chain));
    assertTrue(text("lineage-summary").startsWith("6 nodes, 9 edges"), text("lineage-summary"));
    assertEquals(3, browser.findElements(By.cssSelector("#lineage a.lineage-execution")).size());
    assertNoOverlap();
    shot("lineage");

    // Graphs: each a DAG; fanOut's three nodes and SINK, none overlapping.
    open("/graphs.html");
    WebElement fan = browser.findElement(By.cssSelector("section[data-graph='fanOut']"));
    assertEquals(4, fan.findElements(By.cssSelector("g.node")).size(), fan.getText());
    assertTrue(fan.getText().contains("keys"), "edge labels: " + fan.getText());
    String stats = browser.findElement(By.cssSelector("[data-stats='fanOut']")).getText();
    assertTrue(stats.contains("calls") && stats.contains("p99"), stats);
    String failing = browser.findElement(By.cssSelector("[data-stats='stockThenFail']")).getText();
    assertTrue(failing.matches("(?s).*[1-9]\\d* failures.*"), failing);
    assertNoOverlap();
    shot("graphs");

    // Cluster.
    open("/cluster.html");
    assertTrue(text("frontends").contains(frontend.endpoint()) && text("frontends").contains("live"),
        text("frontends"));
    assertTrue(text("counts").contains("FAILED"), text("counts"));
    assertTrue(text("sink").contains("reachable"), text("sink"));
    // The backlog section (each server's values: ConsoleApiTest.clusterShowsEachServersBacklogAndAnUnreachableSink).
    assertTrue(text("export-backlog").contains("export streams"), text("export-backlog"));
    assertTrue(browser.findElement(By.id("backlog")).isDisplayed());
    shot("cluster");

    // SQL: an example runs; a write is refused with the reason.
    open("/sql.html?query=" + enc("SELECT mode, COUNT(*) AS n FROM FunctionInvocations WHERE execution_id = '"
        + run + "retry' GROUP BY mode ORDER BY mode"));
    assertTrue(text("result").contains("recorded") && text("result").contains("ran"), text("result"));
    shot("sql");
    open("/sql.html?query=" + enc("SELECT range AS n FROM range(1500)"));
    assertTrue(text("sql-summary").contains("first 1000 rows"), text("sql-summary"));
    open("/sql.html?query=" + enc("DELETE FROM FunctionInvocations"));
    assertTrue(text("banner").contains("refused"), text("banner"));
    List<String> errors = consoleErrors();
    assertTrue(errors.stream().allMatch(e -> e.contains("400")), "only the refused write's 400: " + errors);
  }

  // --- helpers ---

  private void open(String path) {
    List<String> before = consoleErrors();
    assertEquals(List.of(), before, "browser console errors before " + path);
    browser.get(console.url() + path);
    awaitLoaded();
  }

  private void awaitLoaded() {
    awaitLoadedOnly();
    List<WebElement> current = browser.findElements(By.cssSelector("header nav a.current"));
    assertEquals(1, current.size(), "one header, its page marked: " + browser.getCurrentUrl());
    assertEquals(5, browser.findElements(By.cssSelector("header nav a")).size());
  }

  private void awaitLoadedOnly() {
    new WebDriverWait(browser, WAIT).until(d -> {
      Object loaded = ((JavascriptExecutor) d).executeScript("return document.body.getAttribute('data-loaded')");
      return loaded != null;
    });
  }

  private List<String> consoleErrors() {
    List<String> errors = new ArrayList<>();
    for (LogEntry e : browser.manage().logs().get(LogType.BROWSER)) {
      if (e.getLevel().intValue() >= Level.WARNING.intValue()) {
        errors.add(e.getLevel() + " " + e.getMessage());
      }
    }
    return errors;
  }

  private String text(String id) {
    return browser.findElement(By.id(id)).getText();
  }

  private WebElement node(String id) {
    return browser.findElement(By.cssSelector("g.node[data-node='" + id + "']"));
  }

  private String outcome(String id) {
    return node(id).getAttribute("data-outcome");
  }

  /** No two node boxes drawn on the page intersect (as the browser laid them out). */
  @SuppressWarnings("unchecked")
  private void assertNoOverlap() {
    List<List<Number>> boxes = (List<List<Number>>) ((JavascriptExecutor) browser).executeScript(
        "return [...document.querySelectorAll('svg.dag')].flatMap((s, i) => [...s.querySelectorAll('.node rect')]"
            + ".map(r => { const b = r.getBoundingClientRect(); return [i, b.left, b.top, b.right, b.bottom]; }))");
    assertTrue(boxes.size() >= 2, "nodes drawn: " + boxes);
    for (int i = 0; i < boxes.size(); i++) {
      for (int j = i + 1; j < boxes.size(); j++) {
        List<Number> a = boxes.get(i);
        List<Number> b = boxes.get(j);
        if (a.get(0).intValue() != b.get(0).intValue()) {
          continue;
        }
        boolean apart = a.get(3).doubleValue() <= b.get(1).doubleValue() || b.get(3).doubleValue()
            <= a.get(1).doubleValue() || a.get(4).doubleValue() <= b.get(2).doubleValue()
            || b.get(4).doubleValue() <= a.get(2).doubleValue();
        assertTrue(apart, "nodes overlap: " + a + " and " + b);
      }
    }
  }

  /** A PNG of the whole page (up to 1,800 pixels high), 1280 wide. */
  private void shot(String page) throws Exception {
    long height = (Long) ((JavascriptExecutor) browser).executeScript(
        "return Math.ceil(document.documentElement.scrollHeight)");
    org.openqa.selenium.Dimension size = browser.manage().window().getSize();
    browser.manage().window().setSize(new org.openqa.selenium.Dimension(size.getWidth(),
        (int) Math.min(1_800, Math.max(size.getHeight(), height + (size.getHeight() - viewportHeight())))));
    try {
      byte[] png = ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
      Files.write(SHOTS.resolve(page + ".png"), png);
    } finally {
      browser.manage().window().setSize(size);
    }
  }

  private long viewportHeight() {
    return (Long) ((JavascriptExecutor) browser).executeScript("return window.innerHeight");
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
