package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.HumanCheck;
import dev.sluice.core.policy.HumanCheck.Result;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** siteverify's answers as the three services write them, and what is not an answer. */
class SiteVerifyTest {

  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
  private final SiteVerify verify = new SiteVerify(Clock.fixed(NOW, ZoneOffset.UTC));
  private final HumanCheck check = HumanCheck.builder("t", HumanCheck.Provider.TURNSTILE)
      .secret("s").hostname("app.example.com").action("login").build();

  @Test
  void turnstileSuccess_passes_andItsFailure_namesTheErrorCodes() {
    assertThat(verify.answer(check, 200, "{\"success\":true,\"challenge_ts\":"
        + "\"2026-03-01T11:59:30.096Z\",\"hostname\":\"app.example.com\",\"error-codes\":[],"
        + "\"action\":\"login\",\"cdata\":\"sessionid-123\",\"metadata\":{\"ephemeral_id\":"
        + "\"x:1\"}}").result()).isEqualTo(Result.PASSED);
    HumanCheck.Verification failed = verify.answer(check, 200, "{\"success\":false,"
        + "\"error-codes\":[\"invalid-input-response\",\"timeout-or-duplicate\"]}");
    assertThat(failed.result()).isEqualTo(Result.FAILED);
    assertThat(failed.reason()).isEqualTo("invalid-input-response,timeout-or-duplicate");
  }

  @Test
  void hcaptchaAndRecaptchaAnswers_readTheSameWay() {
    HumanCheck h = HumanCheck.builder("h", HumanCheck.Provider.HCAPTCHA).secret("s").build();
    assertThat(verify.answer(h, 200, "{\"success\":true,\"challenge_ts\":"
        + "\"2026-03-01T11:58:00.000000Z\",\"hostname\":\"x\",\"credit\":false}").result())
        .isEqualTo(Result.PASSED);
    HumanCheck v3 = HumanCheck.builder("r", HumanCheck.Provider.RECAPTCHA).secret("s")
        .minScore(0.5).build();
    assertThat(verify.answer(v3, 200, "{\"success\":true,\"score\":0.9,\"action\":\"x\","
        + "\"challenge_ts\":\"2026-03-01T11:59:59+00:00\",\"hostname\":\"x\"}").result())
        .isEqualTo(Result.PASSED);
    assertThat(verify.answer(v3, 200, "{\"success\":true,\"score\":0.1,"
        + "\"challenge_ts\":\"2026-03-01T11:59:59Z\"}").reason()).isEqualTo("score");
  }

  @Test
  void notAVerdict_isAnError_neverAPass() {
    assertThat(verify.answer(check, 500, "{\"success\":true}").result()).isEqualTo(Result.ERROR);
    assertThat(verify.answer(check, 200, "<html>").result()).isEqualTo(Result.ERROR);
    assertThat(verify.answer(check, 200, "{\"success\":\"yes\"}").result())
        .isEqualTo(Result.ERROR);
    assertThat(verify.answer(check, 200, "{\"hostname\":\"app.example.com\"}").result())
        .isEqualTo(Result.ERROR);
    assertThat(verify.answer(check, 200, "{\"success\":true,").result()).isEqualTo(Result.ERROR);
    assertThat(verify.answer(check, 200, "x".repeat(SiteVerify.MAX_ANSWER_CHARS + 1)).result())
        .isEqualTo(Result.ERROR);
    // A success without a time, or with one that cannot be read, is stale: never a pass.
    assertThat(verify.answer(check, 200, "{\"success\":true,\"hostname\":\"app.example.com\","
        + "\"action\":\"login\"}").reason()).isEqualTo("stale");
    assertThat(verify.answer(check, 200, "{\"success\":true,\"hostname\":\"app.example.com\","
        + "\"action\":\"login\",\"challenge_ts\":\"yesterday\"}").reason()).isEqualTo("stale");
  }
}
