package io.storageengine.secretstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Secrets as JSON documents on cluster storage: {@code <prefix>secrets/<key>.json} holding
 * {@code {"format":1,"revision":"<uuid>","value":"<base64>"}}.
 *
 * <p>The version of a secret is the blob's etag. Each document carries a fresh random
 * {@code revision}, so rewriting the same bytes still changes the etag and therefore the
 * version. {@link #create} uses the store's {@code putIfAbsent}, so concurrent creators on any
 * number of processes see exactly one winner.
 *
 * <p>The documents are not encrypted: whoever can read cluster storage can read the secrets.
 * Protect the store (bucket policy, directory permissions) accordingly.
 */
public final class FileSecretStore implements SecretStore {
  static final String DIRECTORY = "secrets/";
  private static final int FORMAT = 1;

  private final ObjectStore store;

  public FileSecretStore(ObjectStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  @Override
  public Optional<Secret> get(String key) {
    String objectKey = objectKey(key);
    return store.get(objectKey).map(blob -> new Secret(decode(key, blob.data()), blob.etag()));
  }

  @Override
  public boolean create(String key, byte[] value) {
    return store.putIfAbsent(objectKey(key), encode(value)).isPresent();
  }

  @Override
  public void put(String key, byte[] value) {
    store.put(objectKey(key), encode(value));
  }

  @Override
  public void delete(String key) {
    store.delete(objectKey(key));
  }

  @Override
  public String describe() {
    return "file:" + store.describe() + "/" + DIRECTORY;
  }

  static String objectKey(String key) {
    return DIRECTORY + SecretKeys.check(key) + ".json";
  }

  private static byte[] encode(byte[] value) {
    Objects.requireNonNull(value, "value");
    ObjectNode doc = Json.object();
    doc.put("format", FORMAT);
    doc.put("revision", UUID.randomUUID().toString());
    doc.put("value", Base64.getEncoder().encodeToString(value));
    return Json.toBytes(doc);
  }

  private static byte[] decode(String key, byte[] document) {
    JsonNode doc;
    try {
      doc = Json.parse(document);
    } catch (SeException e) {
      throw corrupt(key);
    }
    JsonNode format = doc.get("format");
    JsonNode value = doc.get("value");
    if (format == null || format.asInt() != FORMAT || value == null || !value.isTextual()) {
      throw corrupt(key);
    }
    try {
      return Base64.getDecoder().decode(value.asText());
    } catch (IllegalArgumentException e) {
      throw corrupt(key);
    }
  }

  private static SeException corrupt(String key) {
    // No cause: parser messages may quote the document, which holds the secret.
    return new SeException(ErrorCode.INTERNAL, "secret '" + key + "' is unreadable");
  }
}
