package dev.sluice.gateway;

import java.util.concurrent.CompletionStage;

/**
 * The decision API the gateway serves at {@code POST /v1/check}: a JSON body in, a status and a
 * JSON body out. The stage never completes exceptionally; bad input is an answer (400).
 */
@FunctionalInterface
public interface DecisionApi {

  /** Where the API is served on the gateway's listener. */
  String PATH = "/v1/check";

  /** The largest body accepted (smaller when {@code gateway.maxBodyBytes} is smaller). */
  int MAX_BODY_BYTES = 64 * 1024;

  CompletionStage<Answer> check(String body);

  /** An HTTP status and a JSON body. */
  record Answer(int status, String json) {}
}
