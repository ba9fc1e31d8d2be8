package io.storageengine.reconcile;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * A JDBC driver in front of a real one ({@code jdbc:losing:<url>} opens {@code jdbc:<url>}) that
 * loses the connection right after an {@code UPDATE} of Iceberg's {@code iceberg_tables} ran on
 * the database: the update is applied (auto-commit), then the statement fails with a
 * connection error, as when the network drops before the result arrives. Every later call on
 * that connection fails with SQLState 08003 (connection does not exist), so a pool replaces it.
 */
final class ConnectionLosingDriver implements Driver {
  static final String PREFIX = "jdbc:losing:";
  private static final ConnectionLosingDriver INSTANCE = new ConnectionLosingDriver();
  private static final Map<String, AtomicInteger> LOSSES = new ConcurrentHashMap<>();
  private static final Map<String, String> STATES = new ConcurrentHashMap<>();

  static {
    try {
      DriverManager.registerDriver(INSTANCE);
    } catch (SQLException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private ConnectionLosingDriver() {}

  /** The URL that opens {@code jdbc:<target>} through this driver (registering it). */
  static String url(String target) {
    return PREFIX + target;
  }

  /**
   * The next {@code updates} commits through {@code jdbc:losing:<target>} lose their
   * connection after the update, failing with {@code sqlState}.
   */
  static void loseAfterNextUpdates(String target, int updates, String sqlState) {
    STATES.put(target, sqlState);
    LOSSES.computeIfAbsent(target, t -> new AtomicInteger()).set(updates);
  }

  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (!acceptsURL(url)) {
      return null;
    }
    String target = url.substring(PREFIX.length());
    Connection real = DriverManager.getConnection("jdbc:" + target, info);
    AtomicInteger losses = LOSSES.computeIfAbsent(target, t -> new AtomicInteger());
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
        new Losing(real, losses, target));
  }

  private static final class Losing implements InvocationHandler {
    private final Connection real;
    private final AtomicInteger losses;
    private final String target;
    private volatile boolean lost;

    Losing(Connection real, AtomicInteger losses, String target) {
      this.real = real;
      this.losses = losses;
      this.target = target;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (lost) {
        switch (name) {
          case "close": return null;
          case "isClosed": return true;
          case "isValid": return false;
          default: throw new SQLNonTransientConnectionException("connection to the catalog database is gone",
              "08003");
        }
      }
      Object result = call(real, method, args);
      if (name.equals("prepareStatement") && isTableUpdate((String) args[0])) {
        PreparedStatement statement = (PreparedStatement) result;
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class},
            (p, m, a) -> {
              Object r = call(statement, m, a);
              if (m.getName().equals("executeUpdate") && losses.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                lost = true;
                real.close();
                throw new SQLNonTransientConnectionException("connection lost after the update was sent",
                    STATES.getOrDefault(target, "08S01"));
              }
              return r;
            });
      }
      return result;
    }

    private static boolean isTableUpdate(String sql) {
      String s = sql.trim().toLowerCase(Locale.ROOT);
      return s.startsWith("update") && s.contains("iceberg_tables");
    }

    private static Object call(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  @Override
  public boolean acceptsURL(String url) {
    return url != null && url.startsWith(PREFIX);
  }

  @Override
  public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
    return new DriverPropertyInfo[0];
  }

  @Override public int getMajorVersion() { return 1; }
  @Override public int getMinorVersion() { return 0; }
  @Override public boolean jdbcCompliant() { return false; }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no logger");
  }
}
