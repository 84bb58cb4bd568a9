import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * Builds Sluice's OCI image without a container engine (sluice-dist's {@code image} profile runs
 * it with the JDK whose jlink makes the runtime: {@code java ImageBuilder.java KEY=VALUE...}).
 *
 * <p>Three layers, each a reproducible tar (sorted entries, owner root unless said, one fixed
 * time): {@code base}, the C library from Debian's libc6 package ({@code apt-get download},
 * {@code dpkg-deb -x}; libraries only) with /etc/passwd, /etc/group, /tmp; {@code java}, a runtime
 * jlinked from the modules jdeps finds in the jar, with its base class-data archive; and
 * {@code sluice}, the server jar, the examples and a class-data archive of the classes a
 * {@code serve} loads, written by a training run of that very runtime and jar (start, answer the
 * seed 000 loop up to its 429s, stop). The image runs as 65532:65532 with {@code sluice serve} as
 * its entrypoint; the config carries the OCI annotations. The result is an OCI image layout
 * ({@code oci-layout}, {@code index.json}, {@code blobs/sha256/}) that skopeo and umoci read.
 */
public final class ImageBuilder {

  static final int UID = 65532;
  static final String JAVA = "opt/java";
  static final String APP = "opt/sluice";

  private final Map<String, String> o;
  private final long epoch;

  ImageBuilder(Map<String, String> options) {
    this.o = options;
    this.epoch = Long.parseLong(options.getOrDefault("epoch", "1700000000"));
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      options.put(a.substring(0, eq), a.substring(eq + 1));
    }
    new ImageBuilder(options).build();
  }

  private String opt(String key) {
    String v = o.get(key);
    if (v == null || v.isBlank()) {
      throw new IllegalArgumentException("ImageBuilder: " + key + "= is required");
    }
    return v;
  }

  void build() throws Exception {
    Path work = Path.of(opt("work"));
    Path out = Path.of(opt("out"));
    Path jar = Path.of(opt("jar"));
    String version = opt("version");
    deleteTree(work);
    deleteTree(out);
    Path base = Files.createDirectories(work.resolve("base"));
    Path java = work.resolve("java");
    Path app = Files.createDirectories(work.resolve("sluice").resolve(APP));
    long t0 = System.nanoTime();
    baseLayer(work, base);
    log("base layer (Debian's libc6)", t0);
    t0 = System.nanoTime();
    runtime(jar, java.resolve(JAVA));
    log("java layer (jlink)", t0);
    t0 = System.nanoTime();
    Path appJar = app.resolve("lib/sluice.jar");
    Files.createDirectories(appJar.getParent());
    Files.copy(jar, appJar);
    Files.setLastModifiedTime(appJar, FileTime.fromMillis(epoch * 1000));
    copyTree(Path.of(opt("examples")), app.resolve("examples"));
    train(java.resolve(JAVA), appJar, app.resolve("lib/sluice.jsa"));
    log("sluice layer (jar, class-data archive from a training run)", t0);
    Files.createDirectories(out.resolve("blobs/sha256"));
    List<String[]> layers = new ArrayList<>();
    for (String name : List.of("base", "java", "sluice")) {
      t0 = System.nanoTime();
      layers.add(layer(work.resolve(name), out, name.equals("base")));
      log("layer " + name + " packed", t0);
    }
    image(out, version, layers);
  }

  private static void log(String what, long t0) {
    System.out.printf("image: %s in %.1f s%n", what, (System.nanoTime() - t0) / 1e9);
  }

  // --- base: Debian's C library, users, /tmp ------------------------------------------------

  private void baseLayer(Path work, Path root) throws Exception {
    Path debs = Files.createDirectories(work.resolve("debs"));
    run(debs, List.of("apt-get", "download", "libc6"), "apt-get download libc6 (run apt-get "
        + "update first if the package lists are empty)");
    Path extracted = Files.createDirectories(work.resolve("libc6"));
    try (Stream<Path> s = Files.list(debs)) {
      for (Path deb : s.filter(p -> p.toString().endsWith(".deb")).sorted().toList()) {
        run(work, List.of("dpkg-deb", "-x", deb.toString(), extracted.toString()), "dpkg-deb");
      }
    }
    // The libraries and the loader only: no gconv modules, programs or documentation.
    try (Stream<Path> s = Files.walk(extracted)) {
      for (Path p : s.sorted().toList()) {
        String rel = extracted.relativize(p).toString();
        boolean keep = rel.startsWith("lib") || rel.startsWith("usr/lib/x86_64-linux-gnu/lib")
            || rel.startsWith("usr/lib64");
        if (!keep || rel.contains("gconv") || rel.contains("audit") || Files.isDirectory(p,
            LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        Path to = root.resolve(rel);
        Files.createDirectories(to.getParent());
        Files.copy(p, to, LinkOption.NOFOLLOW_LINKS);
      }
    }
    Files.createDirectories(root.resolve("etc"));
    Files.writeString(root.resolve("etc/passwd"), "root:x:0:0:root:/root:/sbin/nologin\n"
        + "sluice:x:" + UID + ":" + UID + ":sluice:/nonexistent:/sbin/nologin\n");
    Files.writeString(root.resolve("etc/group"), "root:x:0:\nsluice:x:" + UID + ":\n");
    Files.writeString(root.resolve("etc/nsswitch.conf"), "passwd: files\ngroup: files\n"
        + "hosts: files dns\n");
    Files.createDirectories(root.resolve("tmp"));
    Files.createDirectories(root.resolve("etc/sluice"));
    Files.createDirectories(root.resolve("run/secrets/sluice"));
  }

  // --- java: a jlinked runtime -------------------------------------------------------------

  private void runtime(Path jar, Path to) throws Exception {
    Path jdk = Path.of(System.getProperty("java.home"));
    String modules = capture(List.of(jdk.resolve("bin/jdeps").toString(), "--ignore-missing-deps",
        "--print-module-deps", "--multi-release", Integer.toString(Runtime.version().feature()),
        jar.toString())).strip();
    List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/jlink").toString(),
        "--add-modules", modules, "--strip-debug",
        "--no-man-pages", "--no-header-files", "--compress=zip-6", "--generate-cds-archive",
        "--output", to.toString()));
    run(Files.createDirectories(to.getParent()), cmd, "jlink");
    // Only for heaps over 32 GB: not this image's case.
    Files.deleteIfExists(to.resolve("lib/server/classes_nocoops.jsa"));
    System.out.println("image: java " + Runtime.version() + " modules " + modules);
  }

  // --- sluice: the archive of what serve loads ---------------------------------------------

  private void train(Path java, Path jar, Path archive) throws Exception {
    int port = freePort();
    int admin = freePort();
    Path log = archive.resolveSibling("training.log");
    Process p = new ProcessBuilder(java.resolve("bin/java").toString(),
        "-XX:ArchiveClassesAtExit=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
        "-jar", jar.toString(), "serve", "--listen", "127.0.0.1:" + port, "--admin",
        "127.0.0.1:" + admin).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      int refused = 0;
      while (refused == 0) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          throw new IOException("training run failed: " + Files.readString(log));
        }
        try {
          for (int i = 0; i < 20; i++) {
            refused += get(port, "/api/analysis/x") == 429 ? 1 : 0;
          }
          get(admin, "/readyz");
          get(admin, "/metrics");
        } catch (IOException e) {
          Thread.sleep(100);
        }
      }
    } finally {
      p.destroy();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("training run did not stop");
      }
    }
    Files.delete(log);
    if (!Files.isRegularFile(archive)) {
      throw new IOException("training run wrote no class-data archive " + archive);
    }
  }

  private static int get(int port, String path) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      s.setSoTimeout(5000);
      s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
          + "close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      String head = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      return Integer.parseInt(head.substring(9, 12));
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  // --- layers and the image ------------------------------------------------------------------

  /** Packs {@code root} as a gzipped tar blob; returns {digest, diffId, size}. */
  private String[] layer(Path root, Path out, boolean base) throws Exception {
    ByteArrayOutputStream tar = new ByteArrayOutputStream();
    TreeMap<String, Path> entries = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      s.filter(p -> !p.equals(root)).forEach(p -> entries.put(root.relativize(p).toString()
          + (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "/" : ""), p));
    }
    for (Map.Entry<String, Path> e : entries.entrySet()) {
      String name = e.getKey();
      Path p = e.getValue();
      int owner = 0;
      int mode;
      byte type;
      byte[] data = new byte[0];
      String link = "";
      if (Files.isSymbolicLink(p)) {
        type = '2';
        mode = 0777;
        link = Files.readSymbolicLink(p).toString();
      } else if (Files.isDirectory(p)) {
        type = '5';
        mode = 0755;
        if (base && name.equals("tmp/")) {
          mode = 01777;
        }
        if (base && name.equals("run/secrets/sluice/")) {
          mode = 0755;
        }
      } else {
        type = '0';
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        mode = perms.contains(PosixFilePermission.OWNER_EXECUTE) ? 0755 : 0644;
        data = Files.readAllBytes(p);
      }
      header(tar, name, mode, owner, data.length, type, link);
      tar.write(data);
      tar.write(new byte[(int) ((512 - data.length % 512) % 512)]);
    }
    tar.write(new byte[1024]);
    byte[] raw = tar.toByteArray();
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (GZIPOutputStream z = new GZIPOutputStream(gz, 1 << 16) {
      {
        def.setLevel(Deflater.BEST_COMPRESSION);
      }
    }) {
      z.write(raw);
    }
    byte[] blob = gz.toByteArray();
    // gzip's header has no time in it here (Java writes 0), so the blob is reproducible.
    String digest = blob(out, blob);
    return new String[] {digest, "sha256:" + sha256(raw), Long.toString(blob.length)};
  }

  private void header(ByteArrayOutputStream tar, String name, int mode, int owner, long size,
      byte type, String link) throws IOException {
    byte[] h = new byte[512];
    String prefix = "";
    if (name.length() > 100) {
      int cut = name.lastIndexOf('/', name.endsWith("/") ? name.length() - 2 : name.length() - 1);
      while (cut > 155) {
        cut = name.lastIndexOf('/', cut - 1);
      }
      prefix = name.substring(0, cut);
      name = name.substring(cut + 1);
      if (name.length() > 100 || cut < 0) {
        throw new IOException("path too long for the tar: " + prefix + "/" + name);
      }
    }
    put(h, 0, 100, name);
    put(h, 100, 8, String.format("%07o", mode));
    put(h, 108, 8, String.format("%07o", owner));
    put(h, 116, 8, String.format("%07o", owner));
    put(h, 124, 12, String.format("%011o", size));
    put(h, 136, 12, String.format("%011o", epoch));
    for (int i = 148; i < 156; i++) {
      h[i] = ' ';
    }
    h[156] = type;
    put(h, 157, 100, link);
    put(h, 257, 6, "ustar");
    put(h, 263, 2, "00");
    put(h, 265, 32, owner == 0 ? "root" : "sluice");
    put(h, 297, 32, owner == 0 ? "root" : "sluice");
    put(h, 345, 155, prefix);
    long sum = 0;
    for (byte b : h) {
      sum += b & 0xff;
    }
    put(h, 148, 8, String.format("%06o", sum) + "\0 ");
    tar.write(h);
  }

  private static void put(byte[] h, int at, int len, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(b, 0, h, at, Math.min(len, b.length));
  }

  private void image(Path out, String version, List<String[]> layers) throws Exception {
    String created = java.time.Instant.ofEpochSecond(epoch).toString();
    Map<String, String> labels = new TreeMap<>();
    labels.put("org.opencontainers.image.title", "sluice");
    labels.put("org.opencontainers.image.description", "Sluice: rate limiting and abuse control "
        + "for the JVM, as a gateway (sluice serve)");
    labels.put("org.opencontainers.image.version", version);
    String root = o.getOrDefault("root", ".");
    String source = o.getOrDefault("source", "");
    if (source.isBlank()) {
      source = git(root, "config", "--get", "remote.origin.url");
    }
    labels.put("org.opencontainers.image.source", source);
    labels.put("org.opencontainers.image.revision", git(root, "rev-parse", "HEAD"));
    labels.put("org.opencontainers.image.licenses", o.getOrDefault("licenses", ""));
    labels.put("org.opencontainers.image.created", created);
    labels.put("org.opencontainers.image.base.name", "scratch");
    labels.values().removeIf(String::isEmpty);
    String entry = json(List.of("/" + JAVA + "/bin/java", "-XX:SharedArchiveFile=/" + APP
        + "/lib/sluice.jsa", "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
        "-XX:MaxRAMPercentage=75", "-jar", "/" + APP + "/lib/sluice.jar", "serve"));
    String cmd = json(List.of("--listen", "0.0.0.0:8080", "--admin", "0.0.0.0:9090",
        "--admin-token-file", "/run/secrets/sluice/admin-token"));
    StringBuilder diffIds = new StringBuilder();
    StringBuilder history = new StringBuilder();
    StringBuilder layerDescs = new StringBuilder();
    String[] what = {"Debian's libc6 (libraries), /etc/passwd with sluice (65532), /tmp",
        "a Java runtime jlinked from the modules Sluice uses", "sluice.jar, its class-data "
        + "archive, examples"};
    for (int i = 0; i < layers.size(); i++) {
      String sep = i == 0 ? "" : ",";
      diffIds.append(sep).append(str(layers.get(i)[1]));
      history.append(sep).append("{\"created\":").append(str(created))
          .append(",\"created_by\":").append(str("ImageBuilder: " + what[i])).append('}');
      layerDescs.append(sep).append("{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+"
          + "gzip\",\"digest\":").append(str(layers.get(i)[0])).append(",\"size\":")
          .append(layers.get(i)[2]).append('}');
    }
    String config = "{\"created\":" + str(created) + ",\"architecture\":\"amd64\",\"os\":"
        + "\"linux\",\"config\":{\"User\":\"" + UID + ":" + UID + "\",\"ExposedPorts\":"
        + "{\"8080/tcp\":{},\"9090/tcp\":{}},\"Env\":[\"PATH=/" + JAVA + "/bin\",\"JAVA_HOME=/"
        + JAVA + "\"],\"Entrypoint\":" + entry + ",\"Cmd\":" + cmd + ",\"WorkingDir\":\"/\","
        + "\"Labels\":" + map(labels) + ",\"StopSignal\":\"SIGTERM\"},\"rootfs\":{\"type\":"
        + "\"layers\",\"diff_ids\":[" + diffIds + "]},\"history\":[" + history + "]}";
    byte[] cfg = config.getBytes(StandardCharsets.UTF_8);
    String cfgDigest = blob(out, cfg);
    String manifest = "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest."
        + "v1+json\",\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
        + "\"digest\":" + str(cfgDigest) + ",\"size\":" + cfg.length + "},\"layers\":["
        + layerDescs + "],\"annotations\":" + map(labels) + "}";
    byte[] man = manifest.getBytes(StandardCharsets.UTF_8);
    String manDigest = blob(out, man);
    Files.writeString(out.resolve("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
    Files.writeString(out.resolve("index.json"), "{\"schemaVersion\":2,\"mediaType\":"
        + "\"application/vnd.oci.image.index.v1+json\",\"manifests\":[{\"mediaType\":"
        + "\"application/vnd.oci.image.manifest.v1+json\",\"digest\":" + str(manDigest)
        + ",\"size\":" + man.length + ",\"annotations\":{\"org.opencontainers.image.ref.name\":"
        + str(version) + "}}]}");
    long compressed = 0;
    for (String[] l : layers) {
      compressed += Long.parseLong(l[2]);
    }
    System.out.printf("image: %s (%s), layers %.1f MB compressed%n", out, manDigest,
        compressed / 1e6);
  }

  private static String blob(Path out, byte[] data) throws Exception {
    String hex = sha256(data);
    Files.write(out.resolve("blobs/sha256/" + hex), data);
    return "sha256:" + hex;
  }

  private static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }

  private static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  private static String json(List<String> items) {
    List<String> q = new ArrayList<>();
    items.forEach(i -> q.add(str(i)));
    return "[" + String.join(",", q) + "]";
  }

  private static String map(Map<String, String> m) {
    List<String> q = new ArrayList<>();
    m.forEach((k, v) -> q.add(str(k) + ":" + str(v)));
    return "{" + String.join(",", q) + "}";
  }

  // --- files and processes ---------------------------------------------------------------------

  private static void run(Path dir, List<String> cmd, String what) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException(what + " failed (" + String.join(" ", cmd) + "):\n" + out);
    }
  }

  /** A git answer about the checkout, or "" where there is none (no git, no remote). */
  private static String git(String root, String... args) {
    List<String> cmd = new ArrayList<>(List.of("git", "-C", root));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return p.waitFor() == 0 ? out : "";
    } catch (Exception e) {
      return "";
    }
  }

  private static String capture(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed:\n" + out);
    }
    return out;
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.sorted().toList()) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else {
          Files.copy(p, t);
        }
      }
    }
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path x : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(x);
      }
    }
  }
}
