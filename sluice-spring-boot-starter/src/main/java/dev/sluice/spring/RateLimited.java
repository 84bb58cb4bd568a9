package dev.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits a controller method (or every method of a controller) by a rule of the policy, in
 * addition to the routes the filter applies. Refused calls get the filter's 429.
 *
 * <pre>{@code
 * @RateLimited(value = "orders", key = "#request.getHeader('X-Tenant')")
 * @GetMapping("/api/orders/{id}")
 * Order order(@PathVariable String id) { ... }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {

  /** The rule's name under the policy's {@code rules:}. */
  String value();

  /**
   * A SpEL expression whose value is the key: it replaces the value of the rule's first key
   * dimension. Variables: {@code #request} (the servlet request), {@code #principal} (may be
   * null), {@code #pathVariables} (a map). Empty: the rule's own dimensions, as the filter reads
   * them.
   */
  String key() default "";

  /** What one call spends. */
  long cost() default 1;
}
