package dev.sluice.dist;

import java.util.random.RandomGenerator;

/**
 * What the README's statement snippets take from "your app": a snippet that is not a whole class
 * is compiled as the body of a method of a subclass, so these names resolve and nothing else does.
 * Add here only what a reader would recognise as theirs (a request's values, their own replies).
 */
public abstract class ReadmeSnippetApp {
  protected String name = "alice";
  protected String proposed = "Alice";
  protected RandomGenerator random = RandomGenerator.getDefault();

  protected void reject(String reason) {}

  protected void store(String name, String normalized) {}
}
