package dev.sluice.gateway;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A WebSocket client on a plain socket that behaves like an abusive one: it writes frames in a
 * tight loop without reading, keeps writing after the server has refused it, and only then reads
 * what came back. It answers a close frame with a close frame, as RFC 6455 asks, and reads on to
 * the end of the stream, so it can tell a clean close from a reset.
 */
public final class RawWsClient implements AutoCloseable {

  static final int CONTINUATION = 0;
  static final int TEXT = 1;
  static final int BINARY = 2;
  static final int CLOSE = 8;

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private final byte[] mask = new byte[4];
  private IOException writeFailure;

  /** What the client saw after it stopped writing. */
  public record Outcome(int closeCode, String closeReason, int dataFrames, boolean cleanEof,
      String failure) {
    @Override
    public String toString() {
      return closeCode + " \"" + closeReason + "\" after " + dataFrames + " data frames, "
          + (cleanEof ? "clean EOF" : "no clean EOF: " + failure);
    }
  }

  private RawWsClient(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
    this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
    ThreadLocalRandom.current().nextBytes(mask);
  }

  /** Connects and completes the handshake; fails unless the server switches protocols. */
  public static RawWsClient connect(int port, String path) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    s.setSoTimeout(10_000);
    RawWsClient c = new RawWsClient(s);
    byte[] key = new byte[16];
    ThreadLocalRandom.current().nextBytes(key);
    c.out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n"
        + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(key) + "\r\n\r\n")
        .getBytes(StandardCharsets.ISO_8859_1));
    c.out.flush();
    String head = c.readHead();
    if (!head.startsWith("HTTP/1.1 101")) {
      c.close();
      throw new IOException("no upgrade: " + head);
    }
    return c;
  }

  private String readHead() throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("EOF in the handshake response: " + head);
      }
      head.write(b);
      state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
          ? state + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  /**
   * Queues one masked frame; returns false once a write has failed (a server that closed with
   * unread input resets the connection). Bytes leave when the buffer fills or on {@link #flush}.
   */
  public boolean frame(int opcode, boolean fin, byte[] payload) {
    if (writeFailure != null) {
      return false;
    }
    try {
      out.write((fin ? 0x80 : 0) | opcode);
      int n = payload.length;
      if (n < 126) {
        out.write(0x80 | n);
      } else if (n < 65536) {
        out.write(0x80 | 126);
        out.write(n >>> 8);
        out.write(n);
      } else {
        out.write(0x80 | 127);
        for (int shift = 56; shift >= 0; shift -= 8) {
          out.write((int) ((long) n >>> shift));
        }
      }
      out.write(mask);
      byte[] masked = new byte[n];
      for (int i = 0; i < n; i++) {
        masked[i] = (byte) (payload[i] ^ mask[i & 3]);
      }
      out.write(masked);
      return true;
    } catch (IOException e) {
      writeFailure = e;
      return false;
    }
  }

  public boolean text(String s) {
    return frame(TEXT, true, s.getBytes(StandardCharsets.UTF_8));
  }

  public boolean flush() {
    if (writeFailure != null) {
      return false;
    }
    try {
      out.flush();
      return true;
    } catch (IOException e) {
      writeFailure = e;
      return false;
    }
  }

  /**
   * Reads until the end of the stream: data frames are counted, a close frame is answered with
   * the same code. A reset, a timeout or a missing close frame show in the outcome.
   */
  public Outcome readToEnd() {
    flush();
    int code = -1;
    String reason = null;
    int data = 0;
    try {
      while (true) {
        int b0 = in.read();
        if (b0 < 0) {
          return new Outcome(code, reason, data, true, null);
        }
        int b1 = in.readUnsignedByte();
        long len = b1 & 0x7f;
        if (len == 126) {
          len = in.readUnsignedShort();
        } else if (len == 127) {
          len = in.readLong();
        }
        if ((b1 & 0x80) != 0 || len > (1 << 26)) {
          return new Outcome(code, reason, data, false, "malformed frame from the server");
        }
        byte[] payload = new byte[(int) len];
        in.readFully(payload);
        if ((b0 & 0x0f) == CLOSE) {
          code = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
          reason = payload.length > 2
              ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
          writeFailure = null;
          frame(CLOSE, true, new byte[] {payload.length >= 2 ? payload[0] : 3,
              payload.length >= 2 ? payload[1] : (byte) 0xe8});
          flush();
        } else {
          data++;
        }
      }
    } catch (IOException e) {
      return new Outcome(code, reason, data, false, e.toString());
    }
  }

  /** Reads the next frame of a polite exchange: its text, or null when it is not a data frame. */
  public String nextText() throws IOException {
    flush();
    int b0 = in.readUnsignedByte();
    int len = in.readUnsignedByte() & 0x7f;
    if (len == 126) {
      len = in.readUnsignedShort();
    } else if (len == 127) {
      len = (int) in.readLong();
    }
    byte[] payload = new byte[len];
    in.readFully(payload);
    int op = b0 & 0x0f;
    return op == TEXT || op == BINARY ? new String(payload, StandardCharsets.UTF_8) : null;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
