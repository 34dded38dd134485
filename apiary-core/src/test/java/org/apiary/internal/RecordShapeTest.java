package org.apiary.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A record's fields as the frontend checks a client's argument against them (issue 44, a). */
class RecordShapeTest {
  record Item(long product, @JsonProperty("qty") int quantity, String label, List<String> tags) {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  record Lenient(long id) {}

  record Chain(long id, Chain next) {}

  private static JsonNode json(String text) {
    return Json.parse(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  void fieldsAreCheckedByNameKindAndPresence() {
    RecordShape item = RecordShape.of(Item.class);
    assertNull(item.mismatch(json("{\"product\":1,\"qty\":2}")), "optional fields may be left out");
    assertNull(item.mismatch(json("{\"product\":1,\"qty\":2,\"label\":null,\"tags\":[\"a\"]}")));
    assertTrue(item.mismatch(json("{\"qty\":2}")).startsWith("field 'product' (an integer, required) is missing"));
    assertTrue(item.mismatch(json("{\"product\":null,\"qty\":2}")).contains("'product' (an integer, required) is null"));
    assertTrue(item.mismatch(json("{\"product\":1,\"quantity\":2}")).startsWith("field 'quantity' is not a field of "
        + "Item; its fields are {product: an integer (required), qty: an integer (required), label: a string, tags: "
        + "an array}"), "Jackson's name for the component is qty");
    assertEquals("field 'label' is the integer 5 but must be a string",
        item.mismatch(json("{\"product\":1,\"qty\":2,\"label\":5}")));
    assertNull(item.mismatch(json("[1]")), "not an object: left to ValueKind");
  }

  @Test
  void unknownFieldsPassWhereTheRecordIgnoresThemAndRecursionStops() {
    assertNull(RecordShape.of(Lenient.class).mismatch(json("{\"id\":1,\"extra\":true}")));
    RecordShape chain = RecordShape.of(Chain.class);
    assertNull(chain.fields().get(1).shape(), "a record inside itself is checked only as an object");
    assertNull(RecordShape.of(String.class));
  }

  @Test
  void theShapeSurvivesJson() {
    RecordShape item = RecordShape.of(Item.class);
    assertEquals(item, Json.convert(Json.MAPPER.valueToTree(item), RecordShape.class, "shape"));
  }
}
