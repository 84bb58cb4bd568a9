package dev.sluice.example;

import dev.sluice.spring.RateLimited;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot app limited by Sluice: one dependency (the starter) and one property
 * ({@code sluice.policy}); the policy's routes limit {@code /api/hello} per client address, and
 * {@link RateLimited} limits orders per tenant.
 */
@SpringBootApplication
@RestController
public class ExampleApplication {

  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  @GetMapping("/api/hello")
  Map<String, String> hello() {
    return Map.of("hello", "world");
  }

  @RateLimited(value = "orders", key = "#request.getHeader('X-Tenant')")
  @GetMapping("/api/orders/{id}")
  Map<String, String> order(@PathVariable String id) {
    return Map.of("order", id);
  }
}
