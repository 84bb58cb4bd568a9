package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The OCI image the image profile builds (target/oci), read by Debian's skopeo and umoci as any
 * registry client would: its layers, config, user, entrypoint and annotations; then unpacked by
 * umoci and its entrypoint run as the image says (user 65532, the entrypoint and command from the
 * config) in a chroot of its root file system (podman is not on these machines; a private mount
 * namespace gives it /proc and /dev), answering the seed 000 loop: fifteen requests, then 429s.
 */
class ImageIntegrationTests {

  static final Path IMAGE = Path.of(System.getProperty("sluice.image"));
  static final String VERSION = System.getProperty("sluice.version");
  static final String REF = "oci:" + IMAGE + ":" + VERSION;

  @TempDir
  static Path tmp;
  static Path bundle;

  @BeforeAll
  static void unpack() throws Exception {
    assertThat(IMAGE.resolve("index.json")).as("built by mvn package -Pimage").isRegularFile();
    bundle = tmp.resolve("bundle");
    Run r = run("umoci", "unpack", "--image", IMAGE + ":" + VERSION, bundle.toString());
    assertThat(r.code).as(r.out).isZero();
  }

  record Run(int code, String out) {}

  static Run run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Run(p.waitFor(), out);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> json(String text) {
    return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
  }

  @Test
  @SuppressWarnings("unchecked")
  void skopeo_readsTheImage_nonRootUser_serveEntrypoint_annotations() throws Exception {
    Run inspect = run("skopeo", "inspect", REF);
    assertThat(inspect.code).as(inspect.out).isZero();
    Map<String, Object> image = json(inspect.out);
    assertThat(image.get("Architecture")).isEqualTo("amd64");
    assertThat(image.get("Os")).isEqualTo("linux");
    assertThat((List<Object>) image.get("Layers")).hasSize(3);
    Map<String, Object> labels = (Map<String, Object>) image.get("Labels");
    assertThat(labels).containsEntry("org.opencontainers.image.version", VERSION)
        .containsEntry("org.opencontainers.image.title", "sluice")
        .containsEntry("org.opencontainers.image.licenses", "Apache-2.0")
        .containsKeys("org.opencontainers.image.revision", "org.opencontainers.image.created",
            "org.opencontainers.image.description");
    assertThat((String) labels.get("org.opencontainers.image.revision")).matches("[0-9a-f]{40}");

    Run config = run("skopeo", "inspect", "--config", REF);
    assertThat(config.code).as(config.out).isZero();
    Map<String, Object> c = (Map<String, Object>) json(config.out).get("config");
    assertThat(c.get("User")).isEqualTo("65532:65532");
    List<String> entry = (List<String>) c.get("Entrypoint");
    assertThat(entry.get(0)).isEqualTo("/opt/java/bin/java");
    assertThat(entry).contains("-XX:SharedArchiveFile=/opt/sluice/lib/sluice.jsa", "-jar",
        "/opt/sluice/lib/sluice.jar").endsWith("serve");
    assertThat((List<String>) c.get("Cmd")).containsExactly("--listen", "0.0.0.0:8080",
        "--admin", "0.0.0.0:9090", "--admin-token-file", "/run/secrets/sluice/admin-token");
    assertThat((Map<String, Object>) c.get("ExposedPorts")).containsOnlyKeys("8080/tcp",
        "9090/tcp");
    assertThat(c.get("Labels")).isEqualTo(labels);

    Run raw = run("skopeo", "inspect", "--raw", REF);
    Map<String, Object> manifest = json(raw.out);
    assertThat(manifest.get("mediaType"))
        .isEqualTo("application/vnd.oci.image.manifest.v1+json");
    long compressed = 0;
    for (Object l : (List<Object>) manifest.get("layers")) {
      Map<String, Object> layer = (Map<String, Object>) l;
      assertThat(layer.get("mediaType")).isEqualTo("application/vnd.oci.image.layer.v1.tar+gzip");
      compressed += ((Number) layer.get("size")).longValue();
    }
    System.out.printf("image: %d bytes compressed (%.1f MB) in 3 layers%n", compressed,
        compressed / 1e6);
    assertThat(compressed).as("the image's compressed size (goal: <= 80 MB)")
        .isLessThanOrEqualTo(80_000_000L);
  }

  @Test
  @SuppressWarnings("unchecked")
  void umoci_unpacksARootfsWithoutAShell_whoseRuntimeAndArchiveAreThere() throws Exception {
    Path rootfs = bundle.resolve("rootfs");
    assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
    assertThat(rootfs.resolve("opt/java/lib/server/classes.jsa")).isRegularFile();
    assertThat(rootfs.resolve("opt/sluice/lib/sluice.jsa")).isRegularFile();
    assertThat(rootfs.resolve("opt/sluice/examples/seed-000-default.yaml")).isRegularFile();
    assertThat(rootfs.resolve("etc/passwd")).content().contains("sluice:x:65532:65532:");
    assertThat(rootfs.resolve("bin/sh")).doesNotExist();
    assertThat(rootfs.resolve("usr/bin")).doesNotExist();
    assertThat(Files.getPosixFilePermissions(rootfs.resolve("tmp")))
        .isEqualTo(PosixFilePermissions.fromString("rwxrwxrwx"));
    Map<String, Object> runtime = json(Files.readString(bundle.resolve("config.json")));
    Map<String, Object> process = (Map<String, Object>) runtime.get("process");
    assertThat(((Map<String, Object>) process.get("user")).get("uid")).isEqualTo(65532);
    assertThat((List<String>) process.get("args")).contains("serve", "--admin-token-file");
  }

  @Test
  @SuppressWarnings("unchecked")
  void entrypoint_runsInAChrootOfTheImage_andAnswersTheSeed000Loop() throws Exception {
    assertThat(System.getProperty("user.name")).as("a chroot needs root; scripts/test runs as "
        + "root").isEqualTo("root");
    Path rootfs = bundle.resolve("rootfs");
    Files.writeString(rootfs.resolve("run/secrets/sluice/admin-token"), "image-test-token-0123456789\n");
    Map<String, Object> process = (Map<String, Object>) json(Files.readString(
        bundle.resolve("config.json"))).get("process");
    List<String> args = new ArrayList<>((List<String>) process.get("args"));
    int port = freePort();
    int admin = freePort();
    // The image's own command line, its ports moved to free loopback ones (the chroot shares the
    // host's network).
    args.set(args.indexOf("0.0.0.0:8080"), "127.0.0.1:" + port);
    args.set(args.indexOf("0.0.0.0:9090"), "127.0.0.1:" + admin);
    String script = "mount -t proc proc \"$1/proc\" && mount --bind /dev \"$1/dev\" && "
        + "exec chroot --userspec=65532:65532 \"$@\"";
    List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--fork", "--kill-child", "sh", "-c",
        script, "sh", rootfs.toString()));
    cmd.addAll(args);
    Files.createDirectories(rootfs.resolve("proc"));
    Files.createDirectories(rootfs.resolve("dev"));
    Path log = tmp.resolve("image.log");
    long spawned = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      long firstAnswer = -1;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (firstAnswer < 0) {
        assertThat(p.isAlive()).as(Files.readString(log)).isTrue();
        assertThat(System.nanoTime()).as("answering within 60 s").isLessThan(deadline);
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", port), 100);
          firstAnswer = System.nanoTime();
        } catch (IOException e) {
          Thread.sleep(5);
        }
      }
      System.out.printf("image: the port accepted %d ms after the chroot was spawned%n",
          (firstAnswer - spawned) / 1_000_000);
      List<Integer> codes = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        codes.add(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/api/analysis/x")).build(), HttpResponse.BodyHandlers.discarding()).statusCode());
      }
      assertThat(codes.subList(0, 15)).as("%s", codes).doesNotContain(429);
      assertThat(codes.subList(16, 20)).as("%s", codes).containsOnly(429);
      HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + admin + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(ready.statusCode()).isEqualTo(200);
      HttpResponse<String> bans = http.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + admin + "/v1/bans")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(bans.statusCode()).as("the admin API behind the token").isEqualTo(401);
      // The JVM is the image's user, not root.
      String status = Files.readString(Path.of("/proc/" + javaPid(p) + "/status"));
      assertThat(status).containsPattern("Uid:\\s+65532");
    } finally {
      // The JVM runs as another user, which clears the parent-death signal unshare would send
      // it: stop it first, then unshare.
      List<ProcessHandle> below = p.descendants().toList();
      below.forEach(ProcessHandle::destroy);
      for (ProcessHandle h : below) {
        h.onExit().get(30, TimeUnit.SECONDS);
      }
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    assertThat(Files.readString(log)).contains("sluice starting").doesNotContain("Exception");
  }

  /** The java under unshare and chroot (which exec it: the same process, found by its parent). */
  static long javaPid(Process p) throws IOException {
    return p.descendants().filter(h -> h.info().command().orElse("").endsWith("java"))
        .findFirst().orElseThrow().pid();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
