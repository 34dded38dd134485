package org.apiary.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apiary.internal.Output;

/**
 * The encoding of the outputs a function execution returns to its caller (and records): a JSON array of objects
 * {@code {"edge", "partitionKey", "value"}}, as Jackson's data binding writes {@link Output}s. Written and read with
 * the streaming API, because it runs on the database's site threads once per execution; records stored by earlier
 * versions read the same.
 */
public final class FunctionOutputs {
  private FunctionOutputs() {}

  public static byte[] encode(List<Output> outputs) {
    try {
      ByteArrayBuilder out = new ByteArrayBuilder(128);
      try (JsonGenerator g = Json.MAPPER.createGenerator(out)) {
        write(g, outputs);
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new IllegalArgumentException("function outputs cannot be encoded: " + e.getMessage(), e);
    }
  }

  public static List<Output> decode(byte[] bytes) {
    return decode(bytes, false);
  }

  /**
   * Decodes outputs for a caller that only routes their values (a frontend): a value that is an array or an object
   * is kept as its bytes ({@link ForwardedJson}) instead of becoming a tree; partition keys and scalars are parsed.
   */
  public static List<Output> decodeForwarding(byte[] bytes) {
    return decode(bytes, true);
  }

  private static List<Output> decode(byte[] bytes, boolean forwarding) {
    try (JsonParser p = Json.MAPPER.createParser(bytes)) {
      p.nextToken();
      return read(p, forwarding ? bytes : null);
    } catch (IOException e) {
      throw new IllegalStateException("malformed function outputs from the database: " + e.getMessage(), e);
    }
  }

  /** Writes outputs as a JSON array (also inside a {@link org.apiary.internal.wire.WireReply}). */
  public static void write(JsonGenerator g, List<Output> outputs) throws IOException {
    g.writeStartArray();
    for (Output o : outputs) {
      g.writeStartObject();
      g.writeStringField("edge", o.edge());
      g.writeFieldName("partitionKey");
      if (o.partitionKey() == null) {
        g.writeNull();
      } else {
        Json.writeTree(g, o.partitionKey());
      }
      g.writeFieldName("value");
      Json.writeTree(g, o.value());
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  private static JsonNode forwarded(JsonParser p, byte[] source) throws IOException {
    boolean array = p.currentToken() == JsonToken.START_ARRAY;
    long from = p.currentTokenLocation().getByteOffset();
    p.skipChildren();
    long to = p.currentLocation().getByteOffset();
    if (from < 0 || to > source.length || from >= to) {
      throw new JsonParseException(p, "cannot tell where an output's value starts and ends");
    }
    return ForwardedJson.node(source, (int) from, (int) to, array);
  }

  /** Reads the JSON array of outputs that starts at the parser's current token. */
  public static List<Output> read(JsonParser p) throws IOException {
    return read(p, null);
  }

  /** As {@link #read(JsonParser)}; with {@code source}, the parser's whole input, containers are forwarded. */
  private static List<Output> read(JsonParser p, byte[] source) throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw new JsonParseException(p, "expected an array of outputs but found " + p.currentToken());
    }
    List<Output> outputs = new ArrayList<>();
    while (p.nextToken() == JsonToken.START_OBJECT) {
      String edge = null;
      JsonNode key = null;
      JsonNode value = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        switch (field) {
          case "edge" -> edge = Json.text(p, "edge");
          case "partitionKey" -> key = Json.readTree(p);
          case "value" -> value = source != null && (p.currentToken() == JsonToken.START_ARRAY
              || p.currentToken() == JsonToken.START_OBJECT) ? forwarded(p, source) : Json.readTree(p);
          default -> p.skipChildren();
        }
      }
      if (edge == null || value == null) {
        throw new JsonParseException(p, "an output needs an edge and a value");
      }
      outputs.add(new Output(edge, key, value));
    }
    if (p.currentToken() != JsonToken.END_ARRAY) {
      throw new JsonParseException(p, "expected an output object but found " + p.currentToken());
    }
    return outputs;
  }
}
