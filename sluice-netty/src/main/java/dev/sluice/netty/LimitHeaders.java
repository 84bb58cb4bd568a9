package dev.sluice.netty;

import dev.sluice.core.Decision;
import io.netty.handler.codec.http.HttpHeaders;

/** Core's {@link dev.sluice.core.http.LimitHeaders} written into Netty headers. */
final class LimitHeaders {

  private LimitHeaders() {}

  static void add(HttpHeaders h, Decision d, boolean legacy, boolean ietf) {
    dev.sluice.core.http.LimitHeaders.write(d, legacy, ietf, new NettyHeaders(h));
  }
}
