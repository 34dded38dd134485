package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.Optional;

/** The Java types a partition key may have, each with the one VoltDB column type it must match. */
public enum PartitionKeyType {
  BIGINT(Long.class, "long"),
  INTEGER(Integer.class, "int"),
  SMALLINT(Short.class, "short"),
  TINYINT(Byte.class, "byte"),
  VARCHAR(String.class, "String"),
  VARBINARY(byte[].class, "byte[]");

  private final Class<?> javaType;
  private final String procedureParameterType;

  PartitionKeyType(Class<?> javaType, String procedureParameterType) {
    this.javaType = javaType;
    this.procedureParameterType = procedureParameterType;
  }

  public Class<?> javaType() {
    return javaType;
  }

  /** The VoltDB column type name, as the planner reports it. */
  public String columnType() {
    return name();
  }

  /** The Java type of the stored procedure's partitioning parameter. */
  public String procedureParameterType() {
    return procedureParameterType;
  }

  public static Optional<PartitionKeyType> forJavaType(Class<?> type) {
    return Arrays.stream(values()).filter(t -> t.javaType == type).findFirst();
  }

  public static Optional<PartitionKeyType> forColumnType(String columnType) {
    String name = "STRING".equals(columnType) ? "VARCHAR" : columnType;
    return Arrays.stream(values()).filter(t -> t.name().equals(name)).findFirst();
  }

  /** Converts a key received as JSON to this type, or explains why it cannot. */
  public Object fromJson(JsonNode key, String what) {
    return Json.convert(key, javaType, what);
  }

  /** Checks that a key already given as a Java object has this type. */
  public Object check(Object key, String what) {
    if (key == null) {
      throw new IllegalArgumentException(what + " is null; a local function needs a " + javaType.getSimpleName() + " partition key");
    }
    if (!javaType.isInstance(key)) {
      throw new IllegalArgumentException(what + " has type " + key.getClass().getSimpleName()
          + " but the function's partition key type is " + javaType.getSimpleName());
    }
    return key;
  }
}
