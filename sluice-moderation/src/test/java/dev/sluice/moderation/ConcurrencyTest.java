package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One moderator shared by threads: the key cache's racy fills and the grapheme iterators. */
class ConcurrencyTest {

  @Test
  void sharedModerator_givesEveryThreadTheSameRulings() throws Exception {
    Moderator m = Moderator.builder().build();
    List<String> names = new ArrayList<>();
    for (int cp = 0x400; cp < 0x1000; cp += 7) { // code points no other test has keyed yet
      names.add("n" + new String(Character.toChars(cp)) + "zi99 \u00E9\u0301 \uD83D\uDC4D");
    }
    names.add("f\u057Dck");
    List<Ruling> expected = names.stream().map(n -> m.check(n, Surface.DISPLAY_NAME)).toList();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Ruling>>> runs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        runs.add(pool.submit(() -> {
          Moderator own = Moderator.builder().build();
          return names.stream().map(n -> own.check(n, Surface.DISPLAY_NAME)).toList();
        }));
        runs.add(pool.submit(() -> names.stream()
            .map(n -> m.check(n, Surface.DISPLAY_NAME)).toList()));
      }
      for (Future<List<Ruling>> run : runs) {
        assertThat(run.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
