package org.apiary.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.node.POJONode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A JSON array or object kept as its UTF-8 bytes instead of a tree: a value a function returned, written to JSON
 * once on the site ({@link Json#output}), or one a frontend only routes (to the reply, or into the next function's
 * invocation) and so need not parse and write out again. It travels as a
 * {@link POJONode} whose writers ({@link Json#writeTree}, Jackson's data binding) copy the bytes verbatim; its shape
 * (array or object) is kept so edge types can still be checked. The bytes come from a parser that read them as
 * well-formed JSON.
 */
public final class ForwardedJson implements JsonSerializable, SerializableString {
  private final byte[] utf8;
  private final boolean array;

  private ForwardedJson(byte[] utf8, boolean array) {
    this.utf8 = utf8;
    this.array = array;
  }

  /** A node holding {@code source[from, to)}, a complete JSON array or object. */
  static JsonNode node(byte[] source, int from, int to, boolean array) {
    return new POJONode(new ForwardedJson(Arrays.copyOfRange(source, from, to), array));
  }

  /** A node holding all of {@code utf8}, a complete JSON array or object; the array is not copied. */
  static JsonNode node(byte[] utf8, boolean array) {
    return new POJONode(new ForwardedJson(utf8, array));
  }

  /** The forwarded value a node holds, or {@code null} if it is an ordinary tree. */
  public static ForwardedJson of(JsonNode node) {
    return node instanceof POJONode p && p.getPojo() instanceof ForwardedJson f ? f : null;
  }

  /** Whether the value is a JSON array (else an object). */
  public boolean isArray() {
    return array;
  }

  /** The value parsed into a tree, for code that must look inside it. */
  public JsonNode tree() {
    return Json.parse(utf8);
  }

  void write(JsonGenerator g) throws IOException {
    g.writeRawValue((SerializableString) this);
  }

  @Override
  public void serialize(JsonGenerator g, SerializerProvider provider) throws IOException {
    write(g);
  }

  @Override
  public void serializeWithType(JsonGenerator g, SerializerProvider provider, TypeSerializer type) throws IOException {
    write(g);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ForwardedJson f && Arrays.equals(utf8, f.utf8);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(utf8);
  }

  @Override
  public String toString() {
    return getValue();
  }

  // SerializableString: the unquoted forms are the raw JSON; the quoted ones (never used for a value) quote its text.

  @Override
  public String getValue() {
    return new String(utf8, StandardCharsets.UTF_8);
  }

  @Override
  public int charLength() {
    return getValue().length();
  }

  @Override
  public byte[] asUnquotedUTF8() {
    return utf8.clone();
  }

  @Override
  public int appendUnquotedUTF8(byte[] buffer, int offset) {
    if (offset + utf8.length > buffer.length) {
      return -1;
    }
    System.arraycopy(utf8, 0, buffer, offset, utf8.length);
    return utf8.length;
  }

  @Override
  public int appendUnquoted(char[] buffer, int offset) {
    String s = getValue();
    if (offset + s.length() > buffer.length) {
      return -1;
    }
    s.getChars(0, s.length(), buffer, offset);
    return s.length();
  }

  @Override
  public int writeUnquotedUTF8(OutputStream out) throws IOException {
    out.write(utf8);
    return utf8.length;
  }

  @Override
  public int putUnquotedUTF8(ByteBuffer buffer) {
    if (buffer.remaining() < utf8.length) {
      return -1;
    }
    buffer.put(utf8);
    return utf8.length;
  }

  private SerializableString quoted() {
    return new SerializedString(getValue());
  }

  @Override
  public char[] asQuotedChars() {
    return quoted().asQuotedChars();
  }

  @Override
  public byte[] asQuotedUTF8() {
    return quoted().asQuotedUTF8();
  }

  @Override
  public int appendQuotedUTF8(byte[] buffer, int offset) {
    return quoted().appendQuotedUTF8(buffer, offset);
  }

  @Override
  public int appendQuoted(char[] buffer, int offset) {
    return quoted().appendQuoted(buffer, offset);
  }

  @Override
  public int writeQuotedUTF8(OutputStream out) throws IOException {
    return quoted().writeQuotedUTF8(out);
  }

  @Override
  public int putQuotedUTF8(ByteBuffer buffer) throws IOException {
    return quoted().putQuotedUTF8(buffer);
  }
}
