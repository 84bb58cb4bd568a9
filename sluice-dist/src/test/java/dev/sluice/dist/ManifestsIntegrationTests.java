package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import tools.jackson.databind.ObjectMapper;
import dev.sluice.policy.PolicyLoader;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The Kubernetes manifests (sluice-dist/src/k8s: a kustomize base and its overlays) built with
 * {@code kubectl kustomize} and read strictly into the Kubernetes API's model classes (fabric8):
 * every field must be one the API has (a misspelt {@code readinessProbe} would land in a model's
 * additional properties, and fails here), each kind where it belongs, and what the docs promise
 * holds: probes on the admin listener, the policy ConfigMap loadable by sluice, the token from a
 * Secret, a non-root read-only container, the admin port kept in the cluster.
 */
class ManifestsIntegrationTests {

  static final Path ROOT = Path.of(System.getProperty("sluice.root")).normalize();
  static final Path K8S = ROOT.resolve("sluice-dist/src/k8s");
  static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
      "Deployment", Deployment.class, "Service", Service.class, "ConfigMap", ConfigMap.class,
      "PodDisruptionBudget", PodDisruptionBudget.class, "NetworkPolicy", NetworkPolicy.class);
  static final Map<String, String> API = Map.of("Deployment", "apps/v1", "Service", "v1",
      "ConfigMap", "v1", "PodDisruptionBudget", "policy/v1", "NetworkPolicy",
      "networking.k8s.io/v1");

  /**
   * Whether a kubectl with kustomize v4 or newer is on the PATH. It is the one tool these tests
   * need that no package registry this project installs from carries (Debian's kubectl has
   * kustomize v2, which cannot read {@code labels} or {@code patches}); without it the manifests'
   * test is reported as not run, loudly, rather than failing every other test's run.
   */
  static boolean kustomizeV4() {
    try {
      Process p = new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true)
          .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      Matcher m = Pattern.compile("Kustomize Version: v(\\d+)").matcher(out);
      return p.waitFor() == 0 && m.find() && Integer.parseInt(m.group(1)) >= 4;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static List<HasMetadata> build(String overlay) throws Exception {
    assumeTrue(kustomizeV4(),
        "NOT RUN: kubectl with kustomize v4+ is not on the PATH");
    Process p = new ProcessBuilder("kubectl", "kustomize", K8S.resolve("overlays/" + overlay)
        .toString()).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as("kubectl kustomize %s: %s", overlay, err).isZero();
    ObjectMapper json = new ObjectMapper();
    List<HasMetadata> docs = new ArrayList<>();
    for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(out)) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) doc;
      String kind = (String) m.get("kind");
      assertThat(KINDS).as("a kind these manifests use").containsKey(kind);
      assertThat(m.get("apiVersion")).as(kind).isEqualTo(API.get(kind));
      HasMetadata r = json.convertValue(m, KINDS.get(kind));
      assertStrict(r, kind + " " + r.getMetadata().getName(), new IdentityHashMap<>());
      docs.add(r);
    }
    return docs;
  }

  /** No field that the API does not have: fabric8 keeps those in additionalProperties. */
  static void assertStrict(Object o, String where, IdentityHashMap<Object, Boolean> seen)
      throws Exception {
    if (o == null || seen.put(o, true) != null) {
      return;
    }
    if (o instanceof List<?> l) {
      for (int i = 0; i < l.size(); i++) {
        assertStrict(l.get(i), where + "[" + i + "]", seen);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        assertStrict(e.getValue(), where + "." + e.getKey(), seen);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || !m.getName().startsWith("get")
          || m.getDeclaringClass() == Object.class) {
        continue;
      }
      Object v = m.invoke(o);
      if (m.getName().equals("getAdditionalProperties")) {
        assertThat((Map<?, ?>) v).as("fields the API does not have, in %s", where).isEmpty();
      } else {
        assertStrict(v, where + "." + m.getName().substring(3), seen);
      }
    }
  }

  static <T> T one(List<HasMetadata> docs, Class<T> type) {
    List<T> of = docs.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(of).as(type.getSimpleName()).hasSize(1);
    return of.get(0);
  }

  static Container container(PodSpec pod, String name) {
    return pod.getContainers().stream().filter(c -> c.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }

  static Map<String, String> args(Container c) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String a : c.getArgs()) {
      int eq = a.indexOf('=');
      out.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"gateway", "redis", "sidecar"})
  void overlay_isValidKubernetes_andKeepsTheBasesPromises(String overlay) throws Exception {
    List<HasMetadata> docs = build(overlay);
    Deployment d = one(docs, Deployment.class);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    Container sluice = container(pod, "sluice");
    assertThat(sluice.getImage()).isEqualTo("sluice:0.1.0-SNAPSHOT");
    Map<String, String> args = args(sluice);
    assertThat(args).containsEntry("--config", "/etc/sluice/policy/policy.yaml")
        .containsEntry("--admin", "0.0.0.0:9090")
        .containsEntry("--admin-token-file", "/run/secrets/sluice/admin-token");
    // Probes on the admin listener: readiness waits for the store, liveness for the process.
    assertThat(sluice.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(sluice.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
    assertThat(sluice.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("admin");
    assertThat(sluice.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("admin");
    assertThat(sluice.getPorts()).anyMatch(p -> p.getName().equals("admin")
        && p.getContainerPort() == 9090);
    assertThat(sluice.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(sluice.getResources().getLimits().get("memory").toString()).isEqualTo("512Mi");
    // Non-root, read-only, nothing to escalate.
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
    assertThat(sluice.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(sluice.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(sluice.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    // The token from a Secret, the policy from the ConfigMap, mounted where the args say.
    assertThat(pod.getVolumes()).anyMatch(v -> v.getSecret() != null
        && v.getSecret().getSecretName().equals("sluice-admin-token")
        && v.getSecret().getItems().get(0).getPath().equals("admin-token"));
    ConfigMap policy = one(docs, ConfigMap.class);
    assertThat(policy.getMetadata().getName()).as("no hash suffix: edited in place, reloaded")
        .isEqualTo("sluice-policy");
    assertThat(pod.getVolumes()).anyMatch(v -> v.getConfigMap() != null
        && v.getConfigMap().getName().equals("sluice-policy"));
    assertThat(policy.getData().get("policy.yaml"))
        .isEqualTo(Files.readString(ROOT.resolve("examples/seed-000-default.yaml")));
    PolicyLoader.parse(policy.getData().get("policy.yaml"), "policy.yaml", null, Map.of());
    // Selectors match the pods.
    Map<String, String> labels = d.getSpec().getTemplate().getMetadata().getLabels();
    assertThat(labels).containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
    Service svc = one(docs, Service.class);
    assertThat(labels).containsAllEntriesOf(svc.getSpec().getSelector());
    PodDisruptionBudget pdb = one(docs, PodDisruptionBudget.class);
    assertThat(labels).containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
    assertThat(pdb.getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
    // The admin port only from pods of the cluster; the gateway port from anywhere.
    NetworkPolicy np = one(docs, NetworkPolicy.class);
    assertThat(labels).containsAllEntriesOf(np.getSpec().getPodSelector().getMatchLabels());
    var ingress = np.getSpec().getIngress();
    assertThat(ingress).anyMatch(r -> r.getFrom().isEmpty()
        && r.getPorts().get(0).getPort().getStrVal().equals("http"));
    assertThat(ingress).filteredOn(r -> r.getPorts().stream()
        .anyMatch(p -> "admin".equals(p.getPort().getStrVal())))
        .singleElement().satisfies(r -> {
          assertThat(r.getFrom()).singleElement().satisfies(peer -> {
            assertThat(peer.getNamespaceSelector()).isNotNull();
            assertThat(peer.getIpBlock()).isNull();
          });
        });
    switch (overlay) {
      case "gateway" -> {
        assertThat(args).containsEntry("--upstream", "http://app:8080");
        assertThat(sluice.getEnv()).isEmpty();
      }
      case "redis" -> {
        assertThat(d.getSpec().getReplicas()).isEqualTo(3);
        assertThat(sluice.getEnv()).singleElement().satisfies(e -> {
          assertThat(e.getName()).isEqualTo("SLUICE_STORE");
          assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("sluice-redis");
          assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("uri");
        });
      }
      default -> {
        assertThat(pod.getContainers()).extracting(Container::getName)
            .containsExactlyInAnyOrder("sluice", "app");
        assertThat(args).containsEntry("--upstream", "http://127.0.0.1:3000");
        assertThat(container(pod, "app").getPorts().get(0).getContainerPort()).isEqualTo(3000);
      }
    }
  }
}
