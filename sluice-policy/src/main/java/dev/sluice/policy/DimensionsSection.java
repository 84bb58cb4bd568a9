package dev.sluice.policy;

import static dev.sluice.policy.Values.quote;

import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Source;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;

/** The {@code dimensions:} section: where key values come from. {@code ip} is always declared. */
final class DimensionsSection {

  private DimensionsSection() {}

  /** The declared names, {@code ip} first; the sources go to {@code policy}. */
  static Set<String> read(Walk walk, Mapping doc, Policy.Builder policy) {
    Set<String> names = new LinkedHashSet<>();
    names.add("ip");
    Mapping dims = doc.section("dimensions", null,
        "a mapping of dimension names to sources (" + Values.SOURCES + ")");
    if (dims == null) {
      return names;
    }
    for (Map.Entry<String, NodeTuple> e : dims.fields.entrySet()) {
      String name = e.getKey();
      Node keyNode = e.getValue().getKeyNode();
      try {
        policy.dimension(name, Source.clientAddress());
      } catch (IllegalArgumentException ex) {
        walk.error(keyNode, dims.path(name), quote(name),
            "a dimension name: letters, digits, '-' or '_', starting with a letter");
        continue;
      }
      Source source = walk.scalar(e.getValue().getValueNode(), dims.path(name),
          Values.SOURCES, Values::source);
      if (source != null) {
        policy.dimension(name, source);
      }
      names.add(name);
    }
    return names;
  }
}
