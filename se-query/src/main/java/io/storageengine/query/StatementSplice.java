package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.query.StatementAnalyzer.Span;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Replaces parts of a statement located the way DuckDB's parser locates them: by byte offset and
 * length in the statement's UTF-8 encoding ({@code query_location}, see {@link Span}), not by
 * character. This is the one place SQL text is edited by position.
 *
 * <p>Guarantees: every span is replaced by its replacement and nothing else changes (bytes
 * before, between and after the spans are kept as they are, so quoted identifiers, comments and
 * non-ASCII text around a span survive). Spans may come in any order and must not overlap. A span
 * reaching past the end of the statement, or whose ends fall inside a multi-byte character, is
 * INVALID_ARGUMENT naming its view: the statement is not the text the offsets were taken from.
 */
final class StatementSplice {
  private StatementSplice() {}

  /** {@code statement} with each span replaced by {@code replacement.apply(span)}. */
  static String replace(String statement, List<Span> spans, Function<Span, String> replacement) {
    byte[] bytes = statement.getBytes(StandardCharsets.UTF_8);
    List<Span> ordered = new ArrayList<>(spans);
    ordered.sort((a, b) -> Integer.compare(a.start(), b.start()));
    StringBuilder out = new StringBuilder(statement.length() + 32 * spans.size());
    int kept = 0;
    for (Span span : ordered) {
      long end = (long) span.start() + span.length();
      if (span.start() < kept || span.length() < 0 || end > bytes.length
          || continuation(bytes, span.start()) || continuation(bytes, (int) end)) {
        throw SeException.invalid("information_schema.%s cannot be used here", span.view());
      }
      out.append(new String(bytes, kept, span.start() - kept, StandardCharsets.UTF_8));
      out.append(replacement.apply(span));
      kept = (int) end;
    }
    out.append(new String(Arrays.copyOfRange(bytes, kept, bytes.length), StandardCharsets.UTF_8));
    return out.toString();
  }

  /** Whether {@code offset} falls inside a multi-byte UTF-8 character (on a continuation byte). */
  private static boolean continuation(byte[] bytes, int offset) {
    return offset < bytes.length && (bytes[offset] & 0xC0) == 0x80;
  }
}
