package dev.sluice.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.security.Principal;

/** Signs a request in as the user {@code X-Test-User} names, as an authentication filter would. */
final class TestUser implements Filter {

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest r = (HttpServletRequest) req;
    String user = r.getHeader("X-Test-User");
    if (user == null) {
      chain.doFilter(req, res);
      return;
    }
    chain.doFilter(new HttpServletRequestWrapper(r) {
      @Override
      public Principal getUserPrincipal() {
        return () -> user;
      }
    }, res);
  }
}
