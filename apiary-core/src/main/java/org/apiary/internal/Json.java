package org.apiary.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;

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
    try {
      return MAPPER.valueToTree(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("value of type " + value.getClass().getName()
          + " cannot be serialized to JSON: " + e.getMessage(), e);
    }
  }

  /**
   * A JSON tree as a Java value.
   *
   * @param what names the value in the error message, for example "input on edge 'source' of function 'inc'"
   * @throws IllegalArgumentException naming {@code what} and {@code type} if the conversion fails
   */
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
