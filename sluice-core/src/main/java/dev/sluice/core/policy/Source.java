package dev.sluice.core.policy;

import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.internal.Checks;
import java.util.List;
import java.util.Locale;

/** Where a key dimension's value comes from in an HTTP request. Immutable. */
public final class Source {

  /** The kind of source. */
  public enum Kind { CLIENT_ADDRESS, HEADER, COOKIE, QUERY, PRINCIPAL, ATTRIBUTE }

  private static final Source CLIENT_ADDRESS = new Source(Kind.CLIENT_ADDRESS, null);
  private static final Source PRINCIPAL = new Source(Kind.PRINCIPAL, null);

  private final Kind kind;
  private final String name;

  private Source(Kind kind, String name) {
    this.kind = kind;
    this.name = name;
  }

  /** The client address, resolved through the policy's trusted-proxy settings. */
  public static Source clientAddress() {
    return CLIENT_ADDRESS;
  }

  /** The first value of a request header. */
  public static Source header(String name) {
    return new Source(Kind.HEADER, Checks.name(name, "header").toLowerCase(Locale.ROOT));
  }

  public static Source cookie(String name) {
    return new Source(Kind.COOKIE, Checks.name(name, "cookie"));
  }

  public static Source query(String name) {
    return new Source(Kind.QUERY, Checks.name(name, "query"));
  }

  /**
   * The authenticated user's name, as the application's server knows it (a servlet request's
   * {@code Principal}); absent where there is none, as in the standalone gateway.
   */
  public static Source principal() {
    return PRINCIPAL;
  }

  /**
   * A request attribute the application set before the check (a servlet request attribute, such
   * as a user id an authentication filter put there); absent in the standalone gateway.
   */
  public static Source attribute(String name) {
    return new Source(Kind.ATTRIBUTE, Checks.name(name, "attribute"));
  }

  public Kind kind() {
    return kind;
  }

  /** The header, cookie, query parameter or attribute name; null otherwise. */
  public String name() {
    return name;
  }

  /** The value: a {@link dev.sluice.core.address.ClientAddress} or a String; null if absent. */
  Object read(RequestView request, ClientAddressResolver resolver) {
    switch (kind) {
      case CLIENT_ADDRESS:
        return request.clientAddress(resolver);
      case HEADER:
        List<String> values = request.headers(name);
        return values.isEmpty() ? null : values.get(0);
      case COOKIE:
        return request.cookie(name);
      case PRINCIPAL:
        return request.principal();
      case ATTRIBUTE:
        return request.attribute(name);
      default:
        return request.query(name);
    }
  }

  @Override
  public String toString() {
    return kind == Kind.CLIENT_ADDRESS ? "client-address" : kind == Kind.PRINCIPAL ? "principal"
        : kind.name().toLowerCase(Locale.ROOT) + ":" + name;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Source s && s.kind == kind && java.util.Objects.equals(s.name, name);
  }

  @Override
  public int hashCode() {
    return kind.hashCode() * 31 + (name == null ? 0 : name.hashCode());
  }
}
