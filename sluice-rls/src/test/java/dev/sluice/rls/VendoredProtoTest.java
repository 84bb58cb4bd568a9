package dev.sluice.rls;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.Struct;
import com.google.protobuf.Timestamp;
import com.google.protobuf.UInt64Value;
import com.google.protobuf.Value;
import dev.sluice.rls.envoy.HeaderValue;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitResponse;
import dev.sluice.rls.envoy.RateLimitUnit;
import dev.sluice.rls.envoy.RlsProto;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The vendored, trimmed .proto files (src/main/proto) against Envoy's own generated API (the
 * io.envoyproxy.controlplane:api artifact, a test dependency only): the service, and every
 * message and enum it reaches, must have the same full names, field names, numbers, types,
 * labels, oneofs and enum values, so both encode every message to the same bytes. Then bytes
 * written by one are read by the other and written back unchanged, both ways.
 */
class VendoredProtoTest {

  @Test
  void service_andEveryTypeItReaches_matchEnvoysOnTheWire() {
    assertThat(render(RlsProto.getDescriptor().findServiceByName("RateLimitService")))
        .isEqualTo(render(io.envoyproxy.envoy.service.ratelimit.v3.RlsProto.getDescriptor()
            .findServiceByName("RateLimitService")))
        .contains("message envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus",
            "message envoy.config.core.v3.HeaderValue",
            "enum envoy.type.v3.RateLimitUnit",
            "3 raw_value BYTES optional");
  }

  @Test
  void aFullResponse_readByEnvoysClasses_isWrittenBackByteForByte() throws Exception {
    RateLimitResponse ours = RateLimitResponse.newBuilder()
        .setOverallCode(RateLimitResponse.Code.OVER_LIMIT)
        .addStatuses(RateLimitResponse.DescriptorStatus.newBuilder()
            .setCode(RateLimitResponse.Code.OVER_LIMIT)
            .setCurrentLimit(RateLimitResponse.RateLimit.newBuilder().setName("per-minute")
                .setRequestsPerUnit(30).setUnit(RateLimitResponse.RateLimit.Unit.WEEK))
            .setLimitRemaining(0)
            .setDurationUntilReset(Duration.newBuilder().setSeconds(42).setNanos(7))
            .setQuota(RateLimitResponse.Quota.newBuilder().setRequests(3).setId("q")
                .setValidUntil(Timestamp.newBuilder().setSeconds(1_700_000_000L))))
        .addResponseHeadersToAdd(HeaderValue.newBuilder().setKey("RateLimit")
            .setValue("\"per-minute\";r=0;t=42"))
        .addRequestHeadersToAdd(HeaderValue.newBuilder().setKey("x-raw")
            .setRawValue(ByteString.copyFrom(new byte[] {(byte) 0xff, 0})))
        .setRawBody(ByteString.copyFromUtf8("slow down"))
        .setDynamicMetadata(Struct.newBuilder().putFields("k",
            Value.newBuilder().setStringValue("v").build()))
        .setQuota(RateLimitResponse.Quota.newBuilder().setRequests(1))
        .build();
    byte[] bytes = ours.toByteArray();
    var envoys = io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.parseFrom(bytes);
    assertThat(envoys.getUnknownFields().asMap()).isEmpty();
    assertThat(envoys.getStatuses(0).getCurrentLimit().getUnit().name()).isEqualTo("WEEK");
    assertThat(envoys.getRequestHeadersToAdd(0).getRawValue())
        .isEqualTo(ByteString.copyFrom(new byte[] {(byte) 0xff, 0}));
    assertThat(envoys.toByteArray()).isEqualTo(bytes);
  }

  @Test
  void aFullRequest_writtenByEnvoysClasses_isReadByOurs() throws Exception {
    var envoys = io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest.newBuilder()
        .setDomain("edge").setHitsAddend(2)
        .addDescriptors(io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor
            .newBuilder()
            .addEntries(io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor
                .Entry.newBuilder().setKey("remote_address").setValue("203.0.113.7"))
            .setLimit(io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor
                .RateLimitOverride.newBuilder().setRequestsPerUnit(5)
                .setUnit(io.envoyproxy.envoy.type.v3.RateLimitUnit.YEAR))
            .setHitsAddend(UInt64Value.of(0)))
        .build();
    byte[] bytes = envoys.toByteArray();
    RateLimitRequest ours = RateLimitRequest.parseFrom(bytes);
    assertThat(ours.getUnknownFields().asMap()).isEmpty();
    RateLimitDescriptor d = ours.getDescriptors(0);
    assertThat(d.getEntries(0).getValue()).isEqualTo("203.0.113.7");
    assertThat(d.getLimit().getUnit()).isEqualTo(RateLimitUnit.YEAR);
    assertThat(d.hasHitsAddend()).isTrue();
    assertThat(ours.toByteArray()).isEqualTo(bytes);
  }

  /** The service and, depth first, every message and enum its methods reach, as text. */
  static String render(ServiceDescriptor service) {
    StringBuilder sb = new StringBuilder("service " + service.getFullName() + "\n");
    Set<String> seen = new LinkedHashSet<>();
    for (MethodDescriptor m : service.getMethods()) {
      sb.append("  rpc ").append(m.getName()).append('(').append(m.getInputType().getFullName())
          .append(") returns (").append(m.getOutputType().getFullName()).append(")\n");
      message(m.getInputType(), sb, seen);
      message(m.getOutputType(), sb, seen);
    }
    return sb.toString();
  }

  private static void message(Descriptor d, StringBuilder sb, Set<String> seen) {
    if (!seen.add(d.getFullName())) {
      return;
    }
    sb.append("message ").append(d.getFullName()).append('\n');
    for (FieldDescriptor f : d.getFields()) {
      sb.append("  ").append(f.getNumber()).append(' ').append(f.getName()).append(' ')
          .append(f.getType()).append(f.isRepeated() ? " repeated" : " optional")
          .append(f.isPacked() ? " packed" : "");
      if (f.getRealContainingOneof() != null) {
        sb.append(" oneof ").append(f.getRealContainingOneof().getName());
      }
      if (f.getType() == FieldDescriptor.Type.MESSAGE) {
        sb.append(' ').append(f.getMessageType().getFullName());
      } else if (f.getType() == FieldDescriptor.Type.ENUM) {
        sb.append(' ').append(f.getEnumType().getFullName());
      }
      sb.append('\n');
    }
    for (FieldDescriptor f : d.getFields()) {
      if (f.getType() == FieldDescriptor.Type.MESSAGE) {
        message(f.getMessageType(), sb, seen);
      } else if (f.getType() == FieldDescriptor.Type.ENUM) {
        enumeration(f.getEnumType(), sb, seen);
      }
    }
  }

  private static void enumeration(EnumDescriptor e, StringBuilder sb, Set<String> seen) {
    if (!seen.add(e.getFullName())) {
      return;
    }
    sb.append("enum ").append(e.getFullName()).append('\n');
    e.getValues().forEach(v -> sb.append("  ").append(v.getNumber()).append(' ')
        .append(v.getName()).append('\n'));
  }
}
