package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * The block and reserved lists, keyed, and the matching of one keyed name against them. Rules,
 * from seed 001 (its Scunthorpe defence) plus the leet readings and runs:
 *
 * <ul>
 *   <li>a term matches a candidate word (or one of its {@link Leet} readings) that equals it
 *       run by run ({@link Runs});
 *   <li>a long term (more than the short-term length, 4 by default) also matches a word inside a
 *       segment when no letter touches either end: "nazi" in "nazi99" and "x-nazi", never in
 *       "Scunthorpe"-like words; a short term must be the whole segment ("ass" is not in "class",
 *       "assassin" or "Cassandra");
 *   <li>a "*term*" entry matches anywhere inside a word, unless the word it sits in is on the
 *       allow list (so "*cum*" can be listed with "document" and "cumulus" allowed);
 *   <li>a word on the allow list never matches.
 * </ul>
 */
final class TermIndex {

  private final Map<String, Term[]> words = new HashMap<>();
  private final Map<Integer, Term[]> anywhere = new HashMap<>();
  /** Every prefix of every word term's collapsed key: a join that is no prefix stops growing. */
  private final Set<String> prefixes = new HashSet<>();
  private final Set<String> allowed;

  /** @param allowed the allow list's keys, collapsed ({@link Runs}) */
  TermIndex(List<Term> terms, Set<String> allowed) {
    for (Term t : terms) {
      Runs r = t.runs;
      if (t.anywhere) {
        anywhere.merge(r.cps[0], new Term[] {t}, TermIndex::concat);
      } else {
        words.merge(r.collapsed(0, r.size), new Term[] {t}, TermIndex::concat);
        for (int i = 1; i <= r.size; i++) {
          prefixes.add(r.collapsed(0, i));
        }
      }
    }
    this.allowed = allowed;
  }

  /** The most severe term matching the keyed name, or null. */
  Term find(String key, IntPredicate separator) {
    if (words.isEmpty() && anywhere.isEmpty()) {
      return null;
    }
    Candidates c = new Candidates(key, separator);
    Term found = null;
    for (String candidate : c.words) {
      found = Term.worse(found, match(candidate, true));
      if (found != null && found.reason == Reason.BLOCKED_TERM) {
        return found;
      }
    }
    found = Term.worse(found, joins(c.segments));
    if (c.whole != null && (found == null || found.reason != Reason.BLOCKED_TERM)) {
      found = Term.worse(found, match(c.whole, false));
    }
    return found;
  }

  /** The readings of one candidate against the lists: whole words, and inside words if asked. */
  private Term match(String candidate, boolean inside) {
    Term found = null;
    for (String reading : Leet.readings(candidate)) {
      found = Term.worse(found, match(Runs.of(reading), inside));
      if (found != null && found.reason == Reason.BLOCKED_TERM) {
        break;
      }
    }
    return found;
  }

  /**
   * Consecutive short segments joined, whole-word matches only. A join grows while one of its
   * readings is still the prefix of a term, so "a b c d ... 9" costs a few lookups per segment,
   * not one per pair of segments.
   */
  private Term joins(List<String> segments) {
    Term found = null;
    for (int i = 0; i + 1 < segments.size(); i++) {
      StringBuilder join = new StringBuilder();
      for (int j = i; j < segments.size() && Candidates.isShort(segments.get(j)); j++) {
        join.append(segments.get(j));
        List<String> readings = Leet.readings(join.toString());
        boolean viable = false;
        for (String reading : readings) {
          Runs runs = Runs.of(reading);
          if (prefixes.contains(runs.collapsed(0, runs.size))) {
            viable = true;
            if (j > i) {
              found = Term.worse(found, whole(runs, 0, runs.size, false));
            }
          }
        }
        if (!viable || (found != null && found.reason == Reason.BLOCKED_TERM)) {
          break;
        }
      }
      if (found != null && found.reason == Reason.BLOCKED_TERM) {
        return found;
      }
    }
    return found;
  }

  private Term match(Runs runs, boolean word) {
    Term found = whole(runs, 0, runs.size, false);
    for (int i = 0; i < runs.size; ) {
      if (!Characters.isWordChar(runs.cps[i])) {
        i++;
        continue;
      }
      int j = i;
      while (j < runs.size && Characters.isWordChar(runs.cps[j])) {
        j++;
      }
      if (i > 0 || j < runs.size) {
        found = Term.worse(found, whole(runs, i, j, true));
      }
      i = j;
    }
    if (word && !anywhere.isEmpty()) {
      found = Term.worse(found, inside(runs));
    }
    return found;
  }

  /** A term equal to runs [from, to); with {@code inner}, only long all-letter terms. */
  private Term whole(Runs runs, int from, int to, boolean inner) {
    String k = runs.collapsed(from, to);
    Term[] ts = words.get(k);
    if (ts == null || allowed.contains(k)) {
      return null;
    }
    Term found = null;
    for (Term t : ts) {
      if ((!inner || (t.isLong && t.letters)) && runs.covers(t.runs, from)) {
        found = Term.worse(found, t);
      }
    }
    return found;
  }

  private Term inside(Runs runs) {
    for (int i = 0; i < runs.size; i++) {
      Term[] ts = anywhere.get(runs.cps[i]);
      if (ts == null) {
        continue;
      }
      for (Term t : ts) {
        if (runs.covers(t.runs, i) && !inAllowedWord(runs, i, i + t.runs.size)) {
          return t;
        }
      }
    }
    return null;
  }

  private boolean inAllowedWord(Runs runs, int from, int to) {
    if (allowed.isEmpty()) {
      return false;
    }
    while (from > 0 && Characters.isWordChar(runs.cps[from - 1])) {
      from--;
    }
    while (to < runs.size && Characters.isWordChar(runs.cps[to])) {
      to++;
    }
    return allowed.contains(runs.collapsed(from, to));
  }

  /** A list entry's key: its matching key with everything but letters and digits dropped. */
  static String keyOf(String entry) {
    String key = Canon.key(Canon.fold(entry));
    StringBuilder b = new StringBuilder(key.length());
    key.codePoints().filter(cp -> Characters.isWordChar(cp) || UCharacter.isDigit(cp))
        .forEach(b::appendCodePoint);
    return b.toString();
  }

  private static Term[] concat(Term[] a, Term[] b) {
    List<Term> all = new ArrayList<>(List.of(a));
    all.addAll(List.of(b));
    return all.toArray(new Term[0]);
  }
}
