package dev.sluice.server;

import dev.sluice.rls.CheckApi;
import dev.sluice.server.admin.AdminAnswer;
import dev.sluice.server.admin.AdminCall;
import dev.sluice.server.admin.AdminEndpoint;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code POST /v1/check} on the admin listener ({@code --check-api admin}), behind the admin
 * listener's door. The admin listener's worker threads block while a decision is pending (at
 * most {@value #WAIT_SECONDS} s, then 503): it is the place for a few calls from operators'
 * tools; services that ask for every request want {@code --check-api HOST:PORT}, which never
 * blocks.
 */
final class AdminCheck implements AdminEndpoint {

  static final int WAIT_SECONDS = 10;

  private final CheckApi api;

  AdminCheck(CheckApi api) {
    this.api = api;
  }

  @Override
  public AdminAnswer answer(AdminCall call) throws InterruptedException {
    if (!call.rawPath().equals(CheckApi.PATH)) {
      return answer(new CheckApi.Answer(404, "{\"error\":\"not found\"}", -1));
    }
    if (!call.method().equals("POST")) {
      return answer(new CheckApi.Answer(405, "{\"error\":\"method not allowed\",\"detail\":"
          + "\"" + CheckApi.PATH + " answers POST with a JSON body\"}", -1)).with("Allow", "POST");
    }
    byte[] body = call.body();
    if (body.length > CheckApi.MAX_BODY_BYTES) {
      return answer(new CheckApi.Answer(413, "{\"error\":\"payload too large\",\"detail\":"
          + "\"a decision request may be at most " + CheckApi.MAX_BODY_BYTES + " bytes\"}", -1));
    }
    CheckApi.Answer answer;
    try {
      answer = api.check(ByteBuffer.wrap(body)).toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      answer = new CheckApi.Answer(503, "{\"error\":\"unavailable\",\"detail\":\"no decision "
          + "within " + WAIT_SECONDS + " s\"}", -1);
    } catch (ExecutionException e) {
      answer = new CheckApi.Answer(500, "{\"error\":\"internal error\"}", -1);
    }
    return answer(answer);
  }

  private static AdminAnswer answer(CheckApi.Answer a) {
    AdminAnswer out = AdminAnswer.of(a.status(), "application/json; charset=utf-8", a.json());
    return a.retryAfterSeconds() < 0 ? out
        : out.with("Retry-After", Long.toString(a.retryAfterSeconds()));
  }
}
