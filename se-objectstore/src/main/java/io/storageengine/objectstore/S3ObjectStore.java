package io.storageengine.objectstore;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.RetryScope;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.utils.SdkAutoCloseable;

/**
 * An object store in an S3 bucket (AWS or any S3-compatible store with conditional writes),
 * optionally under a key prefix.
 *
 * <p>{@link #putIfAbsent} is {@code PutObject} with {@code If-None-Match: *} and
 * {@link #putIfMatch} is {@code PutObject} with {@code If-Match}: the server decides, so they
 * are atomic across every client. A failed condition (HTTP 412, or 404 for {@code If-Match} on
 * a missing key) is an empty result; a {@code 409 ConditionalRequestConflict} (a concurrent
 * conditional write on the same key) is retried a few times.
 *
 * <p>Conditional writes are sent without the SDK's automatic retries: if a first attempt
 * succeeded but its response was lost, a retry would see its own write and answer 412, and the
 * caller would wrongly conclude that somebody else won. Instead such a failure surfaces as
 * UNAVAILABLE, "outcome unknown", which callers already handle.
 *
 * <p>Etags are returned without the surrounding quotes of the HTTP header.
 */
public final class S3ObjectStore implements ObjectStore {
  private static final String DEFAULT_REGION = "us-east-1";
  private static final int CONFLICT_ATTEMPTS = 5;
  private static final Pattern BUCKET_NAME = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

  private final S3Client client;
  /** The same settings as {@link #client} but without SDK retries, for conditional writes. */
  private final S3Client conditionalClient;
  private final String bucket;
  private final String keyPrefix;
  private final List<SdkAutoCloseable> owned;

  private S3ObjectStore(S3Client client, S3Client conditionalClient, String bucket,
      String keyPrefix, List<SdkAutoCloseable> owned) {
    this.client = client;
    this.conditionalClient = conditionalClient;
    this.bucket = bucket;
    this.keyPrefix = keyPrefix;
    this.owned = owned;
  }

  /** Opens the store of an {@code s3} config with credentials from the AWS default chain. */
  public static S3ObjectStore create(ObjectStoreConfig config) {
    DefaultCredentialsProvider credentials = DefaultCredentialsProvider.builder().build();
    try {
      S3ObjectStore store = create(config, credentials);
      store.owned.add(credentials);
      return store;
    } catch (RuntimeException e) {
      credentials.close();
      throw e;
    }
  }

  /**
   * Opens the store of an {@code s3} config with the given credentials: region from the config,
   * else the standard AWS variables, else {@code us-east-1}. With an endpoint (S3-compatible
   * stores): path-style access; checksums only where the S3 API requires them, because several
   * S3-compatible servers reject the SDK's default trailing checksums; and whole-payload
   * signatures instead of chunked ones, because some servers (S3Proxy) answer "100 Continue"
   * to a chunk-signed upload before checking its conditions and then cut the connection, so a
   * failed condition would look like a network failure. Bodies are byte arrays in memory, so
   * hashing them up front costs nothing extra.
   */
  public static S3ObjectStore create(ObjectStoreConfig config, AwsCredentialsProvider credentials) {
    if (config.bucket() == null) {
      throw SeException.invalid(
          "object store type s3 needs %s", ObjectStoreConfig.BUCKET_OPTION);
    }
    String bucket = checkBucket(config.bucket());
    String prefix = normalizePrefix(config.prefix());
    URI endpoint = config.endpoint() == null ? null : endpoint(config.endpoint());
    Region region = Region.of(region(config.region()));
    // One connection pool for both clients; the store closes it after them.
    SdkHttpClient http = Apache5HttpClient.builder().expectContinueEnabled(true).build();
    List<SdkAutoCloseable> owned = new ArrayList<>();
    S3Client client = newClient(http, region, endpoint, credentials, false);
    owned.add(client);
    S3Client conditionalClient = newClient(http, region, endpoint, credentials, true);
    owned.add(conditionalClient);
    owned.add(http);
    return new S3ObjectStore(client, conditionalClient, bucket, prefix, owned);
  }

  private static S3Client newClient(SdkHttpClient http, Region region, URI endpoint,
      AwsCredentialsProvider credentials, boolean withoutRetries) {
    S3ClientBuilder builder = S3Client.builder()
        .httpClient(http)
        .region(region)
        .credentialsProvider(credentials);
    if (endpoint != null) {
      builder.endpointOverride(endpoint)
          .forcePathStyle(true)
          .serviceConfiguration(s -> s.chunkedEncodingEnabled(false))
          .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
          .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
    }
    if (withoutRetries) {
      builder.overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()));
    }
    return builder.build();
  }

  @Override
  public Optional<Blob> get(String key) {
    String s3Key = s3Key(key);
    try {
      ResponseBytes<GetObjectResponse> bytes =
          client.getObjectAsBytes(r -> r.bucket(bucket).key(s3Key));
      return Optional.of(new Blob(bytes.asByteArray(), unquote(bytes.response().eTag())));
    } catch (S3Exception e) {
      if (isNoSuchKey(e)) {
        return Optional.empty();
      }
      throw failure("read", key, e);
    } catch (SdkException e) {
      throw failure("read", key, e);
    }
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    String s3Key = s3Key(key);
    Keys.checkRange(key, offset, length);
    if (length == 0) {
      return head(key).map(info -> new byte[0]);
    }
    String range = "bytes=" + offset + "-" + (offset + length - 1);
    try {
      return Optional.of(
          client.getObjectAsBytes(r -> r.bucket(bucket).key(s3Key).range(range)).asByteArray());
    } catch (S3Exception e) {
      if (isNoSuchKey(e)) {
        return Optional.empty();
      }
      if (e.statusCode() == 416) {
        return Optional.of(new byte[0]); // the key exists, the range starts past its end
      }
      throw failure("read", key, e);
    } catch (SdkException e) {
      throw failure("read", key, e);
    }
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    String s3Key = s3Key(key);
    try {
      HeadObjectResponse head = client.headObject(r -> r.bucket(bucket).key(s3Key));
      return Optional.of(new ObjectInfo(key, head.contentLength(), unquote(head.eTag()), head.lastModified()));
    } catch (S3Exception e) {
      if (isNoSuchKey(e)) {
        return Optional.empty();
      }
      throw failure("read", key, e);
    } catch (SdkException e) {
      throw failure("read", key, e);
    }
  }

  @Override
  public String put(String key, byte[] data) {
    String s3Key = s3Key(key);
    Keys.checkData(key, data);
    try {
      return unquote(client.putObject(
          r -> r.bucket(bucket).key(s3Key), RequestBody.fromBytes(data)).eTag());
    } catch (SdkException e) {
      throw failure("write", key, e);
    }
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    String s3Key = s3Key(key);
    Keys.checkData(key, data);
    return conditionalPut(key, data, PutObjectRequest.builder()
        .bucket(bucket).key(s3Key).ifNoneMatch("*").build());
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    String s3Key = s3Key(key);
    Keys.checkData(key, data);
    if (etag == null) {
      return Optional.empty();
    }
    return conditionalPut(key, data, PutObjectRequest.builder()
        .bucket(bucket).key(s3Key).ifMatch('"' + unquote(etag) + '"').build());
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> out = new ArrayList<>();
    try {
      for (S3Object object : client.listObjectsV2Paginator(
          r -> r.bucket(bucket).prefix(keyPrefix + prefix)).contents()) {
        String key = object.key().substring(keyPrefix.length());
        if (isValidKey(key)) {
          out.add(new ObjectInfo(key, object.size(), unquote(object.eTag()), object.lastModified()));
        }
      }
    } catch (SdkException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, String.format(
          "s3 object store: cannot list prefix '%s' in bucket '%s' (%s)",
          prefix, bucket, describeFailure(e)), e);
    }
    // S3 orders by UTF-8 bytes; sort like every other backend (Java string order). The two
    // differ only for characters outside the Basic Multilingual Plane.
    out.sort(Comparator.comparing(ObjectInfo::key));
    return out;
  }

  /** {@inheritDoc} This is {@code ListObjectsV2} with delimiter {@code /}. */
  @Override
  public Children listChildren(String prefix) {
    Keys.checkPrefix(prefix);
    List<ObjectInfo> objects = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    try {
      for (ListObjectsV2Response page : client.listObjectsV2Paginator(
          r -> r.bucket(bucket).prefix(keyPrefix + prefix).delimiter("/"))) {
        for (S3Object object : page.contents()) {
          String key = object.key().substring(keyPrefix.length());
          if (isValidKey(key)) {
            objects.add(new ObjectInfo(key, object.size(), unquote(object.eTag()), object.lastModified()));
          }
        }
        for (CommonPrefix common : page.commonPrefixes()) {
          String directory = common.prefix().substring(keyPrefix.length());
          if (isValidKey(directory.substring(0, directory.length() - 1))) {
            directories.add(directory);
          }
        }
      }
    } catch (SdkException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, String.format(
          "s3 object store: cannot list prefix '%s' in bucket '%s' (%s)",
          prefix, bucket, describeFailure(e)), e);
    }
    // Sorted like every other backend (Java string order), as in list.
    objects.sort(Comparator.comparing(ObjectInfo::key));
    directories.sort(Comparator.naturalOrder());
    return new Children(objects, directories);
  }

  @Override
  public void delete(String key) {
    String s3Key = s3Key(key);
    try {
      client.deleteObject(r -> r.bucket(bucket).key(s3Key));
    } catch (S3Exception e) {
      if (!isNoSuchKey(e)) {
        throw failure("delete", key, e);
      }
    } catch (SdkException e) {
      throw failure("delete", key, e);
    }
  }

  @Override
  public String describe() {
    return "s3://" + bucket + "/" + keyPrefix;
  }

  @Override
  public void close() {
    // Clients first, then the HTTP client and credentials they use.
    for (SdkAutoCloseable closeable : owned) {
      closeable.close();
    }
  }

  private Optional<String> conditionalPut(String key, byte[] data, PutObjectRequest request) {
    for (int attempt = 1; ; attempt++) {
      try {
        return Optional.of(
            unquote(conditionalClient.putObject(request, RequestBody.fromBytes(data)).eTag()));
      } catch (S3Exception e) {
        if (e.statusCode() == 412 || e.statusCode() == 404 && request.ifMatch() != null) {
          return Optional.empty();
        }
        // 409: another conditional write on this key was in flight and nothing was written,
        // so trying again is safe.
        if (e.statusCode() == 409 && attempt < CONFLICT_ATTEMPTS) {
          RetryScope.noteRetry("conflict");
          pause(attempt);
          continue;
        }
        throw outcomeUnknown(key, e);
      } catch (SdkException e) {
        throw outcomeUnknown(key, e);
      }
    }
  }

  private static void pause(int attempt) {
    try {
      Thread.sleep(10L * attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SeException(ErrorCode.UNAVAILABLE, "interrupted while retrying an s3 write", e);
    }
  }

  private String s3Key(String key) {
    return keyPrefix + Keys.check(key);
  }

  private static boolean isNoSuchKey(S3Exception e) {
    String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    return e.statusCode() == 404 && !"NoSuchBucket".equals(code);
  }

  private static boolean isValidKey(String key) {
    try {
      Keys.check(key);
      return true;
    } catch (SeException e) {
      return false;
    }
  }

  private SeException failure(String action, String key, SdkException e) {
    return new SeException(ErrorCode.UNAVAILABLE, String.format(
        "s3 object store: cannot %s key '%s' in bucket '%s' (%s)",
        action, key, bucket, describeFailure(e)), e);
  }

  private SeException outcomeUnknown(String key, SdkException e) {
    return new SeException(ErrorCode.UNAVAILABLE, String.format(
        "s3 object store: conditional write of key '%s' in bucket '%s' failed (%s);"
            + " it may or may not have been applied",
        key, bucket, describeFailure(e)), e);
  }

  /**
   * The HTTP status and S3 error code, or the first line of a client-side error. Never the
   * server's message text or request details, which may echo signed headers.
   */
  private static String describeFailure(SdkException e) {
    if (e instanceof S3Exception s3) {
      String code = s3.awsErrorDetails() == null ? null : s3.awsErrorDetails().errorCode();
      return "HTTP " + s3.statusCode() + (code == null ? "" : " " + code);
    }
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int newline = message.indexOf('\n');
    message = newline < 0 ? message : message.substring(0, newline);
    return message.length() > 200 ? message.substring(0, 200) + "..." : message;
  }

  private static String unquote(String etag) {
    if (etag != null && etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")) {
      return etag.substring(1, etag.length() - 1);
    }
    return etag;
  }

  private static String checkBucket(String bucket) {
    if (bucket == null || !BUCKET_NAME.matcher(bucket).matches()) {
      throw SeException.invalid("invalid %s '%s': 3 to 63 lowercase letters, digits, '.' or '-'",
          ObjectStoreConfig.BUCKET_OPTION, bucket);
    }
    return bucket;
  }

  /** {@code null}, {@code ""} or {@code "/"} mean no prefix; else {@code "a/b"} becomes {@code "a/b/"}. */
  private static String normalizePrefix(String prefix) {
    if (prefix == null) {
      return "";
    }
    String trimmed = prefix.replaceAll("^/+|/+$", "");
    if (trimmed.isEmpty()) {
      return "";
    }
    if (!isValidKey(trimmed)) {
      throw SeException.invalid(
          "invalid %s '%s': segments must be non-empty and not '.' or '..'",
          ObjectStoreConfig.PREFIX_OPTION, prefix);
    }
    return trimmed + "/";
  }

  private static URI endpoint(String endpoint) {
    try {
      URI uri = new URI(endpoint);
      if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null) {
        return uri;
      }
    } catch (URISyntaxException e) {
      // reported below
    }
    throw SeException.invalid("invalid %s '%s': expected http(s)://host[:port]",
        ObjectStoreConfig.ENDPOINT_OPTION, endpoint);
  }

  /** The configured region, else {@code aws.region}, {@code AWS_REGION}, {@code AWS_DEFAULT_REGION}. */
  static String region(String configured) {
    String[] candidates = {
      configured, System.getProperty("aws.region"),
      System.getenv("AWS_REGION"), System.getenv("AWS_DEFAULT_REGION")
    };
    for (String candidate : candidates) {
      if (candidate != null && !candidate.isBlank()) {
        return candidate.trim();
      }
    }
    return DEFAULT_REGION;
  }
}
