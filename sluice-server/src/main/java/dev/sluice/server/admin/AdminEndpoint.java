package dev.sluice.server.admin;

/**
 * An endpoint added to the admin listener ({@link AdminServer#handle}); it runs on the
 * listener's worker threads, behind the listener's door, and may block for a bounded time.
 */
@FunctionalInterface
public interface AdminEndpoint {
  AdminAnswer answer(AdminCall call) throws InterruptedException;
}
