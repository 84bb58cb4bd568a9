package dev.sluice.servlet;

import jakarta.servlet.Filter;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/** The filter in an embedded Tomcat 10.1 (Servlet 6.0). */
class TomcatFilterIntegrationTests extends FilterContract {

  @Override
  Running start(Filter sluice) throws Exception {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory(dir, "tomcat").toString());
    tomcat.setPort(0);
    Context ctx = tomcat.addContext("", null);
    Tomcat.addServlet(ctx, "app", APP).setAsyncSupported(true);
    ctx.addServletMappingDecoded("/*", "app");
    add(ctx, "user", new TestUser());
    add(ctx, "sluice", sluice);
    tomcat.start();
    int port = tomcat.getConnector().getLocalPort();
    return new Running() {
      @Override
      public int port() {
        return port;
      }

      @Override
      public void close() throws Exception {
        tomcat.stop();
        tomcat.destroy();
      }
    };
  }

  private static void add(Context ctx, String name, Filter filter) {
    FilterDef def = new FilterDef();
    def.setFilterName(name);
    def.setFilter(filter);
    def.setAsyncSupported("true");
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName(name);
    map.addURLPattern("/*");
    map.setDispatcher("REQUEST");
    map.setDispatcher("ASYNC");
    ctx.addFilterMap(map);
  }
}
