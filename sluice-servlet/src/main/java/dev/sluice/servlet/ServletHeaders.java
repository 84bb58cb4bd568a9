package dev.sluice.servlet;

import dev.sluice.core.http.Headers;
import jakarta.servlet.http.HttpServletResponse;

/** A servlet response as the sink of core's shared HTTP answers. */
record ServletHeaders(HttpServletResponse response) implements Headers {

  @Override
  public void set(String name, String value) {
    response.setHeader(name, value);
  }

  @Override
  public void add(String name, String value) {
    response.addHeader(name, value);
  }
}
