package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Splits the schema, partition and sort texts of the CLI into tokens that remember their
 * 1-based position, so that every parse error can point at the offending part.
 */
final class SpecTokenizer {

  /** NUMBER: digits with an optional sign, fraction and exponent; STRING: a {@code '...'} literal. */
  enum Kind { WORD, NUMBER, STRING, SYMBOL, END }

  /** One token; {@code quoted} words keep their exact text and are never keywords. */
  record Token(Kind kind, String text, int position, boolean quoted) {
    boolean isSymbol(char c) {
      return kind == Kind.SYMBOL && text.charAt(0) == c;
    }

    boolean isKeyword(String keyword) {
      return kind == Kind.WORD && !quoted && text.equalsIgnoreCase(keyword);
    }

    String lower() {
      return text.toLowerCase(Locale.ROOT);
    }

    String describe() {
      return kind == Kind.END ? "end of text" : "'" + text + "'";
    }
  }

  private final String context;
  private final List<Token> tokens;
  private int next;

  SpecTokenizer(String context, String text) {
    this.context = context;
    this.tokens = tokenize(context, text);
  }

  Token peek() {
    return tokens.get(next);
  }

  Token peek(int ahead) {
    return tokens.get(Math.min(next + ahead, tokens.size() - 1));
  }

  Token take() {
    Token t = tokens.get(next);
    if (t.kind() != Kind.END) {
      next++;
    }
    return t;
  }

  boolean atEnd() {
    return peek().kind() == Kind.END;
  }

  /** Consumes {@code symbol} if it comes next. */
  boolean accept(char symbol) {
    if (peek().isSymbol(symbol)) {
      next++;
      return true;
    }
    return false;
  }

  boolean acceptKeyword(String keyword) {
    if (peek().isKeyword(keyword)) {
      next++;
      return true;
    }
    return false;
  }

  Token expect(char symbol, String what) {
    Token t = take();
    if (!t.isSymbol(symbol)) {
      throw error(t, "expected '%s' %s, found %s", symbol, what, t.describe());
    }
    return t;
  }

  Token expectWord(String what) {
    Token t = take();
    if (t.kind() != Kind.WORD) {
      throw error(t, "expected %s, found %s", what, t.describe());
    }
    return t;
  }

  int expectInt(String what) {
    Token t = take();
    if (t.kind() != Kind.NUMBER || !t.text().chars().allMatch(Character::isDigit)) {
      throw error(t, "expected %s, found %s", what, t.describe());
    }
    try {
      return Integer.parseInt(t.text());
    } catch (NumberFormatException e) {
      throw error(t, "%s %s is too large", what, t.describe());
    }
  }

  /** A dotted column reference such as {@code addr.zip}. */
  String columnReference(String what) {
    StringBuilder name = new StringBuilder(expectWord(what).text());
    while (peek().isSymbol('.')) {
      take();
      name.append('.').append(expectWord(what).text());
    }
    return name.toString();
  }

  SeException error(Token at, String fmt, Object... args) {
    return SeException.invalid("%s: %s at position %d", context, String.format(fmt, args), at.position());
  }

  private static List<Token> tokenize(String context, String text) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_')) {
          i++;
        }
        out.add(new Token(Kind.WORD, text.substring(start, i), start + 1, false));
      } else if (Character.isDigit(c) || (c == '-' && i + 1 < n && Character.isDigit(text.charAt(i + 1)))) {
        int start = i;
        i = digits(text, i + 1);
        if (i + 1 < n && text.charAt(i) == '.' && Character.isDigit(text.charAt(i + 1))) {
          i = digits(text, i + 1);
        }
        if (i + 1 < n && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
          int exponent = i + 1 < n && (text.charAt(i + 1) == '+' || text.charAt(i + 1) == '-') ? i + 2 : i + 1;
          if (exponent < n && Character.isDigit(text.charAt(exponent))) {
            i = digits(text, exponent);
          }
        }
        out.add(new Token(Kind.NUMBER, text.substring(start, i), start + 1, false));
      } else if (c == '\'') {
        // String literal; '' stands for one quote.
        int start = i;
        StringBuilder value = new StringBuilder();
        i++;
        boolean closed = false;
        while (i < n) {
          char d = text.charAt(i);
          i++;
          if (d == '\'') {
            if (i < n && text.charAt(i) == '\'') {
              value.append('\'');
              i++;
              continue;
            }
            closed = true;
            break;
          }
          value.append(d);
        }
        if (!closed) {
          throw SeException.invalid("%s: unterminated string at position %d", context, start + 1);
        }
        out.add(new Token(Kind.STRING, value.toString(), start + 1, true));
      } else if (c == '"' || c == '`') {
        // Quoted identifier; the quote character doubled stands for itself.
        int start = i;
        StringBuilder word = new StringBuilder();
        i++;
        boolean closed = false;
        while (i < n) {
          char d = text.charAt(i);
          if (d == c) {
            if (i + 1 < n && text.charAt(i + 1) == c) {
              word.append(c);
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          word.append(d);
          i++;
        }
        if (!closed) {
          throw SeException.invalid("%s: unterminated quoted name at position %d", context, start + 1);
        }
        if (word.length() == 0) {
          throw SeException.invalid("%s: empty quoted name at position %d", context, start + 1);
        }
        out.add(new Token(Kind.WORD, word.toString(), start + 1, true));
      } else if ("(),<>:.".indexOf(c) >= 0) {
        out.add(new Token(Kind.SYMBOL, String.valueOf(c), i + 1, false));
        i++;
      } else {
        throw SeException.invalid("%s: unexpected character '%s' at position %d", context, c, i + 1);
      }
    }
    out.add(new Token(Kind.END, "", n + 1, false));
    return out;
  }

  private static int digits(String text, int from) {
    int i = from;
    while (i < text.length() && Character.isDigit(text.charAt(i))) {
      i++;
    }
    return i;
  }
}
