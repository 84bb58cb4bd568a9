package dev.sluice.netty;

import dev.sluice.core.http.Headers;
import io.netty.handler.codec.http.HttpHeaders;

/** Netty's headers as the sink of core's shared HTTP answers. */
record NettyHeaders(HttpHeaders headers) implements Headers {

  @Override
  public void set(String name, String value) {
    headers.set(name, value);
  }

  @Override
  public void add(String name, String value) {
    headers.add(name, value);
  }
}
