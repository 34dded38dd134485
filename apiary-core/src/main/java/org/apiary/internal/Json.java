package org.apiary.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;

/** The one JSON mapper Apiary uses for function inputs, outputs and wire messages. Immutable once built. */
public final class Json {
  /** Shared, thread-safe, configured once here and never changed. */
  public static final ObjectMapper MAPPER = JsonMapper.builder()
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .build();

  private Json() {}

  /** A Java value as a JSON tree. */
  public static JsonNode tree(Object value) {
    // The common scalars directly: valueToTree serializes through a token buffer and back.
    if (value instanceof Long l) {
      return LongNode.valueOf(l);
    }
    if (value instanceof String text) {
      return TextNode.valueOf(text);
    }
    if (value instanceof Integer i) {
      return IntNode.valueOf(i);
    }
    if (value instanceof Boolean b) {
      return BooleanNode.valueOf(b);
    }
    if (value == null) {
      return NullNode.getInstance();
    }
    try {
      return MAPPER.valueToTree(value);
    } catch (IllegalArgumentException e) {
      throw notSerializable(value, e);
    }
  }

  private static IllegalArgumentException notSerializable(Object value, Exception e) {
    return new IllegalArgumentException("value of type " + value.getClass().getName()
        + " cannot be serialized to JSON: " + e.getMessage(), e);
  }

  /**
   * A value a function returns, ready to be encoded with its outputs: scalars and JSON trees as {@link #tree}; any
   * other value written to JSON once, and kept as those bytes ({@link ForwardedJson}) if it is an array or an object,
   * instead of being built into a tree and walked again. Its JSON is what {@link #tree} would have written.
   */
  public static JsonNode output(Object value) {
    if (value == null || value instanceof JsonNode || value instanceof String || value instanceof Number
        || value instanceof Boolean || value instanceof Character || value instanceof Enum<?>) {
      return tree(value);
    }
    byte[] bytes;
    try {
      bytes = MAPPER.writeValueAsBytes(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
      throw notSerializable(value, e);
    }
    if (bytes.length > 0 && (bytes[0] == '[' || bytes[0] == '{')) {
      return ForwardedJson.node(bytes, bytes[0] == '[');
    }
    return parse(bytes); // a custom serializer that writes a scalar
  }

  /**
   * A JSON tree as a Java value.
   *
   * @param what names the value in the error message, for example "input on edge 'source' of function 'inc'"
   * @throws IllegalArgumentException naming {@code what} and {@code type} if the conversion fails
   */
  @SuppressWarnings("unchecked")
  public static <T> T convert(JsonNode node, Class<T> type, String what) {
    if (node == null || node.isNull()) {
      if (type.isPrimitive()) {
        throw new IllegalArgumentException(what + " is null but a " + type.getName() + " is required");
      }
      return null;
    }
    if (isIntegral(type) && !node.isIntegralNumber()) {
      throw new IllegalArgumentException(what + " must be an integer (" + type.getSimpleName() + ") but is " + describe(node));
    }
    if ((type == String.class) && !node.isTextual()) {
      throw new IllegalArgumentException(what + " must be a string but is " + describe(node));
    }
    // The common scalars directly (treeToValue runs a deserializer over a token stream of the tree). Integers out of
    // the type's range, and everything else, go through Jackson, which reports them as it always has.
    if (type == Long.class || type == long.class) {
      if (node.canConvertToLong()) {
        return (T) (Long) node.longValue();
      }
    } else if (type == Integer.class || type == int.class) {
      if (node.canConvertToInt()) {
        return (T) (Integer) node.intValue();
      }
    } else if (type == String.class) {
      return (T) node.textValue();
    } else if ((type == Boolean.class || type == boolean.class) && node.isBoolean()) {
      return (T) (Boolean) node.booleanValue();
    }
    try {
      return MAPPER.treeToValue(node, type);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(what + " cannot be read as " + type.getSimpleName() + ": " + e.getOriginalMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(what + " cannot be read as " + type.getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  private static boolean isIntegral(Class<?> type) {
    return type == Long.class || type == long.class || type == Integer.class || type == int.class
        || type == Short.class || type == short.class || type == Byte.class || type == byte.class;
  }

  private static String describe(JsonNode node) {
    String text = node.toString();
    return node.getNodeType().name().toLowerCase() + " " + (text.length() > 60 ? text.substring(0, 60) + "..." : text);
  }

  /**
   * Writes a JSON tree to a streaming generator as Jackson's data binding would, without creating a serializer
   * provider per call (the hot paths write a few small trees per message).
   */
  public static void writeTree(JsonGenerator g, JsonNode node) throws IOException {
    switch (node.getNodeType()) {
      case OBJECT -> {
        g.writeStartObject();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> field = it.next();
          g.writeFieldName(field.getKey());
          writeTree(g, field.getValue());
        }
        g.writeEndObject();
      }
      case ARRAY -> {
        g.writeStartArray();
        for (JsonNode element : node) {
          writeTree(g, element);
        }
        g.writeEndArray();
      }
      case STRING -> g.writeString(node.textValue());
      case BOOLEAN -> g.writeBoolean(node.booleanValue());
      case NULL, MISSING -> g.writeNull();
      case NUMBER -> {
        switch (node.numberType()) {
          case INT -> g.writeNumber(node.intValue());
          case LONG -> g.writeNumber(node.longValue());
          case BIG_INTEGER -> g.writeNumber(node.bigIntegerValue());
          case FLOAT -> g.writeNumber(node.floatValue());
          case DOUBLE -> g.writeNumber(node.doubleValue());
          default -> MAPPER.writeTree(g, node);
        }
      }
      case POJO -> {
        ForwardedJson forwarded = ForwardedJson.of(node);
        if (forwarded != null) {
          forwarded.write(g);
        } else {
          MAPPER.writeTree(g, node);
        }
      }
      default -> MAPPER.writeTree(g, node); // binary, exact decimals: as data binding writes them
    }
  }

  /**
   * Reads the JSON value at the parser's current token as a tree, as Jackson's data binding would (integers as the
   * smallest of int, long and BigInteger that holds them, other numbers as doubles), without creating a
   * deserialization context per call.
   */
  public static JsonNode readTree(JsonParser p) throws IOException {
    JsonNodeFactory nodes = JsonNodeFactory.instance;
    JsonToken token = p.currentToken();
    if (token == null) {
      throw new JsonParseException(p, "a JSON value was expected, found the end of the input");
    }
    switch (token) {
      case START_OBJECT -> {
        ObjectNode object = nodes.objectNode();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          p.nextToken();
          object.set(name, readTree(p));
        }
        return object;
      }
      case START_ARRAY -> {
        ArrayNode array = nodes.arrayNode();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          array.add(readTree(p));
        }
        return array;
      }
      case VALUE_STRING -> {
        return TextNode.valueOf(p.getText());
      }
      case VALUE_NUMBER_INT -> {
        return switch (p.getNumberType()) {
          case INT -> IntNode.valueOf(p.getIntValue());
          case LONG -> LongNode.valueOf(p.getLongValue());
          default -> nodes.numberNode(p.getBigIntegerValue());
        };
      }
      case VALUE_TRUE -> {
        return BooleanNode.TRUE;
      }
      case VALUE_FALSE -> {
        return BooleanNode.FALSE;
      }
      case VALUE_NULL -> {
        return NullNode.getInstance();
      }
      default -> {
        return MAPPER.readTree(p); // floats and anything rarer: as data binding reads them
      }
    }
  }

  /**
   * The text of the scalar at the parser's current token ({@code null} for JSON null; numbers and booleans as their
   * text, as data binding coerces them into a String).
   *
   * @throws JsonParseException naming {@code field} if the value is an object or an array
   */
  public static String text(JsonParser p, String field) throws IOException {
    JsonToken token = p.currentToken();
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    if (token == null || !token.isScalarValue()) {
      throw new JsonParseException(p, "field '" + field + "' must be a string, not " + token);
    }
    return p.getText();
  }

  /** Serializes to UTF-8 JSON bytes. */
  public static byte[] bytes(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("value cannot be serialized to JSON: " + e.getOriginalMessage(), e);
    }
  }

  /** Parses UTF-8 JSON bytes into a tree. */
  public static JsonNode parse(byte[] bytes) {
    try {
      return MAPPER.readTree(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException("malformed JSON: " + e.getMessage(), e);
    }
  }

  /**
   * Parses UTF-8 JSON bytes into a Java type.
   *
   * @throws IllegalArgumentException naming {@code what} if the bytes are not JSON of that shape
   */
  public static <T> T read(byte[] bytes, Class<T> type, String what) {
    try {
      return MAPPER.readValue(bytes, type);
    } catch (IOException e) {
      throw new IllegalArgumentException(what + " is not valid: " + e.getMessage(), e);
    }
  }
}
