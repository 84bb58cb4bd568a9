package dev.sluice.moderation;

import dev.sluice.core.InvalidValueException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Checks the free text that players show each other: usernames, display names, room names and
 * reactions. Thread-safe and immutable; build one and share it.
 *
 * <pre>{@code
 * Moderator moderator = Moderator.builder().lists(Path.of("/etc/sluice/lists")).build();
 * Ruling r = moderator.check("p4yp\u0430l", Surface.USERNAME);   // Cyrillic a
 * if (!r.allowed()) {
 *   reject(r.reason().label());              // mixed_scripts; r.matchedTerm() is for logs only
 * }
 * }</pre>
 *
 * <p>A name goes through: refusal of control, bidirectional, invisible, unassigned and stacked
 * combining characters; length in grapheme clusters; NFKC case folding; the block and reserved
 * lists, matched on UTS #39 confusable skeletons, leetspeak readings, repeated letters, words,
 * segments and spaced-out letters; then the UTS #39 restriction level. A reaction must be in the
 * palette. {@link #check} never throws for any text (only for a null argument).
 */
public interface Moderator {

  /** Checks one text for one surface. */
  Ruling check(CharSequence text, Surface surface);

  /**
   * The proposed display name when it passes, otherwise an Adjective + Noun + 4 digits name
   * ("BraveOtter0427") that passes: up to 16 tries from {@code random}, then "Player" and 4
   * digits (even where display names are configured shorter than that). A seeded random gives the
   * same names every time.
   */
  String displayName(CharSequence proposed, RandomGenerator random);

  /** A builder with the built-in lists (a starter block list, reserved names, a 16-emoji palette). */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Each setter replaces one list or setting and checks it at once: a bad entry fails with
   * {@code blocked[3] : "--" (expected: at least one letter or digit)} or, from a file,
   * {@code lists/blocked.txt:3 : ...}. {@link #build()} checks what spans several settings.
   */
  final class Builder {

    private final Map<String, List<Lists.Entry>> lists = new HashMap<>();
    private final Map<Surface, SurfaceRules> rules = new EnumMap<>(Surface.class);
    private int shortTermLength = 4;
    private List<String> adjectives = NameGenerator.ADJECTIVES;
    private List<String> nouns = NameGenerator.NOUNS;

    Builder() {
      for (String list : Lists.NAMES) {
        set(list, Lists.builtIn(list));
      }
      for (Surface s : new Surface[] {Surface.USERNAME, Surface.DISPLAY_NAME, Surface.ROOM_NAME}) {
        rules.put(s, SurfaceRules.of(s));
      }
    }

    /** Replaces the block list. {@code *term*} also matches inside words. */
    public Builder blocked(Collection<String> terms) {
      return set(Lists.BLOCKED, Lists.of(Lists.BLOCKED, terms));
    }

    /** Replaces the reserved names (matched like block-list words, reported as RESERVED). */
    public Builder reserved(Collection<String> terms) {
      return set(Lists.RESERVED, Lists.of(Lists.RESERVED, terms));
    }

    /** Replaces the allow list: words in which no term matches ("scunthorpe", "snigger"). */
    public Builder allowed(Collection<String> words) {
      return set(Lists.ALLOWED, Lists.of(Lists.ALLOWED, words));
    }

    /** Replaces the reaction palette: whole emoji sequences, one per entry. */
    public Builder palette(Collection<String> reactions) {
      return set(Lists.PALETTE, Lists.of(Lists.PALETTE, reactions));
    }

    /**
     * Reads {@code blocked.txt}, {@code reserved.txt}, {@code allowed.txt} and {@code palette.txt}
     * from a directory; each file present replaces that list, a missing one keeps the current
     * list (an empty file empties it). A directory holding none of them is an error.
     */
    public Builder lists(Path directory) {
      if (directory == null || !Files.isDirectory(directory)) {
        throw new InvalidValueException("lists", String.valueOf(directory), "a directory");
      }
      Map<String, List<Lists.Entry>> read = new HashMap<>();
      for (String list : Lists.NAMES) {
        List<Lists.Entry> entries = Lists.read(directory, list);
        if (entries != null) {
          check(list, entries);
          read.put(list, entries);
        }
      }
      if (read.isEmpty()) {
        throw new InvalidValueException("lists", directory.toString(),
            "a directory with blocked.txt, reserved.txt, allowed.txt or palette.txt");
      }
      lists.putAll(read);
      return this;
    }

    /** Replaces the rules of the surface they name. */
    public Builder rules(SurfaceRules surfaceRules) {
      if (surfaceRules == null) {
        throw new InvalidValueException("rules", "null", "SurfaceRules for a name surface");
      }
      rules.put(surfaceRules.surface(), surfaceRules);
      return this;
    }

    /**
     * Terms up to this many characters (4 by default) match only as a whole segment; longer ones
     * also match a word inside a segment. Seed 001's defence against "ass" in "class".
     */
    public Builder shortTermLength(int length) {
      if (length < 0 || length > Lists.MAX_TERM) {
        throw new InvalidValueException("shortTermLength", String.valueOf(length),
            "0.." + Lists.MAX_TERM);
      }
      this.shortTermLength = length;
      return this;
    }

    /** Replaces the display-name fallback's words; each must itself pass as a display name. */
    public Builder fallbackWords(Collection<String> adjectives, Collection<String> nouns) {
      this.adjectives = words("fallbackAdjectives", adjectives);
      this.nouns = words("fallbackNouns", nouns);
      return this;
    }

    public Moderator build() {
      List<Term> terms = new ArrayList<>();
      Map<String, String> termKeys = new HashMap<>();
      for (String list : List.of(Lists.BLOCKED, Lists.RESERVED)) {
        Reason reason = list.equals(Lists.BLOCKED) ? Reason.BLOCKED_TERM : Reason.RESERVED;
        for (Lists.Entry e : lists.get(list)) {
          Lists.Parsed p = Lists.term(e, reason == Reason.BLOCKED_TERM);
          terms.add(new Term(p.written, reason, p.anywhere, p.key, shortTermLength));
          termKeys.putIfAbsent(collapsed(p.key), p.written);
        }
      }
      Set<String> allowed = new HashSet<>();
      for (Lists.Entry e : lists.get(Lists.ALLOWED)) {
        String k = collapsed(Lists.term(e, false).key);
        if (termKeys.containsKey(k)) {
          throw new InvalidValueException(e.where, Lists.quote(e.text),
              "a word that is not itself a blocked or reserved term (" + termKeys.get(k) + ")");
        }
        allowed.add(k);
      }
      List<String> palette = new ArrayList<>();
      for (Lists.Entry e : lists.get(Lists.PALETTE)) {
        palette.add(Lists.paletteEntry(e));
      }
      DefaultModerator m = new DefaultModerator(new TermIndex(terms, allowed), rules,
          new Palette(palette), new NameGenerator(adjectives, nouns));
      m.checkFallback(adjectives, nouns);
      return m;
    }

    /** A key with repeats collapsed, as words and allowed words are indexed. */
    private static String collapsed(String key) {
      Runs r = Runs.of(key);
      return r.collapsed(0, r.size);
    }

    private Builder set(String list, List<Lists.Entry> entries) {
      check(list, entries);
      lists.put(list, entries);
      return this;
    }

    private static void check(String list, List<Lists.Entry> entries) {
      for (Lists.Entry e : entries) {
        if (list.equals(Lists.PALETTE)) {
          Lists.paletteEntry(e);
        } else {
          Lists.term(e, list.equals(Lists.BLOCKED));
        }
      }
    }

    private static List<String> words(String field, Collection<String> words) {
      if (words == null || words.isEmpty() || words.size() > 10_000) {
        throw new InvalidValueException(field, String.valueOf(words), "1..10000 words");
      }
      for (String w : words) {
        if (w == null || w.isBlank() || w.length() > 24) {
          throw new InvalidValueException(field, Lists.quote(w), "a word of 1..24 characters");
        }
      }
      return List.copyOf(words);
    }
  }
}
