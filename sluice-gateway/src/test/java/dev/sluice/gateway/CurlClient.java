package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The curl command line (HTTP/2, TLS): a client the JDK's cannot be, for h2c and ALPN. */
public final class CurlClient {

  private CurlClient() {}

  /** Runs curl with these arguments; its output, after asserting it exited 0 within 20 s. */
  public static String run(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "10"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("curl " + cmd + ": " + out).isZero();
    return out;
  }
}
