package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Map;

/**
 * The JSON shape of the values an edge carries, derived from the Java type a graph declares for it, so a frontend
 * can check a client's arguments without loading the application's classes.
 */
public enum ValueKind {
  INTEGER, NUMBER, STRING, BOOLEAN, ARRAY, OBJECT, ANY;

  /** The kind of values of a Java type. */
  public static ValueKind of(Class<?> type) {
    if (type == null || type == Object.class || JsonNode.class.isAssignableFrom(type)) {
      return ANY;
    }
    if (type == Long.class || type == long.class || type == Integer.class || type == int.class
        || type == Short.class || type == short.class || type == Byte.class || type == byte.class
        || type == BigInteger.class) {
      return INTEGER;
    }
    if (type == Double.class || type == double.class || type == Float.class || type == float.class
        || type == BigDecimal.class || type == Number.class) {
      return NUMBER;
    }
    if (type == String.class || type == Character.class || type == char.class || type.isEnum()) {
      return STRING;
    }
    if (type == Boolean.class || type == boolean.class) {
      return BOOLEAN;
    }
    if ((type.isArray() && type != byte[].class) || Collection.class.isAssignableFrom(type)) {
      return ARRAY;
    }
    if (type == byte[].class) {
      return STRING; // Jackson writes byte[] as base64 text
    }
    if (Map.class.isAssignableFrom(type) || !type.isPrimitive()) {
      return OBJECT;
    }
    return ANY;
  }

  /** Whether a JSON value has this shape; JSON null fits every kind. */
  public boolean accepts(JsonNode value) {
    if (value == null || value.isNull()) {
      return true;
    }
    ForwardedJson forwarded = ForwardedJson.of(value);
    if (forwarded != null) {
      return this == ANY || this == (forwarded.isArray() ? ARRAY : OBJECT);
    }
    return switch (this) {
      case INTEGER -> value.isIntegralNumber();
      case NUMBER -> value.isNumber();
      case STRING -> value.isTextual();
      case BOOLEAN -> value.isBoolean();
      case ARRAY -> value.isArray();
      case OBJECT -> value.isObject();
      case ANY -> true;
    };
  }

  /** How the kind reads in an error message. */
  public String describe() {
    return switch (this) {
      case INTEGER -> "an integer";
      case NUMBER -> "a number";
      case STRING -> "a string";
      case BOOLEAN -> "a boolean";
      case ARRAY -> "an array";
      case OBJECT -> "an object";
      case ANY -> "any value";
    };
  }

  /** How a JSON value's shape reads in an error message. */
  public static String describe(JsonNode value) {
    if (value == null || value.isNull()) {
      return "null";
    }
    if (value.isIntegralNumber()) {
      return "the integer " + value;
    }
    if (value.isNumber()) {
      return "the number " + value;
    }
    if (value.isTextual()) {
      return "the string " + value;
    }
    if (value.isBoolean()) {
      return "the boolean " + value;
    }
    ForwardedJson forwarded = ForwardedJson.of(value);
    return (forwarded != null ? forwarded.isArray() : value.isArray()) ? "an array" : "an object";
  }
}
