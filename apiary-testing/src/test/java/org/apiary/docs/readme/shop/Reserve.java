package org.apiary.docs.readme.shop;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Takes the ordered items out of one product's stock (its partition) and returns each line with its total. */
public class Reserve extends LocalFunction<Long> {
  static final Statement TAKE = Statement.of(
      "UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?");
  static final Statement PRICE = Statement.of("SELECT price FROM products WHERE id = ?");

  @Override
  protected void run() {
    for (Line line : retrieveInputs("lines", Line.class)) {
      queueSQL(TAKE, line.quantity(), partitionKey(), line.quantity());
      queueSQL(PRICE, partitionKey());
      var r = executeSQL();
      if (r.get(1).isEmpty()) {
        throw new IllegalStateException("no product " + partitionKey());
      }
      if (r.get(0).modifiedRowCount() == 0) {
        throw new IllegalStateException("out of stock: product " + partitionKey() + " has fewer than "
            + line.quantity());
      }
      long price = r.get(1).rows().get(0).getLong("price");
      returnOutput(new Line(line.order(), line.customer(), line.product(), line.quantity(), price * line.quantity()));
    }
  }
}
