package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: outputs, inputs and bad input, through {@code Main} as a user runs it. */
class ReplayCommandTest {

  @TempDir
  Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String stdin, String... args) {
    Main main = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(),
        new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
    return main.run(args);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private static String burst(String addr, long atMicros, int n) {
    Logs logs = new Logs();
    for (int j = 0; j < n; j++) {
      logs.add(atMicros + j * 1000L, addr, "/api/analysis/x", "curl/8.5.0", null);
    }
    return logs.msec();
  }

  @Test
  void summary_namesRulesRefusalsAndTopClients() throws Exception {
    Path log = Logs.write(dir, "a.log", ReplayTest.traffic().msec());
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, "--suggest", "1%",
        log.toString())).isZero();
    assertThat(out()).contains("replay of " + log + " (nginx) with <embedded default>")
        .contains("1,060 lines, 1,060 requests decided, 0 not parsed")
        .containsPattern("analysis +enforce +token-bucket 15 per 30s +460 +382 +0 .*"
            + "2025-06-01T12:00:04.250Z 198.51.100.10")
        .contains("top refused clients:")
        .containsPattern("198\\.51\\.100\\.10 +196 +0 +240 .*\\(shared address\\?\\)")
        .contains("look like shared addresses (10+ user agents or sessions behind one refused "
            + "address): 198.51.100.10")
        .contains("suggested limits:");
  }

  @Test
  void json_isOneDocument_andStdinIsADash() throws Exception {
    assertThat(run(burst("192.0.2.9", 0, 20), "replay", "--json", "--format", Logs.MSEC_FORMAT,
        "-")).isZero();
    assertThat(out()).startsWith("{\n  \"policy\": \"<embedded default>\"")
        .contains("\"name\": \"<stdin>\"").contains("\"refused\": 5");
  }

  @Test
  void compare_listsWhoOnePolicyRefusesAndTheOtherDoesNot() throws Exception {
    Path looser = dir.resolve("looser.yaml");
    Files.writeString(looser, String.join("\n",
        "rules:",
        "  analysis: {limits: [{type: token-bucket, burst: 30, refill: 30, period: 1m}]}",
        "routes:",
        "  - {name: analysis, paths: [/api/analysis/**], rules: [analysis]}", ""));
    Path log = Logs.write(dir, "a.log", burst("192.0.2.9", 0, 20) + burst("192.0.2.10",
        5_000_000, 40));
    assertThat(run("", "replay", "--compare", looser.toString(), "--format", Logs.MSEC_FORMAT,
        log.toString())).isZero();
    assertThat(out()).contains("refused by <embedded default> and not by " + looser + ": 1")
        .containsPattern("192\\.0\\.2\\.9  refused 5 of 20")
        .contains("refused by " + looser + " and not by <embedded default>: 0");
  }

  @Test
  void badLines_areCountedAndShownWithLineNumbers_neverFatal() throws Exception {
    String good = burst("192.0.2.9", 0, 3);
    String[] lines = good.split("\n");
    String text = lines[0] + "\nthis is not a log line\n" + lines[1] + "\n"
        + "192.0.2.9 - - [notatime] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\" \"-\"\n" + lines[2]
        + "\n";
    Path log = Logs.write(dir, "bad.log", text);
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, log.toString())).isZero();
    assertThat(out()).contains("5 lines, 3 requests decided, 2 not parsed")
        .contains("not parsed: " + log + ":2: line ends early: this is not a log line")
        .contains("not parsed: " + log + ":4: bad time: 192.0.2.9 - - [notatime]");
  }

  @Test
  void aLineOfOneMegabyte_isSkippedWithItsLineNumber_andTheRestIsRead() throws Exception {
    String[] lines = burst("192.0.2.9", 0, 2).split("\n");
    char[] big = new char[1 << 20];
    Arrays.fill(big, 'x');
    Path log = Logs.write(dir, "big.log", lines[0] + "\n" + new String(big) + "\n" + lines[1]
        + "\n");
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, log.toString())).isZero();
    assertThat(out()).contains("3 lines, 2 requests decided, 1 not parsed")
        .contains(log + ":2: line longer than 65536 bytes, skipped: xxxx");
  }

  @Test
  void truncatedGzip_isExit1_namingFileAndLine() throws Exception {
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (OutputStream o = new GZIPOutputStream(gz)) {
      o.write(burst("192.0.2.9", 0, 2000).getBytes(StandardCharsets.UTF_8));
    }
    byte[] whole = gz.toByteArray();
    Path log = dir.resolve("a.log.gz");
    Files.write(log, Arrays.copyOf(whole, whole.length / 2));
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, log.toString())).isEqualTo(1);
    assertThat(err()).containsPattern("sluice replay: " + log.toString().replace(".", "\\.")
        + ":[0-9]+: truncated gzip stream \\(Unexpected end of ZLIB input stream\\); [0-9]+ "
        + "lines were read before it");
    // The whole file reads.
    Files.write(log, whole);
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, log.toString())).isZero();
    assertThat(out()).contains("2,000 lines, 2,000 requests decided");
  }

  /**
   * A line older than one before it is decided at the latest time seen (the clock never runs
   * back): 15 requests at t = 10 s empty the bucket; a line stamped t = 1 s after them is
   * refused as at 10 s, where a clock run back would have found tokens the bucket never had.
   */
  @Test
  void timestampsGoingBackwards_decideAtTheLatestTime_andAreCounted() throws Exception {
    String late = burst("192.0.2.9", 10_000_000, 15);
    String early = burst("192.0.2.9", 1_000_000, 1);
    Path log = Logs.write(dir, "b.log", late + early);
    assertThat(run("", "replay", "--format", Logs.MSEC_FORMAT, log.toString())).isZero();
    assertThat(out()).contains("1 lines older than one before them (up to 9,014 ms): decided "
        + "at the latest time seen").containsPattern("analysis +enforce .* 16 +1 ");
  }

  @Test
  void severalLogs_areMergedByTime() throws Exception {
    Logs even = new Logs();
    Logs odd = new Logs();
    for (int j = 0; j < 20; j++) {
      (j % 2 == 0 ? even : odd).add(j * 100_000L, "192.0.2.9", "/api/analysis/x", "c", null);
    }
    Path a = Logs.write(dir, "even.log", even.msec());
    Path b = Logs.write(dir, "odd.log", odd.msec());
    assertThat(run("", "replay", "--json", "--format", Logs.MSEC_FORMAT, a.toString(),
        b.toString())).isZero();
    // 20 requests 0.1 s apart: 2j + 2 - 0.1j <= 30 admits j <= 14; 5 refused.
    assertThat(out()).contains("\"timestampsBackwards\": 0").contains("\"refused\": 5,");
  }

  @Test
  void unknownFormatField_isAUsageError_namingColumnAndWhatIsExpected() throws Exception {
    Path log = Logs.write(dir, "a.log", "x\n");
    assertThat(run("", "replay", "--format", "nginx:$remote_addr [$time_local] \"$request\" "
        + "$frobnicate", log.toString())).isEqualTo(64);
    assertThat(err()).startsWith("sluice: --format : column 39: unknown nginx variable "
        + "$frobnicate (expected: one of $remote_addr, ").endsWith("(see sluice replay --help)\n");
    assertThat(run("", "replay", "--format", "envoy:[%START_TIME%] %NOPE% \"%REQ(:PATH)%\"",
        log.toString())).isEqualTo(64);
    assertThat(err()).contains("--format : column 16: unknown Envoy command %NOPE%");
    assertThat(run("", "replay", "--format", "json:when=ts", log.toString())).isEqualTo(64);
    assertThat(err()).contains("--format : unknown field 'when' (expected: one of time, client");
  }

  @Test
  void usage_noLog_unknownFlag_badShare_threadsWithStdin() {
    assertThat(run("", "replay")).isEqualTo(64);
    assertThat(err()).contains("replay needs at least one LOG");
    assertThat(run("", "replay", "--frob", "x")).isEqualTo(64);
    assertThat(err()).contains("unknown option --frob for replay");
    assertThat(run("", "replay", "--suggest", "150%", "x")).isEqualTo(64);
    assertThat(err()).contains("--suggest : \"150%\" (expected: a share of clients");
    assertThat(run("", "replay", "--threads", "2", "-")).isEqualTo(64);
    assertThat(err()).contains("--threads 2 reads each log once per thread");
    assertThat(run("", "replay", "missing.log")).isEqualTo(1);
    assertThat(err()).contains("sluice replay: missing.log: no such file");
  }

  @Test
  void formats_envoyDefault_sluiceJson_andAJsonMapping() throws Exception {
    String envoy = "[2025-06-01T12:00:00.100Z] \"GET /api/analysis/x HTTP/1.1\" 200 - 0 12 3 2 "
        + "\"198.51.100.1, 192.0.2.44\" \"curl/8\" \"id\" \"example.com\" \"10.0.0.2:80\"\n";
    Path e = Logs.write(dir, "envoy.log", envoy.repeat(16));
    assertThat(run("", "replay", "--json", e.toString())).isZero();
    // The peer is Envoy's own last X-Forwarded-For entry; the default policy keys on it.
    assertThat(out()).contains("\"format\": \"envoy\"").contains("\"client\": \"192.0.2.44\"")
        .contains("\"refused\": 1,");
    out.reset();
    String json = "{\"ts\":\"2025-06-01T12:00:00.900Z\",\"client\":\"192.0.2.5\",\"method\":\"GET\","
        + "\"path\":\"/api/analysis/q?x=1\",\"status\":200,\"start\":\"2025-06-01T12:00:00.123456Z\","
        + "\"peer\":\"192.0.2.5\",\"extra\":{\"a\":[1,\"}\"]}}\n";
    Path j = Logs.write(dir, "sluice.json", json.repeat(16));
    assertThat(run("", "replay", "--json", j.toString())).isZero();
    assertThat(out()).contains("\"format\": \"json\"").contains("\"refused\": 1,")
        .contains("\"from\": \"2025-06-01T12:00:00.123Z\"");
    out.reset();
    String mapped = "{\"@timestamp\":1748779200.5,\"ip\":\"192.0.2.6\",\"uri\":\"/api/analysis/z\"}\n";
    Path m = Logs.write(dir, "m.json", mapped.repeat(17));
    assertThat(run("", "replay", "--json", "--format", "json:time=@timestamp,client=ip,path=uri",
        m.toString())).isZero();
    assertThat(out()).contains("\"refused\": 2,").contains("\"from\": \"2025-06-01T12:00:00.500Z\"");
  }

  @Test
  void help_listsReplay() {
    assertThat(run("", "help", "replay")).isZero();
    assertThat(out()).startsWith("Usage: sluice replay [--config FILE] [--compare FILE]")
        .contains("--suggest SHARE").contains("LOG...");
    assertThat(List.of(Main.class.getName())).isNotEmpty();
  }
}
