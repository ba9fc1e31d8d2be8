package io.storageengine.objectstore;

import java.net.URI;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * An S3 server for tests: S3Proxy 3.0.0 started in-process on {@code 127.0.0.1}, a free port,
 * with one bucket created. Other modules' tests use it through this module's test-jar (and need
 * {@code org.gaul:s3proxy} on their own test classpath):
 *
 * <pre>{@code
 * S3ProxyFixture s3 = S3ProxyFixture.shared();        // or start() / close() for a private one
 * try (ObjectStore store = s3.newIsolatedStore()) {   // or S3ObjectStore.create(s3.config("p"), s3.credentials())
 *   ...
 * }
 * }</pre>
 *
 * <p>S3Proxy checks {@code If-None-Match} / {@code If-Match} on PUT, but as a read followed by
 * a write, so two concurrent conditional PUTs on one key can both succeed. Unless started with
 * {@code atomicConditions = false}, the fixture wraps the backend in
 * {@link AtomicConditionalBlobStore}, which makes each conditional write atomic, as real S3 is.
 */
public final class S3ProxyFixture implements AutoCloseable {
  public static final String ACCESS_KEY = "se-test-access-key";
  public static final String SECRET_KEY = "se-test-secret-key";
  public static final String REGION = "us-east-1";
  public static final String DEFAULT_BUCKET = "se-test";

  private final BlobStoreContext context;
  private final S3Proxy proxy;
  private final URI endpoint;
  private final String bucket;
  private final AtomicInteger prefixes = new AtomicInteger();

  private S3ProxyFixture(BlobStoreContext context, S3Proxy proxy, URI endpoint, String bucket) {
    this.context = context;
    this.proxy = proxy;
    this.endpoint = endpoint;
    this.bucket = bucket;
  }

  private static S3ProxyFixture shared;

  /**
   * One server for the whole test JVM, started on first use and stopped at JVM exit: starting
   * S3Proxy costs seconds, so test classes share it and isolate themselves with key prefixes
   * ({@link #newIsolatedStore()}) or buckets of their own. Do not close it.
   */
  public static synchronized S3ProxyFixture shared() {
    if (shared == null) {
      S3ProxyFixture fixture = start();
      Runtime.getRuntime().addShutdownHook(new Thread(fixture::close, "s3proxy-fixture-stop"));
      shared = fixture;
    }
    return shared;
  }

  /** S3Proxy over jclouds' in-memory {@code transient} backend, conditions made atomic. */
  public static S3ProxyFixture start() {
    return start("transient", new Properties(), true);
  }

  /** S3Proxy over the {@code filesystem-nio2} backend storing into {@code directory}. */
  public static S3ProxyFixture startFilesystem(Path directory, boolean atomicConditions) {
    Properties properties = new Properties();
    properties.setProperty("jclouds.filesystem.basedir", directory.toString());
    return start("filesystem-nio2", properties, atomicConditions);
  }

  /**
   * S3Proxy over the jclouds provider {@code provider} ({@code transient},
   * {@code transient-nio2}, {@code filesystem-nio2}, ...) with bucket {@value #DEFAULT_BUCKET}.
   */
  public static S3ProxyFixture start(
      String provider, Properties properties, boolean atomicConditions) {
    BlobStoreContext context = ContextBuilder.newBuilder(provider)
        .credentials("identity", "credential")
        .overrides(properties)
        .build(BlobStoreContext.class);
    try {
      BlobStore blobStore = atomicConditions
          ? new AtomicConditionalBlobStore(context.getBlobStore())
          : context.getBlobStore();
      S3Proxy proxy = S3Proxy.builder()
          .blobStore(blobStore)
          .endpoint(URI.create("http://127.0.0.1:0"))
          .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
          .build();
      proxy.start();
      // start() returns once Jetty is starting; wait until it accepts requests.
      for (int i = 0; i < 500 && !"STARTED".equals(proxy.getState()); i++) {
        Thread.sleep(10);
      }
      URI endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
      S3ProxyFixture fixture = new S3ProxyFixture(context, proxy, endpoint, DEFAULT_BUCKET);
      fixture.createBucket(DEFAULT_BUCKET);
      return fixture;
    } catch (Exception e) {
      context.close();
      throw new IllegalStateException("cannot start S3Proxy: " + e, e);
    }
  }

  /** The {@code http://127.0.0.1:<port>} endpoint. */
  public URI endpoint() {
    return endpoint;
  }

  /** The bucket created at start. */
  public String bucket() {
    return bucket;
  }

  public String accessKey() {
    return ACCESS_KEY;
  }

  public String secretKey() {
    return SECRET_KEY;
  }

  public AwsCredentialsProvider credentials() {
    return StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY));
  }

  /**
   * A new raw client for this server, configured like {@link S3ObjectStore#create} configures
   * one for an S3-compatible endpoint; the caller closes it.
   */
  public S3Client newClient() {
    return S3Client.builder()
        .httpClientBuilder(Apache5HttpClient.builder().expectContinueEnabled(true))
        .endpointOverride(endpoint)
        .forcePathStyle(true)
        .serviceConfiguration(s -> s.chunkedEncodingEnabled(false))
        .region(Region.of(REGION))
        .credentialsProvider(credentials())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  /** Creates another bucket (3 to 63 lowercase characters). */
  public void createBucket(String name) {
    try (S3Client client = newClient()) {
      client.createBucket(r -> r.bucket(name));
    }
  }

  /** An {@code s3} config for this server's bucket under {@code prefix}. */
  public ObjectStoreConfig config(String prefix) {
    return ObjectStoreConfig.s3(bucket, prefix, endpoint.toString(), REGION);
  }

  /** A store on this server's bucket under {@code prefix}, built as production builds it. */
  public S3ObjectStore newStore(String prefix) {
    return S3ObjectStore.create(config(prefix), credentials());
  }

  /** A store under a prefix no other call of this method returned: an empty store. */
  public S3ObjectStore newIsolatedStore() {
    return newStore("isolated-" + prefixes.incrementAndGet());
  }

  @Override
  public void close() {
    try {
      proxy.stop();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop S3Proxy", e);
    } finally {
      context.close();
    }
  }
}
