package org.apiary.benchmarks.shop;

import java.util.ArrayList;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** A page of eight catalog items of one category, from a given item on (the catalog is replicated). */
public class Browse extends LocalFunction<Long> {
  static final Statement PAGE = Statement.of("SELECT item_id, name, description, price_cents FROM shop_items "
      + "WHERE category = ? AND item_id >= ? ORDER BY item_id LIMIT 8");

  /** An item as a catalog page shows it. */
  public record Item(long itemId, String name, String description, long priceCents) {}

  @Override
  protected void run() {
    List<Long> args = retrieveInputs(SOURCE, Long.class);
    queueSQL(PAGE, args.get(0), args.get(1));
    QueryResult r = executeSQL().get(0);
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "shop_items", "ITEM_ID", r);
    }
    List<Item> page = new ArrayList<>();
    for (Row row : r) {
      page.add(new Item(row.getLong("item_id"), row.getString("name"), row.getString("description"),
          row.getLong("price_cents")));
    }
    returnOutput(page);
  }
}
