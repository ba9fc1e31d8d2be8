package io.storageengine.query;

import io.storageengine.common.SeException;
import java.util.Locale;

/**
 * What a query reads of each table: {@link #LATEST} (the default) the pinned snapshot plus the
 * acknowledged WAL segments not reconciled yet ({@link WalTail}), so a query sees every
 * acknowledged write; {@link #SNAPSHOT} the snapshot only, for results that repeat until the
 * next commit. Chosen per call by {@code "read"} in the {@code se-query-metadata} header or per
 * session by the Flight SQL session option {@code read}.
 */
enum ReadMode {
  LATEST,
  SNAPSHOT;

  /** The name clients send: {@code latest} or {@code snapshot}. */
  String optionValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The mode named {@code value}; INVALID_ARGUMENT naming {@code where} otherwise. */
  static ReadMode parse(String value, String where) {
    if (value != null) {
      for (ReadMode mode : values()) {
        if (mode.optionValue().equals(value)) {
          return mode;
        }
      }
    }
    throw SeException.invalid("%s: read must be \"latest\" or \"snapshot\", got %s", where,
        value == null ? "nothing" : "\"" + value + "\"");
  }
}
