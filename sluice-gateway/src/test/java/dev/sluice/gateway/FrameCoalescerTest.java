package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FrameCoalescerTest {

  private final FrameCoalescer c = new FrameCoalescer(8, ByteBufAllocator.DEFAULT);
  private final List<WebSocketFrame> out = new ArrayList<>();

  @AfterEach
  void release() {
    out.forEach(WebSocketFrame::release);
    c.discard();
  }

  private static String describe(WebSocketFrame f) {
    return f.getClass().getSimpleName().replace("WebSocketFrame", "") + (f.isFinalFragment()
        ? "" : "+") + ":" + f.content().toString(StandardCharsets.UTF_8);
  }

  private List<String> seen() {
    return out.stream().map(FrameCoalescerTest::describe).toList();
  }

  @Test
  void fragments_becomeOneFrame_andControlFramesPassBetweenThem() {
    c.add(new TextWebSocketFrame(false, 0, "ab"), out::add);
    c.add(new PingWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {1})), out::add);
    c.add(new ContinuationWebSocketFrame(false, 0, "cd"), out::add);
    c.add(new ContinuationWebSocketFrame(true, 0, "e"), out::add);
    assertThat(out).hasSize(2);
    assertThat(out.get(0)).isInstanceOf(PingWebSocketFrame.class);
    assertThat(describe(out.get(1))).isEqualTo("Text:abcde");
  }

  @Test
  void unfragmentedMessages_passAsTheyAre() {
    TextWebSocketFrame t = new TextWebSocketFrame("whole");
    c.add(t, out::add);
    assertThat(out).containsExactly(t);
  }

  @Test
  void pastTheCap_goesUpInPiecesOfTheCap() {
    c.add(new BinaryWebSocketFrame(false, 0, Unpooled.copiedBuffer("12345", StandardCharsets.UTF_8)),
        out::add);
    c.add(new ContinuationWebSocketFrame(false, 0, "6789"), out::add);
    c.add(new ContinuationWebSocketFrame(true, 0, "abc"), out::add);
    assertThat(seen()).containsExactly("Binary+:12345", "Continuation:6789abc");
  }
}
