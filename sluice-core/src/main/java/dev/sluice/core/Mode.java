package dev.sluice.core;

/** What a rule does with its decision. */
public enum Mode {
  /** Refusals refuse. */
  ENFORCE,
  /** Dry run: decide, record and count the would-be refusal, but allow (seed 001's DRY_RUN). */
  SHADOW,
  /** The rule is not evaluated at all. */
  OFF
}
