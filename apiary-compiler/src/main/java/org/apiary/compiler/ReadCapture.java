package org.apiary.compiler;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.calcite.avatica.util.Casing;
import org.apache.calcite.avatica.util.Quoting;
import org.apache.calcite.sql.SqlBasicCall;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlJoin;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNodeList;
import org.apache.calcite.sql.SqlOrderBy;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.validate.SqlConformanceEnum;
import org.voltdb.catalog.ColumnRef;
import org.voltdb.catalog.Constraint;
import org.voltdb.catalog.Database;
import org.voltdb.catalog.Table;
import org.voltdb.types.ConstraintType;

/**
 * Rewrites a read-only statement so that it also returns the primary key of every table row it returns, for read
 * provenance: the runtime records which records a function read (the Apiary paper, section 6.2). Only rows that are
 * actually returned are captured, not rows that are accessed incidentally (by a WHERE subquery, a join condition, a
 * window function); a query whose result rows are not table rows (aggregates, GROUP BY, DISTINCT, set operations,
 * subqueries in FROM) is reported as not capturable, with the reason.
 *
 * <p>The statement is parsed with Calcite (as a check of its shape only); the augmented text is the original text
 * with {@code , <alias-or-table>.<KEYCOLUMN> AS APIARY_PK_<n>} inserted right after the select list, so VoltDB plans
 * the statement the user wrote with extra columns at the end: the original columns keep their positions and names.
 * Columns are added table by table, in FROM-clause order, each table's key columns in primary-key order. In an outer
 * join, the key columns of a table whose side is null-extended are NULL in that row: that table read nothing there.
 */
final class ReadCapture {
  /** Prefix of the aliases of the added columns; a select list that already uses it is not capturable. */
  static final String ALIAS_PREFIX = "APIARY_PK_";

  /** VoltDB's aggregate functions, by name, in case Calcite's parser does not resolve one of them. */
  private static final Set<String> AGGREGATES = Set.of("COUNT", "SUM", "MIN", "MAX", "AVG", "APPROX_COUNT_DISTINCT");

  private static final Set<SqlKind> QUERIES = Set.of(SqlKind.SELECT, SqlKind.ORDER_BY, SqlKind.UNION,
      SqlKind.INTERSECT, SqlKind.EXCEPT, SqlKind.VALUES, SqlKind.WITH, SqlKind.EXPLICIT_TABLE);

  /**
   * VoltDB's identifiers: double quotes, case-insensitive, names kept as written (this class upper-cases them when
   * it looks up a table, as VoltDB does); {@code ?} parameters, LIMIT/OFFSET and {@code !=} are accepted.
   */
  private static final SqlParser.Config PARSER = SqlParser.configBuilder()
      .setQuoting(Quoting.DOUBLE_QUOTE)
      .setUnquotedCasing(Casing.UNCHANGED)
      .setQuotedCasing(Casing.UNCHANGED)
      .setCaseSensitive(false)
      .setConformance(SqlConformanceEnum.LENIENT)
      .build();

  private ReadCapture() {}

  /**
   * One added result column.
   *
   * @param table the table, upper-case as in the catalog
   * @param qualifier how the query names that occurrence of the table (its alias, or the table name), as written;
   *     in a self-join the same table appears under two qualifiers, and the columns of one qualifier form one key
   * @param column the primary-key column, as in the catalog
   * @param alias the result column that returns it ({@code APIARY_PK_<n>})
   */
  record KeyColumn(String table, String qualifier, String column, String alias) {}

  /** What {@link #augment} says about one statement. */
  sealed interface Result permits Augmented, NotCapturable {
    /** The statement as given. */
    String sql();
  }

  /**
   * The statement can be captured.
   *
   * @param sql the statement as given
   * @param augmentedSql the statement with the key columns added after its own result columns
   * @param keyColumns the added columns, in result order
   */
  record Augmented(String sql, String augmentedSql, List<KeyColumn> keyColumns) implements Result {
    Augmented {
      keyColumns = List.copyOf(keyColumns);
    }
  }

  /**
   * The statement cannot be captured (or is not a query).
   *
   * @param sql the statement as given
   * @param reason why, for the developer
   */
  record NotCapturable(String sql, String reason) implements Result {}

  /**
   * The primary-key columns of every base table of a compiled schema, in key order, by upper-case table name. A
   * table without a primary key maps to an empty list; materialized views are left out (their rows are aggregates
   * of table rows, not records).
   */
  static Map<String, List<String>> primaryKeys(Database database) {
    Map<String, List<String>> keys = new TreeMap<>();
    for (Table table : database.getTables()) {
      if (table.getMaterializer() != null) {
        continue;
      }
      List<String> columns = new ArrayList<>();
      for (Constraint constraint : table.getConstraints()) {
        if (constraint.getType() == ConstraintType.PRIMARY_KEY.getValue() && constraint.getIndex() != null) {
          List<ColumnRef> refs = new ArrayList<>();
          constraint.getIndex().getColumns().forEach(refs::add);
          refs.sort(Comparator.comparingInt(ColumnRef::getIndex));
          refs.forEach(r -> columns.add(r.getColumn().getTypeName().toUpperCase(Locale.ROOT)));
        }
      }
      keys.put(table.getTypeName().toUpperCase(Locale.ROOT), List.copyOf(columns));
    }
    return Map.copyOf(keys);
  }

  /**
   * Augments a statement and has VoltDB's planner check the result.
   *
   * @param planner plans the augmented SQL and throws {@link IllegalArgumentException} if it does not compile
   *     ({@code schemaPlanner::plan}); a statement whose augmented form does not plan is not capturable
   * @see #augment(String, Map)
   */
  static Result augment(String sql, Map<String, List<String>> primaryKeys, Consumer<String> planner) {
    Objects.requireNonNull(planner, "planner");
    Result result = augment(sql, primaryKeys);
    if (result instanceof Augmented augmented) {
      try {
        planner.accept(augmented.augmentedSql());
      } catch (IllegalArgumentException e) {
        return new NotCapturable(sql, "VoltDB cannot plan the query with its key columns added ("
            + augmented.augmentedSql() + "): " + e.getMessage());
      }
    }
    return result;
  }

  /**
   * Augments a statement.
   *
   * @param sql the statement, as the function declares it
   * @param primaryKeys the primary-key columns of each table by upper-case name, as {@link #primaryKeys(Database)}
   *     returns them: an empty list for a table without a primary key; a table that is absent is not capturable
   */
  static Result augment(String sql, Map<String, List<String>> primaryKeys) {
    Objects.requireNonNull(sql, "sql");
    Objects.requireNonNull(primaryKeys, "primaryKeys");
    return new Rewrite(sql, primaryKeys).run();
  }

  /** Thrown inside a rewrite to give up with a reason. */
  private static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;

    Refusal(String reason) {
      super(reason, null, false, false);
    }
  }

  /** One occurrence of a table in the FROM clause. */
  private record Source(String table, String qualifier) {}

  private static final class Rewrite {
    private final String sql;
    private final Map<String, List<String>> primaryKeys;
    private final int[] lineStarts;

    Rewrite(String sql, Map<String, List<String>> primaryKeys) {
      this.sql = sql;
      this.primaryKeys = primaryKeys;
      this.lineStarts = lineStarts(sql);
    }

    Result run() {
      try {
        return rewrite();
      } catch (Refusal r) {
        return new NotCapturable(sql, r.getMessage());
      }
    }

    private Result rewrite() throws Refusal {
      SqlNode node = parse();
      SqlNodeList orderBy = null;
      if (node instanceof SqlOrderBy order) {
        node = order.query;
        orderBy = order.orderList;
      }
      switch (node.getKind()) {
        case UNION, INTERSECT, EXCEPT -> throw new Refusal(node.getKind()
            + " combines the rows of several queries, so a result row is not one table row");
        case SELECT -> { }
        default -> throw new Refusal(QUERIES.contains(node.getKind())
            ? "not a plain SELECT (" + node.getKind() + ")"
            : "not a SELECT statement (" + node.getKind() + ")");
      }
      SqlSelect select = (SqlSelect) node;
      if (select.isDistinct()) {
        throw new Refusal("SELECT DISTINCT merges rows, so a result row is not one table row");
      }
      if (select.getGroup() != null && select.getGroup().size() > 0) {
        throw new Refusal("GROUP BY: each result row summarises a group of rows");
      }
      if (select.getHaving() != null) {
        throw new Refusal("HAVING makes it an aggregate query: a result row summarises rows");
      }
      String aggregate = aggregate(select.getSelectList());
      if (aggregate == null) {
        aggregate = aggregate(orderBy);
      }
      if (aggregate == null) {
        aggregate = aggregate(select.getOrderList());
      }
      if (aggregate != null) {
        throw new Refusal("aggregate function " + aggregate + ": a result row summarises rows it does not return");
      }
      if (containsQuery(select.getSelectList())) {
        throw new Refusal("subquery in the select list: it returns values of rows whose keys cannot be added");
      }
      if (select.getFrom() == null) {
        throw new Refusal("no FROM clause: it reads no table");
      }
      List<Source> sources = new ArrayList<>();
      collect(select.getFrom(), sources);
      checkAliases(select.getSelectList());

      List<KeyColumn> keys = new ArrayList<>();
      StringBuilder added = new StringBuilder();
      for (Source source : sources) {
        List<String> columns = primaryKeys.get(source.table());
        if (columns == null) {
          throw new Refusal(source.table() + " is not a table of the schema (views and unknown tables are not "
              + "capturable)");
        }
        if (columns.isEmpty()) {
          throw new Refusal("table " + source.table() + " has no primary key");
        }
        for (String column : columns) {
          String alias = ALIAS_PREFIX + keys.size();
          keys.add(new KeyColumn(source.table(), source.qualifier(), column, alias));
          added.append(", ").append(source.qualifier()).append('.').append(column).append(" AS ").append(alias);
        }
      }
      int at = endOfSelectList(select);
      String augmented = sql.substring(0, at) + added + sql.substring(at);
      return new Augmented(sql, augmented, keys);
    }

    private SqlNode parse() throws Refusal {
      // Calcite's parser takes one statement without the terminating semicolon VoltDB tolerates. Cutting a suffix
      // leaves every parser position valid in the original text.
      int end = sql.length();
      while (end > 0 && (Character.isWhitespace(sql.charAt(end - 1)) || sql.charAt(end - 1) == ';')) {
        end--;
      }
      try {
        return SqlParser.create(sql.substring(0, end), PARSER).parseQuery();
      } catch (SqlParseException e) {
        String message = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
        throw new Refusal("cannot parse the statement (" + message.strip() + ")");
      }
    }

    /** The tables of a FROM clause, left to right. */
    private void collect(SqlNode from, List<Source> sources) throws Refusal {
      if (from instanceof SqlJoin join) {
        collect(join.getLeft(), sources);
        collect(join.getRight(), sources);
      } else if (from instanceof SqlIdentifier id) {
        sources.add(new Source(tableName(id), text(id)));
      } else if (from.getKind() == SqlKind.AS && from instanceof SqlBasicCall as) {
        SqlNode table = as.operand(0);
        if (!(table instanceof SqlIdentifier id)) {
          throw refuseFromItem(table);
        }
        sources.add(new Source(tableName(id), text(as.operand(1))));
      } else {
        throw refuseFromItem(from);
      }
    }

    private static Refusal refuseFromItem(SqlNode item) {
      if (QUERIES.contains(item.getKind())) {
        return new Refusal("subquery in FROM: its rows are not table rows");
      }
      return new Refusal("unsupported FROM item (" + item.getKind() + ")");
    }

    private static String tableName(SqlIdentifier id) throws Refusal {
      if (!id.isSimple()) {
        throw new Refusal("qualified table name " + id + " (VoltDB tables have one-part names)");
      }
      return id.getSimple().toUpperCase(Locale.ROOT);
    }

    private void checkAliases(SqlNodeList selectList) throws Refusal {
      for (SqlNode item : selectList) {
        String name = null;
        if (item.getKind() == SqlKind.AS && item instanceof SqlCall as && as.operand(1) instanceof SqlIdentifier id) {
          name = id.getSimple();
        } else if (item instanceof SqlIdentifier id && !id.isStar()) {
          name = id.names.get(id.names.size() - 1);
        }
        if (name != null && name.toUpperCase(Locale.ROOT).startsWith(ALIAS_PREFIX)) {
          throw new Refusal("the select list already names a column " + name + ", and " + ALIAS_PREFIX
              + " is the prefix of the key columns Apiary adds");
        }
      }
    }

    /**
     * Where the added columns go: after the last token of the select list, which is the furthest end of any of its
     * nodes, or a closing parenthesis after it (Calcite leaves the parentheses around an expression out of its
     * position); the next token must be FROM.
     */
    private int endOfSelectList(SqlSelect select) throws Refusal {
      SqlParserPos last = null;
      for (SqlNode item : select.getSelectList()) {
        last = furthestEnd(item, last);
      }
      if (last == null) {
        throw new Refusal("cannot find the end of the select list");
      }
      int insertAt = offset(last.getEndLineNum(), last.getEndColumnNum()) + 1;
      int i = insertAt;
      while (i < sql.length()) {
        char c = sql.charAt(i);
        if (Character.isWhitespace(c)) {
          i++;
        } else if (sql.startsWith("--", i)) {
          int eol = sql.indexOf('\n', i);
          i = eol < 0 ? sql.length() : eol + 1;
        } else if (sql.startsWith("/*", i)) {
          int close = sql.indexOf("*/", i + 2);
          i = close < 0 ? sql.length() : close + 2;
        } else if (c == ')' || c == ']') {
          insertAt = ++i;
        } else {
          break;
        }
      }
      boolean from = sql.regionMatches(true, i, "FROM", 0, 4)
          && (i + 4 == sql.length() || !Character.isLetterOrDigit(sql.charAt(i + 4)) && sql.charAt(i + 4) != '_');
      SqlParserPos fromPos = select.getFrom().getParserPosition();
      if (!from || fromPos.getLineNum() > 0 && offset(fromPos.getLineNum(), fromPos.getColumnNum()) < i + 4) {
        throw new Refusal("cannot find the end of the select list");
      }
      return insertAt;
    }

    private static SqlParserPos furthestEnd(SqlNode node, SqlParserPos best) {
      if (node == null) {
        return best;
      }
      SqlParserPos pos = node.getParserPosition();
      if (pos != null && pos.getEndLineNum() > 0 && (best == null || pos.getEndLineNum() > best.getEndLineNum()
          || pos.getEndLineNum() == best.getEndLineNum() && pos.getEndColumnNum() > best.getEndColumnNum())) {
        best = pos;
      }
      if (node instanceof SqlNodeList list) {
        for (SqlNode child : list) {
          best = furthestEnd(child, best);
        }
      } else if (node instanceof SqlCall call) {
        for (SqlNode child : call.getOperandList()) {
          best = furthestEnd(child, best);
        }
      }
      return best;
    }

    /** The text of a node as written (quotes included). */
    private String text(SqlNode node) throws Refusal {
      SqlParserPos pos = node.getParserPosition();
      return sql.substring(offset(pos.getLineNum(), pos.getColumnNum()),
          offset(pos.getEndLineNum(), pos.getEndColumnNum()) + 1);
    }

    /** String offset of a one-based line and column (Calcite counts a tab as one column). */
    private int offset(int line, int column) throws Refusal {
      int offset = line < 1 || line > lineStarts.length ? -1 : lineStarts[line - 1] + column - 1;
      if (offset < 0 || offset >= sql.length()) {
        throw new Refusal("cannot map the parser's position " + line + ":" + column + " to the text");
      }
      return offset;
    }

    /** Line starts as Calcite's lexer counts lines: LF, CRLF and CR each end one. */
    private static int[] lineStarts(String s) {
      List<Integer> starts = new ArrayList<>();
      starts.add(0);
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c == '\n' || c == '\r' && (i + 1 == s.length() || s.charAt(i + 1) != '\n')) {
          starts.add(i + 1);
        }
      }
      return starts.stream().mapToInt(Integer::intValue).toArray();
    }
  }

  /**
   * The first aggregate function a clause applies to the rows of this query, or null: a subquery's aggregates and
   * window functions (which keep one result row per table row) do not count.
   */
  private static String aggregate(SqlNode node) {
    if (node == null || QUERIES.contains(node.getKind()) || node.getKind() == SqlKind.OVER) {
      return null;
    }
    if (node instanceof SqlNodeList list) {
      for (SqlNode child : list) {
        String found = aggregate(child);
        if (found != null) {
          return found;
        }
      }
    } else if (node instanceof SqlCall call) {
      String name = call.getOperator().getName().toUpperCase(Locale.ROOT);
      if (call.getOperator().isAggregator() || AGGREGATES.contains(name)) {
        return name;
      }
      for (SqlNode child : call.getOperandList()) {
        String found = aggregate(child);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  private static boolean containsQuery(SqlNode node) {
    if (node == null) {
      return false;
    }
    if (QUERIES.contains(node.getKind())) {
      return true;
    }
    if (node instanceof SqlNodeList list) {
      for (SqlNode child : list) {
        if (containsQuery(child)) {
          return true;
        }
      }
    } else if (node instanceof SqlCall call) {
      for (SqlNode child : call.getOperandList()) {
        if (containsQuery(child)) {
          return true;
        }
      }
    }
    return false;
  }
}
