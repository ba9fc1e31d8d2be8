package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Secrets as encrypted JSON documents on cluster storage: {@code <prefix>secrets/<key>.json}
 * holding {@code {"format":2,"alg":"A256GCM","kid":"<key id>","nonce":"<base64>","data":"<base64>"}}.
 *
 * <p>Encryption: AES-256-GCM with the {@link SecretStoreKey}, a fresh random 96-bit nonce on every
 * write and the secret's key ({@code catalog/x}) as associated data, so a document copied to
 * another key does not decrypt. Nothing of the value is stored in the clear. The fs object store
 * writes its files with mode 0600.
 *
 * <p>The version of a secret is the blob's etag; the random nonce makes every write's bytes, and
 * therefore the etag, new even when the same value is written again. {@link #create} uses the
 * store's {@code putIfAbsent}, so concurrent creators on any number of processes see exactly one
 * winner.
 *
 * <p>Documents of the older plaintext format ({@code "format":1}, base64 value) are still read;
 * the next write of the key replaces them with an encrypted document.
 *
 * <p>Without a key ({@link #withoutKey}) the store reads plaintext documents only and refuses
 * every write with an UNAVAILABLE error that says how to configure a key: secrets are never
 * written in plaintext. A document written with a different key is INTERNAL, naming both key ids.
 */
public final class FileSecretStore implements SecretStore {
  static final String DIRECTORY = "secrets/";
  private static final int PLAINTEXT_FORMAT = 1;
  private static final int ENCRYPTED_FORMAT = 2;
  private static final String ALGORITHM = "A256GCM";
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();
  static final String HOW_TO_CONFIGURE_A_KEY = "set SE_SECRET_STORE_KEY (64 hex digits or base64 of 32 bytes, "
      + "e.g. `openssl rand -base64 32`) or --secret-store.file.key-file (a file holding such a key, mode 0600); "
      + "`se dev` generates <data-dir>/" + SecretStoreKey.DEFAULT_FILE_NAME + " on first start";

  private final ObjectStore store;
  private final SecretStoreKey key;

  /** A store encrypting with {@code key}. */
  public FileSecretStore(ObjectStore store, SecretStoreKey key) {
    this.store = Objects.requireNonNull(store, "store");
    this.key = Objects.requireNonNull(key, "key");
  }

  private FileSecretStore(ObjectStore store) {
    this.store = Objects.requireNonNull(store, "store");
    this.key = null;
  }

  /** A store with no key: reads plaintext documents of the old format, refuses to write. */
  public static FileSecretStore withoutKey(ObjectStore store) {
    return new FileSecretStore(store);
  }

  /** True when this store can write (it has a key). */
  public boolean encrypts() {
    return key != null;
  }

  @Override
  public Optional<Secret> get(String key) {
    String objectKey = objectKey(key);
    return store.get(objectKey).map(blob -> new Secret(decode(key, blob.data()), blob.etag()));
  }

  @Override
  public boolean create(String key, byte[] value) {
    return store.putIfAbsent(objectKey(key), encode(key, value)).isPresent();
  }

  @Override
  public void put(String key, byte[] value) {
    store.put(objectKey(key), encode(key, value));
  }

  @Override
  public void delete(String key) {
    store.delete(objectKey(key));
  }

  @Override
  public String describe() {
    return "file:" + store.describe() + "/" + DIRECTORY + (key == null ? " (no key: read-only)" : "");
  }

  static String objectKey(String key) {
    return DIRECTORY + SecretKeys.check(key) + ".json";
  }

  private byte[] encode(String secretKey, byte[] value) {
    Objects.requireNonNull(value, "value");
    SecretKeys.check(secretKey);
    if (key == null) {
      throw new SeException(ErrorCode.UNAVAILABLE, "file secret store: refusing to write secret '" + secretKey
          + "' in plaintext because no encryption key is configured; " + HOW_TO_CONFIGURE_A_KEY);
    }
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    byte[] sealed;
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key.secretKey(), new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(aad(secretKey));
      sealed = cipher.doFinal(value);
    } catch (GeneralSecurityException e) {
      throw new SeException(ErrorCode.INTERNAL, "file secret store: cannot encrypt secret '" + secretKey
          + "' (" + e.getClass().getSimpleName() + ")");
    }
    ObjectNode doc = Json.object();
    doc.put("format", ENCRYPTED_FORMAT);
    doc.put("alg", ALGORITHM);
    doc.put("kid", key.id());
    doc.put("nonce", Base64.getEncoder().encodeToString(nonce));
    doc.put("data", Base64.getEncoder().encodeToString(sealed));
    return Json.toBytes(doc);
  }

  private byte[] decode(String secretKey, byte[] document) {
    JsonNode doc;
    try {
      doc = Json.parse(document);
    } catch (SeException e) {
      throw corrupt(secretKey);
    }
    JsonNode format = doc.get("format");
    if (format == null || !format.isInt()) {
      throw corrupt(secretKey);
    }
    return switch (format.asInt()) {
      case PLAINTEXT_FORMAT -> base64(secretKey, doc.get("value"));
      case ENCRYPTED_FORMAT -> decrypt(secretKey, doc);
      default -> throw corrupt(secretKey);
    };
  }

  private byte[] decrypt(String secretKey, JsonNode doc) {
    JsonNode alg = doc.get("alg");
    JsonNode kid = doc.get("kid");
    if (alg == null || !ALGORITHM.equals(alg.asText()) || kid == null || !kid.isTextual()) {
      throw corrupt(secretKey);
    }
    if (key == null) {
      throw new SeException(ErrorCode.UNAVAILABLE, "file secret store: secret '" + secretKey
          + "' is encrypted (key id " + kid.asText() + ") but no key is configured; " + HOW_TO_CONFIGURE_A_KEY);
    }
    if (!key.id().equals(kid.asText())) {
      throw wrongKey(secretKey, kid.asText());
    }
    byte[] nonce = base64(secretKey, doc.get("nonce"));
    byte[] sealed = base64(secretKey, doc.get("data"));
    if (nonce.length != NONCE_BYTES) {
      throw corrupt(secretKey);
    }
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.DECRYPT_MODE, key.secretKey(), new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(aad(secretKey));
      return cipher.doFinal(sealed);
    } catch (AEADBadTagException e) {
      throw new SeException(ErrorCode.INTERNAL, "file secret store: secret '" + secretKey
          + "' fails authentication: it was altered, or copied from another key");
    } catch (GeneralSecurityException e) {
      throw corrupt(secretKey);
    }
  }

  private SeException wrongKey(String secretKey, String storedId) {
    return new SeException(ErrorCode.INTERNAL, "file secret store: secret '" + secretKey
        + "' was encrypted with another key (key id " + storedId + "; the configured key has id " + key.id()
        + "): configure the key it was written with");
  }

  private static byte[] aad(String secretKey) {
    return ("se-secret:" + secretKey).getBytes(UTF_8);
  }

  private static byte[] base64(String secretKey, JsonNode text) {
    if (text == null || !text.isTextual()) {
      throw corrupt(secretKey);
    }
    try {
      return Base64.getDecoder().decode(text.asText());
    } catch (IllegalArgumentException e) {
      throw corrupt(secretKey);
    }
  }

  private static SeException corrupt(String key) {
    // No cause: parser messages may quote the document, which holds the secret.
    return new SeException(ErrorCode.INTERNAL, "secret '" + key + "' is unreadable");
  }
}
