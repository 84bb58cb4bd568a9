package dev.sluice.core.policy;

import java.util.concurrent.CompletionStage;

/**
 * Asks a {@link HumanCheck}'s siteverify service about a token. The gateway's implementation
 * speaks HTTP; the admission step applies the check's deadline around it and decides by the
 * check's {@code onError} when it fails or is late, so an implementation need not. Must never
 * wait on the calling thread (an event loop).
 */
@FunctionalInterface
public interface HumanVerifier {

  /**
   * Verifies {@code token} for {@code check}; {@code remoteIp} is the resolved client's address
   * or null when it is not one address (an IPv6 client keyed by its /64).
   */
  CompletionStage<HumanCheck.Verification> verify(HumanCheck check, String token,
      String remoteIp);
}
