package io.storageengine.secretstore;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Everything logged (from DEBUG up, SDKs included) while installed, to scan for secrets. */
final class LogCapture implements AutoCloseable {
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private final Level previous = root.getLevel();
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  LogCapture() {
    appender.start();
    root.addAppender(appender);
    root.setLevel(Level.DEBUG);
  }

  /** Each event's formatted message with its exception chain's messages. */
  synchronized List<String> lines() {
    List<String> out = new ArrayList<>();
    for (ILoggingEvent e : List.copyOf(appender.list)) {
      StringBuilder line = new StringBuilder(e.getLoggerName()).append(' ').append(e.getFormattedMessage());
      for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
        line.append(" | ").append(t.getClassName()).append(": ").append(t.getMessage());
      }
      out.add(line.toString());
    }
    return out;
  }

  @Override
  public void close() {
    root.detachAppender(appender);
    root.setLevel(previous);
  }
}
