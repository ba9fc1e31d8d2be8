package io.storageengine.catalog;

import io.storageengine.common.Redaction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hides credentials embedded in URIs and free text before they reach a response or a log line:
 * the password of a {@code user:password@} user-info (the whole user-info when it has no
 * colon, since it is then usually a token), and the values of query or JDBC parameters whose
 * names look secret ({@code ?password=...}, {@code ;token=...}).
 */
final class CatalogRedaction {
  // scheme://userinfo@ ; userinfo stops at the first '/', '?', '#', '@' or whitespace.
  private static final Pattern USER_INFO = Pattern.compile("(://)([^/?#@\\s]+)@");
  // name=value after '?', '&' or ';' ; the value runs to the next separator or whitespace.
  private static final Pattern PARAMETER = Pattern.compile("([?&;])([^=&;?#\\s]+)=([^&;#\\s]*)");

  private CatalogRedaction() {}

  /** {@code text} with URI credentials and secret-looking parameters redacted; null stays null. */
  static String text(String text) {
    if (text == null) {
      return null;
    }
    Matcher userInfo = USER_INFO.matcher(text);
    StringBuilder out = new StringBuilder();
    while (userInfo.find()) {
      String info = userInfo.group(2);
      int colon = info.indexOf(':');
      String kept = colon < 0 ? Redaction.REDACTED : info.substring(0, colon + 1) + Redaction.REDACTED;
      userInfo.appendReplacement(out, Matcher.quoteReplacement("://" + kept + "@"));
    }
    userInfo.appendTail(out);

    Matcher parameter = PARAMETER.matcher(out.toString());
    StringBuilder result = new StringBuilder();
    while (parameter.find()) {
      String name = parameter.group(2);
      String value = Redaction.isSecretName(name) ? Redaction.REDACTED : parameter.group(3);
      parameter.appendReplacement(
          result, Matcher.quoteReplacement(parameter.group(1) + name + "=" + value));
    }
    parameter.appendTail(result);
    return result.toString();
  }

  /** A one-line description of a failure chain for logs: class names and redacted messages. */
  static String describe(Throwable error) {
    StringBuilder out = new StringBuilder();
    int depth = 0;
    for (Throwable t = error; t != null && depth < 5; t = t.getCause(), depth++) {
      if (depth > 0) {
        out.append(" <- ");
      }
      out.append(t.getClass().getSimpleName());
      if (t.getMessage() != null) {
        out.append(": ").append(text(firstLine(t.getMessage())));
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return out.toString();
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
