package dev.sluice.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A plain socket client for inputs a well-behaved HTTP client refuses to send. */
public final class RawHttp implements AutoCloseable {

  public final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  public RawHttp(int port) throws IOException {
    socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    socket.setSoTimeout(10_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Writes text as ISO-8859-1 bytes; returns false if the server had already closed. */
  public boolean send(String text) {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  public boolean send(byte[] bytes) {
    try {
      out.write(bytes);
      out.flush();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Reads one response head and its Content-Length body; null on EOF before a status line. */
  public String readResponse() throws IOException {
    String h = readHead();
    if (h == null || !h.endsWith("\r\n\r\n")) {
      return h;   // the connection ended inside the head
    }
    int length = 0;
    for (String line : h.split("\r\n")) {
      if (line.toLowerCase().startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return h + new String(body, StandardCharsets.UTF_8);
  }

  /** Reads one response head only (the answer to a HEAD request); null on EOF. */
  public String readHead() throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = in.read();
      if (b < 0) {
        return head.size() == 0 ? null : head.toString(StandardCharsets.ISO_8859_1);
      }
      head.write(b);
      state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
          ? state + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  public static int status(String response) {
    return Integer.parseInt(response.substring(9, 12));
  }

  /** True when the server closed the connection (EOF or reset) within the socket timeout. */
  public boolean closedByServer() throws IOException {
    try {
      while (true) {
        int b = in.read();
        if (b < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
