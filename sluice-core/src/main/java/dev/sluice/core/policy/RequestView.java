package dev.sluice.core.policy;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import java.util.List;

/**
 * The parts of an HTTP request that a {@link Policy} reads. Adapters (Netty, Servlet, Spring)
 * implement it over their own request type; nothing is copied unless asked for.
 */
public interface RequestView {

  /** The method, upper case, like {@code GET}. */
  String method();

  /**
   * The path without the query string, normalised by {@link RequestTarget} as the adapter
   * forwards it (a raw path is normalised again by {@link Policy#select}, the same way).
   */
  String path();

  /** Every value of a header, in arrival order (several header lines); empty when absent. */
  List<String> headers(String name);

  /** The first value of a header, or null; override to read it without building a list. */
  default String header(String name) {
    List<String> values = headers(name);
    return values.isEmpty() ? null : values.get(0);
  }

  /** The first value of a cookie, or null. */
  String cookie(String name);

  /** The first value of a query parameter, or null. */
  String query(String name);

  /** The authenticated user's name, or null (the default: an adapter without users). */
  default String principal() {
    return null;
  }

  /** A request attribute's value as text, or null (the default: an adapter without them). */
  default String attribute(String name) {
    return null;
  }

  /** The socket peer's address as text, or null when unknown. */
  String peer();

  /** True for a WebSocket upgrade request. */
  boolean websocketUpgrade();

  /**
   * The client's address under {@code resolver}: by default resolved on each call; a view that
   * several handlers share should resolve it once and remember it.
   */
  default ClientAddress clientAddress(ClientAddressResolver resolver) {
    return resolver.resolve(peer(), this::headers);
  }
}
