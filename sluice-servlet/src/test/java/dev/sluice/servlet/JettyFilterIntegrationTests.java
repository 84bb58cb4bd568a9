package dev.sluice.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** The filter in an embedded Jetty 12 (EE10, Servlet 6.0). */
class JettyFilterIntegrationTests extends FilterContract {

  @Override
  Running start(Filter sluice) throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler ctx = new ServletContextHandler();
    ctx.setContextPath("/");
    ServletHolder app = new ServletHolder(APP);
    app.setAsyncSupported(true);
    ctx.addServlet(app, "/*");
    for (Filter f : new Filter[] {new TestUser(), sluice}) {
      FilterHolder h = new FilterHolder(f);
      h.setAsyncSupported(true);
      ctx.addFilter(h, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    }
    server.setHandler(ctx);
    server.start();
    int port = connector.getLocalPort();
    return new Running() {
      @Override
      public int port() {
        return port;
      }

      @Override
      public void close() throws Exception {
        server.stop();
      }
    };
  }
}
