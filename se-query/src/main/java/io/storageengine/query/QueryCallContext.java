package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What one gRPC call carries for the query layer: the raw {@code se-query-metadata} header,
 * the Flight SQL session id from the request cookie, and a slot for a session id the server
 * issues during the call (sent back as a cookie with the response headers).
 */
public final class QueryCallContext {
  /** A call without headers: no catalog selected, no session. */
  public static final QueryCallContext EMPTY = new QueryCallContext(null, null);

  private final String metadataHeader;
  private final int metadataHeaderCount;
  private final String sessionId;
  private final AtomicReference<String> issuedSessionId = new AtomicReference<>();

  public QueryCallContext(String metadataHeader, String sessionId) {
    this(metadataHeader, metadataHeader == null ? 0 : 1, sessionId);
  }

  private QueryCallContext(String metadataHeader, int metadataHeaderCount, String sessionId) {
    this.metadataHeader = metadataHeader;
    this.metadataHeaderCount = metadataHeaderCount;
    this.sessionId = sessionId;
  }

  /**
   * A context from every value of the {@code se-query-metadata} header a call carried. A header
   * sent more than once selects no tenant: {@link #headerCatalogId()} refuses it, since a proxy
   * may have checked one copy and the engine would act on another.
   */
  static QueryCallContext fromHeaderValues(Iterable<String> metadataHeaders, String sessionId) {
    String first = null;
    int count = 0;
    if (metadataHeaders != null) {
      for (String value : metadataHeaders) {
        if (count++ == 0) {
          first = value;
        }
      }
    }
    return new QueryCallContext(first, count, sessionId);
  }

  /**
   * The {@code catalog_id} of the {@code se-query-metadata} header, if the header is present.
   * A header that is not a JSON object with a string {@code catalog_id}, has a key twice or was
   * sent twice is INVALID_ARGUMENT.
   */
  public Optional<String> headerCatalogId() {
    if (metadataHeaderCount > 1) {
      throw SeException.invalid("header %s was sent %d times: send it once",
          QueryMetadataInterceptor.HEADER_NAME, metadataHeaderCount);
    }
    if (metadataHeader == null || metadataHeader.isBlank()) {
      return Optional.empty();
    }
    JsonNode node = Json.parse(metadataHeader.getBytes(StandardCharsets.UTF_8));
    JsonNode id = node.isObject() ? node.get("catalog_id") : null;
    if (id == null || !id.isTextual() || id.asText().isBlank()) {
      throw SeException.invalid("header %s: expected {\"catalog_id\":\"<catalog>\"}",
          QueryMetadataInterceptor.HEADER_NAME);
    }
    return Optional.of(id.asText());
  }

  /**
   * The {@code read} of the {@code se-query-metadata} header ({@code "latest"} or
   * {@code "snapshot"}, see {@link ReadMode}), if the header has one; any other value is
   * INVALID_ARGUMENT.
   */
  Optional<ReadMode> headerRead() {
    headerCatalogId();
    if (metadataHeader == null || metadataHeader.isBlank()) {
      return Optional.empty();
    }
    JsonNode read = Json.parse(metadataHeader.getBytes(StandardCharsets.UTF_8)).get("read");
    if (read == null) {
      return Optional.empty();
    }
    return Optional.of(ReadMode.parse(read.isTextual() ? read.asText() : read.toString(),
        "header " + QueryMetadataInterceptor.HEADER_NAME));
  }

  /** The session the client presented (cookie), or the one issued during this call. */
  public Optional<String> sessionId() {
    String issued = issuedSessionId.get();
    return Optional.ofNullable(issued != null ? issued : sessionId);
  }

  /** Records a new session id; the interceptor sends it to the client as a cookie. */
  public void issueSession(String id) {
    issuedSessionId.set(id);
  }

  Optional<String> issuedSessionId() {
    return Optional.ofNullable(issuedSessionId.get());
  }
}
