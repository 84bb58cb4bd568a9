package dev.sluice.core.http;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * A whole response the admission step made (a challenge page, its verdicts): a status, header
 * fields and a body, which every adapter writes as it is, with nothing of its own added but the
 * framing ({@code Content-Length}, {@code Connection}). Immutable.
 */
public final class Answer {

  private final int status;
  private final String[] fields;
  private final byte[] body;

  /**
   * {@code fields}: names and values in turn ({@code "content-type", "text/html"...}); a name
   * may repeat ({@code set-cookie}).
   */
  public Answer(int status, List<String> fields, byte[] body) {
    if (status < 200 || status > 599) {
      throw new IllegalArgumentException("status : " + status + " (expected: 200..599)");
    }
    if (fields.size() % 2 != 0) {
      throw new IllegalArgumentException("fields : " + fields.size()
          + " strings (expected: names and values in pairs)");
    }
    this.status = status;
    this.fields = fields.toArray(new String[0]);
    this.body = body;
  }

  public int status() {
    return status;
  }

  /** Header fields in order; a name may come more than once. */
  public int fieldCount() {
    return fields.length / 2;
  }

  public String fieldName(int i) {
    return fields[2 * i];
  }

  public String fieldValue(int i) {
    return fields[2 * i + 1];
  }

  /** The first value of {@code name} (case ignored), or null. */
  public String field(String name) {
    for (int i = 0; i < fields.length; i += 2) {
      if (fields[i].equalsIgnoreCase(name)) {
        return fields[i + 1];
      }
    }
    return null;
  }

  /** Writes every field to {@code out} with {@link Headers#add}, so repeated names stay. */
  public void fields(Headers out) {
    for (int i = 0; i < fields.length; i += 2) {
      out.add(fields[i], fields[i + 1]);
    }
  }

  public int bodyLength() {
    return body.length;
  }

  /** The body, read-only. */
  public ByteBuffer body() {
    return ByteBuffer.wrap(body).asReadOnlyBuffer();
  }

  /** A copy of the body. */
  public byte[] bodyBytes() {
    return body.clone();
  }

  @Override
  public String toString() {
    return "Answer{" + status + ", " + Arrays.toString(fields) + ", " + body.length + " bytes}";
  }
}
