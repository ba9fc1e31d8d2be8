package io.storageengine.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * Configures logging to stdout from {@code SE_LOG} (levels, e.g.
 * {@code info,io.storageengine.ingest=debug}) and {@code SE_LOG_FORMAT} ({@code text} or
 * {@code json}: one JSON object per line).
 *
 * <p>Logback-specific, so it lives with the {@code se} command, which brings logback as its
 * binding; the engine's libraries log through the slf4j API only and leave the binding to the
 * program that embeds them.
 */
public final class Logging {
  private Logging() {}

  public static void configureFromEnvironment() {
    configure(System.getenv("SE_LOG"), System.getenv("SE_LOG_FORMAT"));
  }

  public static void configure(String levels, String format) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    context.reset();
    Encoder<ILoggingEvent> encoder;
    if (format != null && format.trim().toLowerCase(Locale.ROOT).equals("json")) {
      JsonEncoder json = new JsonEncoder();
      json.setWithArguments(false);
      // The rendered text, not the {} template: a line must read on its own.
      json.setWithFormattedMessage(true);
      json.setWithMessage(false);
      json.setWithContext(false);
      json.setWithSequenceNumber(false);
      json.setWithNanoseconds(false);
      encoder = json;
    } else {
      PatternLayoutEncoder text = new PatternLayoutEncoder();
      text.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n");
      encoder = text;
    }
    encoder.setContext(context);
    encoder.start();
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("stdout");
    console.setEncoder(encoder);
    console.start();
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(console);
    root.setLevel(Level.INFO);
    // Chatty third-party libraries stay at WARN unless asked for.
    for (String noisy : new String[] {"org.apache.hadoop", "org.apache.parquet", "io.netty",
        "com.linecorp.armeria", "org.eclipse.jetty", "org.apache.iceberg", "org.gaul", "org.jclouds", "org.apache.arrow",
        // gRPC's Netty frame logger (also the shaded copy of the gcp-sm client) prints request headers, bearer tokens included.
        "io.grpc.netty"}) {
      context.getLogger(noisy).setLevel(Level.WARN);
    }
    context.getLogger("org.apache.iceberg.BaseMetastoreCatalog").setLevel(Level.WARN);
    // Hadoop warns on first use that it has no native library; its Java code serves (Parquet, S3).
    context.getLogger("org.apache.hadoop.util.NativeCodeLoader").setLevel(Level.ERROR);
    // The azure-kv secret store's HTTP client warns on every write that the JDK sets Content-Length itself.
    context.getLogger("com.azure.core.http.jdk.httpclient.JdkHttpClient").setLevel(Level.ERROR);
    if (levels == null || levels.isBlank()) {
      return;
    }
    for (String part : levels.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) {
        continue;
      }
      int eq = p.indexOf('=');
      if (eq < 0) {
        root.setLevel(Level.toLevel(p, Level.INFO));
      } else {
        context.getLogger(p.substring(0, eq).trim())
            .setLevel(Level.toLevel(p.substring(eq + 1).trim(), Level.INFO));
      }
    }
  }
}
