package dev.sluice.server.replay;

/**
 * Timestamps as logs write them, read from bytes without a date library: nginx's
 * {@code $time_local} ({@code 10/Oct/2025:13:55:36 +0200}), ISO 8601 / RFC 3339
 * ({@code 2025-10-10T11:55:36.123Z}, {@code +02:00} offsets, any fraction) and epoch seconds
 * with a fraction ({@code $msec}: {@code 1760097336.123}). Each returns microseconds since the
 * epoch, or {@link Long#MIN_VALUE} when the text is not such a time.
 */
final class Times {

  static final long BAD = Long.MIN_VALUE;

  private static final String[] MONTHS = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
      "Sep", "Oct", "Nov", "Dec"};

  private Times() {}

  /** {@code dd/MMM/yyyy:HH:mm:ss ±hhmm}. */
  static long clf(byte[] b, int s, int e) {
    if (e - s < 26 || b[s + 2] != '/' || b[s + 6] != '/' || b[s + 11] != ':'
        || b[s + 14] != ':' || b[s + 17] != ':' || b[s + 20] != ' ') {
      return BAD;
    }
    int day = num(b, s, 2);
    int month = month(b, s + 3);
    int year = num(b, s + 7, 4);
    int hh = num(b, s + 12, 2);
    int mm = num(b, s + 15, 2);
    int ss = num(b, s + 18, 2);
    long offset = offset(b, s + 21, e, false);
    if (day < 1 || month < 1 || year < 0 || hh < 0 || mm < 0 || ss < 0 || offset == BAD) {
      return BAD;
    }
    return epochMicros(year, month, day, hh, mm, ss, 0, offset);
  }

  /** {@code yyyy-MM-ddTHH:mm:ss[.fraction](Z|±hh:mm|±hhmm)}; a space instead of T is taken too. */
  static long iso(byte[] b, int s, int e) {
    if (e - s < 19 || b[s + 4] != '-' || b[s + 7] != '-' || (b[s + 10] != 'T'
        && b[s + 10] != ' ' && b[s + 10] != 't') || b[s + 13] != ':' || b[s + 16] != ':') {
      return BAD;
    }
    int year = num(b, s, 4);
    int month = num(b, s + 5, 2);
    int day = num(b, s + 8, 2);
    int hh = num(b, s + 11, 2);
    int mm = num(b, s + 14, 2);
    int ss = num(b, s + 17, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hh < 0 || mm < 0
        || ss < 0) {
      return BAD;
    }
    int i = s + 19;
    long micros = 0;
    if (i < e && (b[i] == '.' || b[i] == ',')) {
      i++;
      int digits = 0;
      while (i < e && b[i] >= '0' && b[i] <= '9') {
        if (digits < 6) {
          micros = micros * 10 + (b[i] - '0');
        }
        digits++;
        i++;
      }
      if (digits == 0) {
        return BAD;
      }
      for (int d = digits; d < 6; d++) {
        micros *= 10;
      }
    }
    long offset = offset(b, i, e, true);
    if (offset == BAD) {
      return BAD;
    }
    return epochMicros(year, month, day, hh, mm, ss, micros, offset);
  }

  /** Epoch seconds with an optional fraction, or epoch milliseconds when the value is that large. */
  static long epoch(byte[] b, int s, int e) {
    long whole = 0;
    int i = s;
    if (i >= e) {
      return BAD;
    }
    while (i < e && b[i] >= '0' && b[i] <= '9') {
      whole = whole * 10 + (b[i] - '0');
      if (whole > 1L << 50) {
        return BAD;
      }
      i++;
    }
    if (i == s) {
      return BAD;
    }
    long frac = 0;
    if (i < e && b[i] == '.') {
      i++;
      int digits = 0;
      while (i < e && b[i] >= '0' && b[i] <= '9') {
        if (digits < 6) {
          frac = frac * 10 + (b[i] - '0');
        }
        digits++;
        i++;
      }
      for (int d = Math.min(digits, 6); d < 6; d++) {
        frac *= 10;
      }
    }
    if (i != e) {
      return BAD;
    }
    // 1e11 seconds is the year 5138: a larger number is milliseconds.
    return whole >= 100_000_000_000L ? whole * 1000 + frac / 1000 : whole * 1_000_000 + frac;
  }

  /** {@code Z}, {@code ±hh:mm}, {@code ±hhmm} as microseconds east of UTC; nothing is UTC when allowed. */
  private static long offset(byte[] b, int i, int e, boolean emptyIsUtc) {
    if (i >= e) {
      return emptyIsUtc ? 0 : BAD;
    }
    if (b[i] == 'Z' || b[i] == 'z') {
      return i + 1 == e ? 0 : BAD;
    }
    if (b[i] != '+' && b[i] != '-') {
      return BAD;
    }
    int sign = b[i] == '-' ? -1 : 1;
    int hh = num(b, i + 1, 2);
    int j = i + 3;
    if (j < e && b[j] == ':') {
      j++;
    }
    int mm = num(b, j, 2);
    if (hh < 0 || mm < 0 || j + 2 != e) {
      return BAD;
    }
    return sign * (hh * 3600L + mm * 60L) * 1_000_000L;
  }

  private static int num(byte[] b, int s, int n) {
    int v = 0;
    if (s + n > b.length) {
      return -1;
    }
    for (int i = s; i < s + n; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v;
  }

  private static int month(byte[] b, int s) {
    for (int m = 0; m < 12; m++) {
      String name = MONTHS[m];
      if (b[s] == name.charAt(0) && b[s + 1] == name.charAt(1) && b[s + 2] == name.charAt(2)) {
        return m + 1;
      }
    }
    return -1;
  }

  static long epochMicros(int year, int month, int day, int hh, int mm, int ss, long micros,
      long offsetMicros) {
    return (days(year, month, day) * 86_400L + hh * 3600L + mm * 60L + ss) * 1_000_000L + micros
        - offsetMicros;
  }

  /** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
  static long days(int y, int m, int d) {
    y -= m <= 2 ? 1 : 0;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }
}
