package org.apiary.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.util.List;
import org.apiary.Output;

/** The encoding of the outputs a function execution returns to its caller. */
public final class FunctionOutputs {
  private static final TypeReference<List<Output>> LIST = new TypeReference<>() {};

  private FunctionOutputs() {}

  public static byte[] encode(List<Output> outputs) {
    return Json.bytes(outputs);
  }

  public static List<Output> decode(byte[] bytes) {
    try {
      return Json.MAPPER.readValue(bytes, LIST);
    } catch (IOException e) {
      throw new IllegalStateException("malformed function outputs from the database: " + e.getMessage(), e);
    }
  }
}
