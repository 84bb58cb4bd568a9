package dev.sluice.moderation;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Seed 001's lobby fallback: a refused display name is swapped for Adjective + Noun + 4 digits
 * ("BraveOtter0427"), up to 16 tries, each checked by the moderator like any other name. The
 * random source is the caller's, so a seeded one gives the same names in tests.
 */
final class NameGenerator {

  static final int ATTEMPTS = 16;
  /** The last resort after 16 refusals; the builder checks that "Player0000" passes. */
  static final String LAST_RESORT = "Player";

  static final List<String> ADJECTIVES = List.of("Brave", "Bright", "Calm", "Cheerful", "Clever",
      "Cosmic", "Curious", "Daring", "Eager", "Fancy", "Gentle", "Happy", "Jolly", "Kind", "Lively",
      "Lucky", "Mellow", "Merry", "Mighty", "Nimble", "Noble", "Plucky", "Quick", "Quiet", "Rapid",
      "Shiny", "Silent", "Sunny", "Swift", "Witty", "Zesty", "Bold");

  static final List<String> NOUNS = List.of("Badger", "Beacon", "Comet", "Condor", "Falcon", "Fox",
      "Gecko", "Heron", "Koala", "Lynx", "Maple", "Meteor", "Narwhal", "Otter", "Owl", "Panda",
      "Pebble", "Pixel", "Puffin", "Quokka", "Raven", "Robin", "Rocket", "Sparrow", "Tiger",
      "Toucan", "Walrus", "Willow", "Wombat", "Yak", "Zebra", "Lantern");

  private final List<String> adjectives;
  private final List<String> nouns;

  NameGenerator(List<String> adjectives, List<String> nouns) {
    this.adjectives = List.copyOf(adjectives);
    this.nouns = List.copyOf(nouns);
  }

  String next(RandomGenerator random) {
    return adjectives.get(random.nextInt(adjectives.size()))
        + nouns.get(random.nextInt(nouns.size())) + digits(random);
  }

  static String digits(RandomGenerator random) {
    int n = random.nextInt(10_000);
    char[] d = {'0', '0', '0', '0'};
    for (int i = 3; i >= 0; i--, n /= 10) {
      d[i] = (char) ('0' + n % 10);
    }
    return new String(d);
  }
}
