package io.storageengine.auth;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: one line on the logger {@code io.storageengine.audit} per admin action and per
 * refused request, {@code principal=<name> action=<action> catalog=<id or -> outcome=<outcome>}
 * (admin actions add {@code target=}, what they acted on; unauthenticated refusals add {@code reason=}). Callers pass names, ids and actions, never credentials: token
 * ids may appear, token texts never do. Values are quoted when they hold spaces and stripped of
 * control characters so that a crafted name cannot forge a line.
 */
public final class AuditLog {
  /** The logger name operators route to their audit sink. */
  public static final String LOGGER_NAME = "io.storageengine.audit";
  private static final int MAX_VALUE_LENGTH = 200;

  private final Logger log;

  public AuditLog() {
    this(LoggerFactory.getLogger(LOGGER_NAME));
  }

  AuditLog(Logger log) {
    this.log = log;
  }

  /**
   * An admin action by {@code principal}: {@code action} such as {@code create-token}, {@code target}
   * what it acted on ({@code etl}, a token id, a grantee), {@code catalog} null for cluster-wide
   * actions, {@code outcome} {@code ok} or the error code of the failure.
   */
  public void adminAction(Principal principal, String action, String target, String catalog, String outcome) {
    log.info("principal={} action={} target={} catalog={} outcome={}", value(principal.name()), value(action),
        value(target), value(catalog), value(outcome));
  }

  /** A request {@code principal} was not allowed to make. */
  public void denied(Principal principal, Action action, String catalog) {
    log.warn("principal={} action={} catalog={} outcome=denied", value(principal.name()), value(action.verb()),
        value(catalog));
  }

  /** A request refused for missing or bad credentials; {@code reason} is an authenticator's message. */
  public void unauthenticated(String reason) {
    log.warn("principal=- action=authenticate catalog=- outcome=unauthenticated reason={}", value(reason));
  }

  static String value(String text) {
    if (text == null || text.isEmpty()) {
      return "-";
    }
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_VALUE_LENGTH));
    boolean quote = false;
    for (int i = 0; i < text.length() && out.length() < MAX_VALUE_LENGTH; i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c)) {
        out.append('?');
      } else if (c == '"') {
        out.append('\'');
      } else {
        quote |= c == ' ' || c == '=';
        out.append(c);
      }
    }
    return quote ? "\"" + out + "\"" : out.toString();
  }
}
