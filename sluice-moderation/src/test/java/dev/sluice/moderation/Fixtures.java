package dev.sluice.moderation;

import java.util.List;

/** A moderator with small, fixed lists, so the tables below do not move with the built-in ones. */
final class Fixtures {

  static final List<String> BLOCKED = List.of("fuck", "shit", "cunt", "ass", "asshole", "cock",
      "nazi", "hitler", "1488", "kike", "penis", "kill yourself", "*nigger*", "*cum*");
  static final List<String> RESERVED = List.of("admin", "moderator", "mod", "paypal", "support");
  static final List<String> ALLOWED = List.of("snigger", "document", "cumulus", "circumstance",
      "cucumber", "cumbria", "scum");

  static final Moderator MODERATOR = Moderator.builder()
      .blocked(BLOCKED)
      .reserved(RESERVED)
      .allowed(ALLOWED)
      .build();

  private Fixtures() {}
}
