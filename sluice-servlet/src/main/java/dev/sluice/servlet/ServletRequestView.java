package dev.sluice.servlet;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestView;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A {@link RequestView} over a servlet request: the path within the application (the context
 * path left out, so one policy file means the same mounted anywhere), the query string decoded
 * here rather than through {@code getParameter} (which would read a form body), within bounds,
 * and the client address resolved once per resolver.
 */
final class ServletRequestView implements RequestView {

  static final int MAX_QUERY_PARAMS = 64;

  private final HttpServletRequest request;
  private ClientAddressResolver resolvedBy;
  private ClientAddress clientAddress;

  ServletRequestView(HttpServletRequest request) {
    this.request = request;
  }

  @Override
  public String method() {
    return request.getMethod().toUpperCase(Locale.ROOT);
  }

  @Override
  public String path() {
    String uri = request.getRequestURI();
    String context = request.getContextPath();
    String path = context != null && !context.isEmpty() && uri.startsWith(context)
        ? uri.substring(context.length()) : uri;
    return path.isEmpty() ? "/" : path;
  }

  @Override
  public List<String> headers(String name) {
    var values = request.getHeaders(name);
    return values == null ? List.of() : Collections.list(values);
  }

  @Override
  public String cookie(String name) {
    Cookie[] cookies;
    try {
      cookies = request.getCookies();
    } catch (RuntimeException e) {
      return null;
    }
    if (cookies != null) {
      for (Cookie c : cookies) {
        if (c.getName().equals(name)) {
          return c.getValue();
        }
      }
    }
    return null;
  }

  @Override
  public String query(String name) {
    String q = request.getQueryString();
    if (q == null) {
      return null;
    }
    int seen = 0;
    for (String pair : q.split("&", MAX_QUERY_PARAMS + 1)) {
      if (++seen > MAX_QUERY_PARAMS) {
        break;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq < 0 ? pair : pair.substring(0, eq));
      if (name.equals(key)) {
        return eq < 0 ? "" : decode(pair.substring(eq + 1));
      }
    }
    return null;
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  @Override
  public String principal() {
    Principal p = request.getUserPrincipal();
    return p == null ? null : p.getName();
  }

  @Override
  public String attribute(String name) {
    Object v = request.getAttribute(name);
    return v == null ? null : v.toString();
  }

  @Override
  public String peer() {
    return request.getRemoteAddr();
  }

  @Override
  public boolean websocketUpgrade() {
    String upgrade = request.getHeader("Upgrade");
    return "GET".equals(method()) && upgrade != null && upgrade.equalsIgnoreCase("websocket");
  }

  /** Resolved once per resolver: every rule's key and the listener share it. */
  @Override
  public ClientAddress clientAddress(ClientAddressResolver resolver) {
    if (resolver != resolvedBy) {
      clientAddress = resolver.resolve(peer(), this::headers);
      resolvedBy = resolver;
    }
    return clientAddress;
  }
}
