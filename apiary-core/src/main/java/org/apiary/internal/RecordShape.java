package org.apiary.internal;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * The JSON fields of a Java record an edge carries, so a frontend can refuse a client's argument of the wrong shape
 * (a field missing, unknown or of the wrong kind) before anything runs, without loading the application's classes.
 * A field of a primitive type must be present and not null (Jackson cannot map null into it); any other field may be
 * left out or null.
 *
 * @param type the record's simple name, for messages
 * @param fields its components, in declaration order
 * @param ignoresUnknown whether the record accepts unknown fields ({@code @JsonIgnoreProperties(ignoreUnknown =
 *     true)}), so they are not refused
 */
public record RecordShape(String type, List<Field> fields,
                          boolean ignoresUnknown) {
  /** Records nested deeper than this are checked only for being objects. */
  private static final int MAX_DEPTH = 8;

  /**
   * A record component.
   *
   * @param name its JSON name
   * @param kind the JSON shape of its values
   * @param required whether it must be present and not null (a primitive)
   * @param shape its own fields if it is a record, else {@code null}
   */
  public record Field(String name, ValueKind kind, boolean required,
                      @JsonInclude(JsonInclude.Include.NON_NULL) RecordShape shape) {}

  public RecordShape {
    fields = List.copyOf(fields);
  }

  /** The shape of a record class, or {@code null} for any other type. */
  public static RecordShape of(Class<?> type) {
    return of(type, new HashSet<>(), 0);
  }

  private static RecordShape of(Class<?> type, Set<Class<?>> enclosing, int depth) {
    if (type == null || !type.isRecord() || depth > MAX_DEPTH || !enclosing.add(type)) {
      return null;
    }
    List<Field> fields = new ArrayList<>();
    for (RecordComponent c : type.getRecordComponents()) {
      // @JsonProperty on a component lands on its accessor, field and constructor parameter, not the component.
      JsonProperty property = c.getAccessor().getAnnotation(JsonProperty.class);
      String name = property != null && !property.value().isEmpty() ? property.value() : c.getName();
      fields.add(new Field(name, ValueKind.of(c.getType()), c.getType().isPrimitive(),
          of(c.getType(), enclosing, depth + 1)));
    }
    enclosing.remove(type);
    JsonIgnoreProperties ignore = type.getAnnotation(JsonIgnoreProperties.class);
    return new RecordShape(type.getSimpleName(), fields, ignore != null && ignore.ignoreUnknown());
  }

  /**
   * What is wrong with a value for this record, or {@code null} if it fits: the first field missing, unknown or of
   * the wrong kind, named by its path (for example {@code 'note.priority'}). A value that is not an object (or is
   * null) is left to {@link ValueKind#accepts}.
   */
  public String mismatch(JsonNode value) {
    return mismatch(value, "");
  }

  private String mismatch(JsonNode value, String prefix) {
    if (value == null || !value.isObject()) {
      return null;
    }
    if (!ignoresUnknown) {
      for (Iterator<String> names = value.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        if (field(name) == null) {
          return "field '" + prefix + name + "' is not a field of " + type + "; its fields are " + describe();
        }
      }
    }
    for (Field f : fields) {
      JsonNode v = value.get(f.name());
      if (v == null || v.isNull()) {
        if (f.required()) {
          return "field '" + prefix + f.name() + "' (" + f.kind().describe() + ", required) is "
              + (v == null ? "missing" : "null") + "; " + type + " has the fields " + describe();
        }
        continue;
      }
      if (!f.kind().accepts(v)) {
        return "field '" + prefix + f.name() + "' is " + ValueKind.describe(v) + " but must be " + f.kind().describe();
      }
      if (f.shape() != null) {
        String nested = f.shape().mismatch(v, prefix + f.name() + ".");
        if (nested != null) {
          return nested;
        }
      }
    }
    return null;
  }

  private Field field(String name) {
    for (Field f : fields) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    return null;
  }

  /** The fields as a message shows them: {@code {product: an integer, note: {text: a string, ...}}}. */
  public String describe() {
    StringBuilder b = new StringBuilder("{");
    for (Field f : fields) {
      b.append(b.length() == 1 ? "" : ", ").append(f.name()).append(": ")
          .append(f.shape() != null ? f.shape().describe() : f.kind().describe());
      if (f.required()) {
        b.append(" (required)");
      }
    }
    return b.append('}').toString();
  }
}
