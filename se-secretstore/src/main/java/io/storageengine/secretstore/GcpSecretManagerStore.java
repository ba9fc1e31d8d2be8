package io.storageengine.secretstore;

import com.google.api.gax.core.FixedCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.api.gax.rpc.AlreadyExistsException;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.api.gax.rpc.StatusCode;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.OAuth2Credentials;
import com.google.cloud.secretmanager.v1.AccessSecretVersionResponse;
import com.google.cloud.secretmanager.v1.DeleteSecretRequest;
import com.google.cloud.secretmanager.v1.Replication;
import com.google.cloud.secretmanager.v1.SecretManagerServiceClient;
import com.google.cloud.secretmanager.v1.SecretManagerServiceSettings;
import com.google.cloud.secretmanager.v1.SecretPayload;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.grpc.ManagedChannelBuilder;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * Secrets in Google Cloud Secret Manager, through the official client
 * ({@code SecretManagerServiceClient}, gRPC).
 *
 * <p>Secret ids allow {@code [a-zA-Z0-9_-]} (at most 255 characters), so key {@code catalog/x} is
 * the secret {@code projects/<project>/secrets/<prefix><encoded key>} with {@link SecretNames#GCP}
 * ({@code catalog/my_lake} is {@code catalog_smy__lake}; default prefix {@code storage-engine-}),
 * with automatic replication. The value is the payload of the latest version, sent with its
 * CRC32C (the service checks it, and so does a read). The version is the version number with the
 * secret's creation time, so a key deleted and created again (numbers restart at 1) never repeats
 * a version.
 *
 * <ul>
 *   <li>{@link #get}: Get Secret, Access Secret Version {@code latest}, Get Secret again; when the
 *       secret was re-created in between (its creation time changed) the read is repeated, so a
 *       version never pairs with another incarnation's value. A secret without versions is absent.</li>
 *   <li>{@link #create}: Create Secret, atomic in the service (ALREADY_EXISTS means taken), then Add
 *       Secret Version. Between the two calls the key reads as absent and other creates return
 *       false. A secret left without a version for more than {@value #STALE_MINUTES} minutes (its
 *       creator died between the calls) is deleted with its etag (a conditional delete: one of
 *       several such callers succeeds) and the create retried. A creator stalled for longer than
 *       that between its own two calls can lose its claim and write into the new owner's secret.</li>
 *   <li>{@link #put}: Add Secret Version (creating the secret when it is missing).</li>
 *   <li>{@link #delete}: Delete Secret: the secret and all its versions, at once.</li>
 * </ul>
 *
 * <p>Credentials: a fixed OAuth access token if given, else a service-account JSON file, else
 * Application Default Credentials. Failures are UNAVAILABLE naming the key and the gRPC status;
 * the service's messages are not passed on and no token or value appears in them.
 */
public final class GcpSecretManagerStore implements ExternalSecretStore {
  public static final String DEFAULT_PREFIX = "storage-engine-";
  static final long STALE_MINUTES = 5;
  private static final int MAX_ID = 255;

  private final SecretManagerServiceClient client;
  private final String project;
  private final String prefix;
  private final String description;

  /** Uses {@code client} (owned: closed with the store) for secrets of {@code project} named {@code prefix + encoded key}. */
  public GcpSecretManagerStore(SecretManagerServiceClient client, String project, String prefix, String description) {
    this.client = Objects.requireNonNull(client, "client");
    this.project = checkProject(project);
    this.prefix = checkPrefix(prefix);
    this.description = description;
  }

  /** The settings of a {@code gcp-sm} store ({@code --secret-store.gcp-sm.*}); blank means unset. */
  public record Options(String project, String credentialsFile, String accessToken, String endpoint, String prefix) {
    @Override
    public String toString() {
      return "GcpSecretManagerStore.Options[project=" + project + ", endpoint=" + endpoint + ", prefix=" + prefix + "]";
    }
  }

  /**
   * A client for {@code options}. The endpoint is {@code host:port} (TLS), or
   * {@code http://host:port} for a plaintext emulator; blank means Google's.
   */
  public static GcpSecretManagerStore open(Options o) {
    String project = checkProject(blankToNull(o.project()));
    String prefix = o.prefix() == null ? null : o.prefix().strip();
    checkPrefix(prefix);
    SecretManagerServiceSettings.Builder settings = SecretManagerServiceSettings.newBuilder();
    String endpoint = blankToNull(o.endpoint());
    if (endpoint != null) {
      boolean plaintext = endpoint.startsWith("http://");
      String hostPort = endpoint.replaceFirst("^https?://", "").replaceFirst("/+$", "");
      if (!hostPort.matches("[A-Za-z0-9.\\-\\[\\]:]+:[0-9]+")) {
        throw SeException.invalid("--secret-store.gcp-sm.endpoint: expected host:port or http://host:port, got '%s'",
            endpoint);
      }
      settings.setEndpoint(hostPort);
      InstantiatingGrpcChannelProvider.Builder channel = SecretManagerServiceSettings.defaultGrpcTransportProviderBuilder()
          .setEndpoint(hostPort);
      if (plaintext) {
        channel.setChannelConfigurator(ManagedChannelBuilder::usePlaintext);
      }
      settings.setTransportChannelProvider(channel.build());
    }
    String token = blankToNull(o.accessToken());
    String file = blankToNull(o.credentialsFile());
    if (token != null) {
      settings.setCredentialsProvider(FixedCredentialsProvider.create(OAuth2Credentials.create(new AccessToken(token, null))));
    } else if (file != null) {
      try (InputStream in = Files.newInputStream(Path.of(file))) {
        settings.setCredentialsProvider(FixedCredentialsProvider.create(GoogleCredentials.fromStream(in)
            .createScoped(List.of("https://www.googleapis.com/auth/cloud-platform"))));
      } catch (IOException | RuntimeException e) {
        throw SeException.invalid("--secret-store.gcp-sm.credentials-file: cannot read service-account credentials "
            + "from '%s' (%s)", file, e.getClass().getSimpleName());
      }
    }
    try {
      return new GcpSecretManagerStore(SecretManagerServiceClient.create(settings.build()), project, prefix,
          "gcp-sm:" + (endpoint == null ? "" : endpoint + "/") + "projects/" + project + "/secrets/"
              + (prefix == null ? DEFAULT_PREFIX : prefix));
    } catch (IOException | RuntimeException e) {
      throw SeException.invalid("gcp-sm secret store: cannot configure the client (%s); set "
          + "--secret-store.gcp-sm.credentials-file, --secret-store.gcp-sm.access-token or GOOGLE_APPLICATION_CREDENTIALS",
          e.getClass().getSimpleName());
    }
  }

  @Override
  public Optional<Secret> get(String key) {
    String name = name(key);
    return call("read", key, () -> read(name, key));
  }

  @Override
  public boolean create(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    return call("create", key, () -> {
      for (int attempt = 0; attempt < 3; attempt++) {
        try {
          client.createSecret("projects/" + project, id(name), newSecret());
        } catch (AlreadyExistsException e) {
          if (read(name, key).isPresent() || !removeIfStale(name)) {
            return false;
          }
          continue;
        }
        try {
          addVersion(name, value);
          return true;
        } catch (NotFoundException e) {
          // Deleted between the two calls (by delete(), or as stale): try again.
        }
      }
      return false;
    });
  }

  @Override
  public void put(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    call("write", key, () -> {
      for (int attempt = 0; ; attempt++) {
        try {
          addVersion(name, value);
          return null;
        } catch (NotFoundException e) {
          if (attempt > 3) {
            throw e;
          }
          try {
            client.createSecret("projects/" + project, id(name), newSecret());
          } catch (AlreadyExistsException raced) {
            // Created by someone else in between: add the version to theirs.
          }
        }
      }
    });
  }

  @Override
  public void delete(String key) {
    String name = name(key);
    call("delete", key, () -> {
      try {
        client.deleteSecret(name);
      } catch (NotFoundException e) {
        // Already gone.
      }
      return null;
    });
  }

  /**
   * {@code name} is a secret id of the configured project ({@code <id>} or {@code <id>/<version>}),
   * or a full resource name ({@code projects/<p>/secrets/<id>[/versions/<v>]}); version default
   * {@code latest}.
   */
  @Override
  public Optional<byte[]> readReference(String name) {
    String resource;
    if (name.startsWith("projects/")) {
      resource = name.contains("/versions/") ? name : name + "/versions/latest";
    } else {
      int slash = name.indexOf('/');
      resource = "projects/" + project + "/secrets/" + (slash < 0 ? name + "/versions/latest"
          : name.substring(0, slash) + "/versions/" + name.substring(slash + 1));
    }
    return call("read", name, () -> access(resource, name).map(r -> r.getPayload().getData().toByteArray()));
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void close() {
    client.close();
  }

  private Optional<Secret> read(String name, String key) {
    for (int attempt = 0; attempt < 5; attempt++) {
      Optional<com.google.cloud.secretmanager.v1.Secret> before = metadata(name);
      if (before.isEmpty()) {
        return Optional.empty();
      }
      Optional<AccessSecretVersionResponse> latest = access(name + "/versions/latest", key);
      Optional<com.google.cloud.secretmanager.v1.Secret> after = metadata(name);
      if (after.isPresent() && after.get().getCreateTime().equals(before.get().getCreateTime())) {
        return latest.map(r -> {
          String n = r.getName().substring(r.getName().lastIndexOf('/') + 1);
          return new Secret(r.getPayload().getData().toByteArray(), n + "@" + time(before.get().getCreateTime()));
        });
      }
    }
    throw new SeException(ErrorCode.UNAVAILABLE, "gcp-sm secret store: cannot read secret '" + key
        + "' (it was deleted and created again during every read)");
  }

  private Optional<com.google.cloud.secretmanager.v1.Secret> metadata(String name) {
    try {
      return Optional.of(client.getSecret(name));
    } catch (NotFoundException e) {
      return Optional.empty();
    }
  }

  /** The version's value; empty when the secret or version is missing, or the version is disabled or destroyed. */
  private Optional<AccessSecretVersionResponse> access(String resource, String what) {
    AccessSecretVersionResponse r;
    try {
      r = client.accessSecretVersion(resource);
    } catch (NotFoundException e) {
      return Optional.empty();
    } catch (ApiException e) {
      if (e.getStatusCode().getCode() == StatusCode.Code.FAILED_PRECONDITION) {
        return Optional.empty();
      }
      throw e;
    }
    SecretPayload payload = r.getPayload();
    if (payload.hasDataCrc32C() && payload.getDataCrc32C() != crc32c(payload.getData())) {
      throw new SeException(ErrorCode.INTERNAL, "gcp-sm secret store: secret '" + what
          + "' arrived corrupted (CRC32C mismatch)");
    }
    return Optional.of(r);
  }

  private void addVersion(String name, byte[] value) {
    ByteString data = ByteString.copyFrom(value);
    client.addSecretVersion(name, SecretPayload.newBuilder().setData(data).setDataCrc32C(crc32c(data)).build());
  }

  /** Deletes {@code name} when it has had no version for {@value #STALE_MINUTES} minutes; true when it is gone. */
  private boolean removeIfStale(String name) {
    Optional<com.google.cloud.secretmanager.v1.Secret> meta = metadata(name);
    if (meta.isEmpty()) {
      return true;
    }
    Timestamp created = meta.get().getCreateTime();
    if (Instant.ofEpochSecond(created.getSeconds(), created.getNanos())
        .isAfter(Instant.now().minus(Duration.ofMinutes(STALE_MINUTES)))) {
      return false;
    }
    try {
      client.deleteSecret(DeleteSecretRequest.newBuilder().setName(name).setEtag(meta.get().getEtag()).build());
      return true;
    } catch (NotFoundException e) {
      return true;
    } catch (ApiException e) {
      StatusCode.Code code = e.getStatusCode().getCode();
      if (code == StatusCode.Code.ABORTED || code == StatusCode.Code.FAILED_PRECONDITION) {
        return true; // Someone else changed or removed it first: look again.
      }
      throw e;
    }
  }

  private static com.google.cloud.secretmanager.v1.Secret newSecret() {
    return com.google.cloud.secretmanager.v1.Secret.newBuilder()
        .setReplication(Replication.newBuilder().setAutomatic(Replication.Automatic.getDefaultInstance()))
        .putLabels("managed-by", "storage-engine")
        .build();
  }

  private String name(String key) {
    String id = prefix + SecretNames.GCP.encode(key);
    if (id.length() > MAX_ID) {
      throw SeException.invalid("invalid secret key '%s': encoded with the prefix it exceeds Secret Manager's %d characters",
          key, MAX_ID);
    }
    return "projects/" + project + "/secrets/" + id;
  }

  private static String id(String name) {
    return name.substring(name.lastIndexOf('/') + 1);
  }

  private static long crc32c(ByteString data) {
    CRC32C crc = new CRC32C();
    crc.update(data.asReadOnlyByteBuffer());
    return crc.getValue();
  }

  private static String time(Timestamp t) {
    return t.getSeconds() + "." + String.format("%09d", t.getNanos());
  }

  private <T> T call(String action, String key, Supplier<T> body) {
    try {
      return body.get();
    } catch (ApiException e) {
      StatusCode.Code code = e.getStatusCode().getCode();
      String hint = switch (code) {
        case UNAUTHENTICATED -> ": not authenticated, check the credentials";
        case PERMISSION_DENIED -> ": permission denied, check the service account's roles";
        default -> "";
      };
      throw new SeException(ErrorCode.UNAVAILABLE, "gcp-sm secret store: cannot " + action + " secret '" + key
          + "' (" + code + hint + ")");
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "gcp-sm secret store: cannot " + action + " secret '" + key
          + "' (" + e.getClass().getSimpleName() + ")");
    }
  }

  private static String checkPrefix(String prefix) {
    String p = prefix == null ? DEFAULT_PREFIX : prefix;
    if (!p.isEmpty() && !p.matches("[a-zA-Z0-9_-]+")) {
      throw SeException.invalid("--secret-store.gcp-sm.prefix: '%s' has characters Secret Manager ids do not allow "
          + "(letters, digits, _ and - only)", p);
    }
    return p;
  }

  private static String checkProject(String project) {
    if (project == null || project.isBlank()) {
      throw SeException.invalid("gcp-sm secret store: no project; set --secret-store.gcp-sm.project or "
          + "SE_SECRET_STORE_GCP_SM_PROJECT");
    }
    if (!project.matches("[a-z0-9.:-]+")) {
      throw SeException.invalid("--secret-store.gcp-sm.project: expected a project id, got '%s'", project);
    }
    return project;
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.strip();
  }
}
