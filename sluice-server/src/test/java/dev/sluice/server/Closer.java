package dev.sluice.server;

import java.util.ArrayList;
import java.util.List;

/** What a test opened (servers, clients, Redis processes), closed in the reverse order. */
public final class Closer implements AutoCloseable {

  private final List<AutoCloseable> open = new ArrayList<>();

  /** Keeps {@code resource} to close; returns it. */
  public <T extends AutoCloseable> T add(T resource) {
    open.add(resource);
    return resource;
  }

  /** How many were added. */
  public int size() {
    return open.size();
  }

  @Override
  public void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
  }
}
