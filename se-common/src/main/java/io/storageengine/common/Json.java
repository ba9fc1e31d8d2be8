package io.storageengine.common;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One shared, strict JSON mapper: unknown properties are errors, and so is a key that appears
 * twice in one object. A duplicate is never resolved by "the last one wins": a proxy that checks
 * or injects the first {@code catalog_id} must see the same tenant the engine acts on.
 */
public final class Json {
  public static final ObjectMapper MAPPER = strict(new ObjectMapper());

  private Json() {}

  /**
   * Makes {@code mapper} reject duplicate keys anywhere in a document ("Duplicate field 'x'") and
   * unknown properties when binding; returns it. Every mapper that reads requests uses this.
   */
  public static ObjectMapper strict(ObjectMapper mapper) {
    return mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
  }

  public static byte[] toBytes(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw SeException.internal("cannot serialize JSON", e);
    }
  }

  public static String toString(Object value) {
    return new String(toBytes(value), StandardCharsets.UTF_8);
  }

  /** Parses bytes into a tree; malformed JSON is {@link ErrorCode#INVALID_JSON}. */
  public static JsonNode parse(byte[] bytes) {
    try {
      JsonNode node = MAPPER.readTree(bytes);
      if (node == null || node.isMissingNode()) {
        throw new SeException(ErrorCode.INVALID_JSON, "invalid JSON: empty document");
      }
      return node;
    } catch (IOException e) {
      throw new SeException(ErrorCode.INVALID_JSON, "invalid JSON: " + firstLine(e.getMessage()));
    }
  }

  public static <T> T read(byte[] bytes, Class<T> type) {
    try {
      return MAPPER.readValue(bytes, type);
    } catch (IOException e) {
      throw new SeException(ErrorCode.INVALID_JSON, "invalid JSON: " + firstLine(e.getMessage()));
    }
  }

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
