package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * The 256-bit AES key the {@link FileSecretStore} encrypts with.
 *
 * <p>Text form: 64 hex digits or the base64 of 32 bytes (standard or URL alphabet, padding
 * optional), surrounding whitespace ignored. {@link #id()} is a fingerprint (the first 8 bytes of
 * the SHA-256 of the key, in hex) that is stored next to each ciphertext so a wrong key is
 * reported as such; it reveals nothing usable about the key. {@link #toString()} shows only the id.
 */
public final class SecretStoreKey {
  /** The file {@code se dev} generates in its data directory. */
  public static final String DEFAULT_FILE_NAME = "secret-store.key";
  static final int BYTES = 32;
  private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]{64}");
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  private final SecretKey key;
  private final String id;

  private SecretStoreKey(byte[] bytes) {
    this.key = new SecretKeySpec(bytes, "AES");
    this.id = fingerprint(bytes);
  }

  /** A new random key. */
  public static SecretStoreKey random() {
    byte[] bytes = new byte[BYTES];
    new SecureRandom().nextBytes(bytes);
    return new SecretStoreKey(bytes);
  }

  /**
   * Parses the text form; {@code source} names where it came from ({@code SE_SECRET_STORE_KEY},
   * a file) in the INVALID_ARGUMENT error, which never quotes the text.
   */
  public static SecretStoreKey parse(String text, String source) {
    String t = text == null ? "" : text.strip();
    if (HEX.matcher(t).matches()) {
      return new SecretStoreKey(HexFormat.of().parseHex(t));
    }
    byte[] bytes;
    try {
      bytes = t.contains("-") || t.contains("_")
          ? Base64.getUrlDecoder().decode(t) : Base64.getDecoder().decode(t);
    } catch (IllegalArgumentException e) {
      throw badKey(source, "is neither 64 hex digits nor base64");
    }
    if (bytes.length != BYTES) {
      throw badKey(source, "must be 256 bits (32 bytes), got " + bytes.length + " bytes");
    }
    return new SecretStoreKey(bytes);
  }

  /** Reads a key file holding the text form; INVALID_ARGUMENT naming the file when it is missing or malformed. */
  public static SecretStoreKey readFile(Path file) {
    try {
      return parse(Files.readString(file, UTF_8), "key file '" + file + "'");
    } catch (NoSuchFileException e) {
      throw SeException.invalid("secret store key file '%s' does not exist", file);
    } catch (IOException e) {
      throw SeException.invalid("secret store key file '%s' cannot be read (%s)", file, e.getClass().getSimpleName());
    }
  }

  /**
   * The key in {@code file}, generating a random one first when the file does not exist. A new
   * file is created atomically with mode 0600 (owner read/write only, where the file system has
   * POSIX permissions), holding the key in base64; concurrent callers all end up with the key of
   * the one that created it.
   */
  public static SecretStoreKey readOrGenerate(Path file) {
    if (Files.exists(file)) {
      return readFile(file);
    }
    SecretStoreKey generated = random();
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      byte[] text = (Base64.getEncoder().encodeToString(generated.key.getEncoded()) + "\n").getBytes(UTF_8);
      Path temp = Files.createTempFile(parent, ".secret-store-key", ".tmp", posixAttributes(parent));
      try {
        Files.write(temp, text, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
        Files.createLink(file, temp);
      } finally {
        Files.deleteIfExists(temp);
      }
      return generated;
    } catch (FileAlreadyExistsException e) {
      return readFile(file);
    } catch (IOException e) {
      throw SeException.invalid("cannot create secret store key file '%s' (%s)", file, e.getClass().getSimpleName());
    }
  }

  private static java.nio.file.attribute.FileAttribute<?>[] posixAttributes(Path dir) {
    boolean posix = dir != null && dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    return posix
        ? new java.nio.file.attribute.FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
        : new java.nio.file.attribute.FileAttribute<?>[0];
  }

  /** The fingerprint stored with each ciphertext. */
  public String id() {
    return id;
  }

  SecretKey secretKey() {
    return key;
  }

  @Override
  public String toString() {
    return "SecretStoreKey[id=" + id + "]";
  }

  private static String fingerprint(byte[] bytes) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from the JDK", e);
    }
  }

  private static SeException badKey(String source, String problem) {
    return SeException.invalid("secret store key from %s %s; give 64 hex digits or the base64 of 32 random bytes "
        + "(e.g. `openssl rand -base64 32`)", source, problem);
  }
}
