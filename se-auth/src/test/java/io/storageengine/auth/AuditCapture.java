package io.storageengine.auth;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Captures the lines of the audit logger while open. */
final class AuditCapture implements AutoCloseable {
  private final Logger logger = (Logger) LoggerFactory.getLogger(AuditLog.LOGGER_NAME);
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  AuditCapture() {
    appender.start();
    logger.addAppender(appender);
  }

  /** The formatted lines so far. */
  List<String> lines() {
    synchronized (appender.list) {
      return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
  }
}
