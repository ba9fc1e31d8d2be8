package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.query.StatementAnalyzer.Span;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Replaces the qualified names of table references located the way DuckDB's parser locates them
 * ({@link Span}: a byte offset and length in the statement's UTF-8 text, not characters). This is
 * the one place SQL text is edited by position.
 *
 * <p>A located reference covers more than its name (an alias, column aliases, a sample may
 * follow), so within it only the name is replaced: its first {@link Span#nameParts} identifiers
 * (each quoted or not) with the dots between them, found with {@link SqlText#tokens}.
 * Guarantees: nothing else changes (text before, between and after the names, including quoted
 * identifiers, comments, string literals and non-ASCII characters, is kept as written). Spans may
 * come in any order and must not overlap. A span reaching past the end of the statement, with an
 * end inside a multi-byte character, or not starting with a qualified name of its parts, is
 * INVALID_ARGUMENT naming its view: the statement is not the text the locations were taken from.
 *
 * <p>A span with {@link Span#timeTravel} also loses its time travel clause {@code AT (...)} (the
 * first {@code AT} followed by a parenthesis after the name, up to its closing parenthesis): its
 * replacement is a view of the very snapshot the clause names.
 */
final class StatementSplice {
  private StatementSplice() {}

  /** {@code statement} with the name of each span's reference replaced by {@code replacement.apply(span)}. */
  static String replace(String statement, List<Span> spans, Function<Span, String> replacement) {
    return replace(statement, spans, replacement, Map.of());
  }

  /**
   * As {@link #replace(String, List, Function)}, also inserting each of {@code insertions}' texts
   * at its byte offset (outside every span; at a character boundary, at most the statement's
   * length, else INVALID_ARGUMENT).
   */
  static String replace(String statement, List<Span> spans, Function<Span, String> replacement,
      Map<Integer, String> insertions) {
    byte[] bytes = statement.getBytes(StandardCharsets.UTF_8);
    TreeMap<Integer, String> inserts = new TreeMap<>(insertions);
    for (int offset : inserts.keySet()) {
      if (offset < 0 || offset > bytes.length || continuation(bytes, offset)) {
        throw misplacedInsertion();
      }
    }
    List<Span> ordered = new ArrayList<>(spans);
    ordered.sort((a, b) -> Integer.compare(a.start(), b.start()));
    StringBuilder out = new StringBuilder(statement.length() + 32 * spans.size());
    int kept = 0;
    for (Span span : ordered) {
      long end = (long) span.start() + span.length();
      if (span.start() < kept || span.length() <= 0 || end > bytes.length
          || continuation(bytes, span.start()) || continuation(bytes, (int) end)) {
        throw unusable(span);
      }
      String reference = text(bytes, span.start(), (int) end);
      int nameEnd = span.start() + nameLength(reference, span);
      if (!inserts.subMap(0, true, kept, false).isEmpty()) {
        throw misplacedInsertion();
      }
      kept = insert(out, bytes, kept, span.start(), inserts);
      out.append(text(bytes, kept, span.start())).append(replacement.apply(span));
      kept = nameEnd;
      if (span.timeTravel()) {
        int[] clause = atClause(reference, span);
        out.append(text(bytes, nameEnd, span.start() + clause[0]));
        kept = span.start() + clause[1];
      }
    }
    if (!inserts.subMap(0, true, kept, false).isEmpty()) {
      throw misplacedInsertion();
    }
    kept = insert(out, bytes, kept, bytes.length, inserts);
    out.append(text(bytes, kept, bytes.length));
    return out.toString();
  }

  /**
   * Appends the text from {@code kept} up to {@code until} with the insertions in that range (each
   * removed from {@code inserts}); returns the offset copied up to (the last insertion's).
   */
  private static int insert(StringBuilder out, byte[] bytes, int kept, int until, TreeMap<Integer, String> inserts) {
    var range = inserts.subMap(kept, true, until, true);
    for (var entry : range.entrySet()) {
      out.append(text(bytes, kept, entry.getKey())).append(entry.getValue());
      kept = entry.getKey();
    }
    range.clear();
    return kept;
  }

  /** The length in UTF-8 bytes of the qualified name {@code reference} starts with. */
  private static int nameLength(String reference, Span span) {
    List<SqlText.Token> tokens;
    try {
      tokens = SqlText.tokens(reference);
    } catch (SeException e) {
      throw unusable(span);
    }
    int count = 2 * span.nameParts() - 1;
    if (span.nameParts() < 1 || tokens.size() < count || tokens.get(0).start() != 0) {
      throw unusable(span);
    }
    for (int i = 0; i < count; i++) {
      SqlText.Token token = tokens.get(i);
      boolean valid = i % 2 == 0
          ? token.kind() == SqlText.Kind.WORD || token.kind() == SqlText.Kind.QUOTED_IDENTIFIER
          : token.kind() == SqlText.Kind.SYMBOL && token.text().equals(".");
      if (!valid) {
        throw unusable(span);
      }
    }
    return reference.substring(0, tokens.get(count - 1).end()).getBytes(StandardCharsets.UTF_8).length;
  }

  /** The UTF-8 byte range {start, end} within {@code reference} of its {@code AT (...)} clause. */
  private static int[] atClause(String reference, Span span) {
    List<SqlText.Token> tokens;
    try {
      tokens = SqlText.tokens(reference);
    } catch (SeException e) {
      throw unusable(span);
    }
    for (int i = 2 * span.nameParts() - 1; i + 1 < tokens.size(); i++) {
      if (tokens.get(i).isWord("AT") && tokens.get(i + 1).text().equals("(")) {
        int depth = 0;
        for (int j = i + 1; j < tokens.size(); j++) {
          SqlText.Token token = tokens.get(j);
          if (token.kind() == SqlText.Kind.SYMBOL && token.text().equals("(")) {
            depth++;
          } else if (token.kind() == SqlText.Kind.SYMBOL && token.text().equals(")") && --depth == 0) {
            return new int[] {utf8Length(reference, tokens.get(i).start()), utf8Length(reference, token.end())};
          }
        }
      }
    }
    throw unusable(span);
  }

  private static int utf8Length(String text, int chars) {
    return text.substring(0, chars).getBytes(StandardCharsets.UTF_8).length;
  }

  private static String text(byte[] bytes, int from, int to) {
    return new String(bytes, from, to - from, StandardCharsets.UTF_8);
  }

  /** Whether {@code offset} falls inside a multi-byte UTF-8 character (on a continuation byte). */
  private static boolean continuation(byte[] bytes, int offset) {
    return offset < bytes.length && (bytes[offset] & 0xC0) == 0x80;
  }

  /** An insertion inside a replaced reference or a character: the offsets are not of this statement. */
  private static SeException misplacedInsertion() {
    return SeException.invalid("SQL: a select list cannot be used here");
  }

  private static SeException unusable(Span span) {
    if (span.timeTravel()) {
      return SeException.invalid("table `%s`: time travel cannot be used here", span.view());
    }
    return SeException.invalid("information_schema.%s cannot be used here", span.view());
  }
}
