package io.storageengine.secretstore;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.net.URI;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClientBuilder;
import software.amazon.awssdk.services.secretsmanager.model.GetSecretValueResponse;
import software.amazon.awssdk.services.secretsmanager.model.ResourceExistsException;
import software.amazon.awssdk.services.secretsmanager.model.ResourceNotFoundException;
import software.amazon.awssdk.services.secretsmanager.model.SecretsManagerException;

/**
 * Secrets in AWS Secrets Manager, through the AWS SDK v2.
 *
 * <p>Key {@code catalog/x} is the secret named {@code <prefix>catalog/x} (Secrets Manager names
 * allow {@code /}, so keys map unchanged; default prefix {@code storage-engine/}), holding the
 * value as SecretBinary. The version is the secret's VersionId: every write passes a fresh random
 * ClientRequestToken, which becomes the new VersionId.
 *
 * <ul>
 *   <li>{@link #create}: CreateSecret, atomic in the service; ResourceExistsException means taken.</li>
 *   <li>{@link #put}: PutSecretValue, or CreateSecret when the secret does not exist yet.</li>
 *   <li>{@link #delete}: DeleteSecret with ForceDeleteWithoutRecovery, so the name can be created
 *       again at once (no 7-day recovery window holding it).</li>
 * </ul>
 *
 * <p>Credentials and region come from the SDK's default chains ({@code AWS_*} variables, profile,
 * instance role) unless given. Service failures are UNAVAILABLE naming the key and the AWS error
 * code only; the SDK's messages are not passed on.
 */
public final class AwsSecretsManagerStore implements ExternalSecretStore {
  public static final String DEFAULT_PREFIX = "storage-engine/";
  private static final int MAX_NAME = 512;

  private final SecretsManagerClient client;
  private final String prefix;
  private final String description;

  /** Uses {@code client} (owned: closed with the store) and names secrets {@code prefix + key}. */
  public AwsSecretsManagerStore(SecretsManagerClient client, String prefix, String description) {
    this.client = Objects.requireNonNull(client, "client");
    this.prefix = prefix == null ? DEFAULT_PREFIX : prefix;
    if (!this.prefix.isEmpty() && !this.prefix.matches("[A-Za-z0-9/_+=.@-]+")) {
      throw SeException.invalid("--secret-store.aws-sm.prefix: '%s' has characters Secrets Manager names do not allow "
          + "(letters, digits and /_+=.@- only)", this.prefix);
    }
    this.description = description;
  }

  /** A client for {@code region} (blank: the default chain) and {@code endpoint} (blank: AWS). */
  public static AwsSecretsManagerStore open(String region, String endpoint, String prefix) {
    SecretsManagerClientBuilder builder = SecretsManagerClient.builder()
        .httpClientBuilder(UrlConnectionHttpClient.builder());
    if (region != null && !region.isBlank()) {
      builder.region(Region.of(region));
    }
    if (endpoint != null && !endpoint.isBlank()) {
      builder.endpointOverride(URI.create(endpoint));
    }
    try {
      return new AwsSecretsManagerStore(builder.build(), prefix,
          "aws-sm:" + (endpoint == null || endpoint.isBlank() ? "" : endpoint + "/") + (prefix == null ? DEFAULT_PREFIX : prefix));
    } catch (SdkException e) {
      throw SeException.invalid("aws-sm secret store: cannot configure the client (%s); set --secret-store.aws-sm.region "
          + "or AWS_REGION", e.getClass().getSimpleName());
    }
  }

  @Override
  public Optional<Secret> get(String key) {
    String name = name(key);
    return call("read", key, () -> {
      try {
        GetSecretValueResponse r = client.getSecretValue(b -> b.secretId(name));
        return Optional.of(new Secret(bytes(r), r.versionId()));
      } catch (ResourceNotFoundException e) {
        return Optional.empty();
      }
    });
  }

  @Override
  public boolean create(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    return call("create", key, () -> {
      try {
        client.createSecret(b -> b.name(name).secretBinary(SdkBytes.fromByteArray(value))
            .clientRequestToken(UUID.randomUUID().toString()));
        return true;
      } catch (ResourceExistsException e) {
        return false;
      }
    });
  }

  @Override
  public void put(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    call("write", key, () -> {
      for (int attempt = 0; ; attempt++) {
        try {
          client.putSecretValue(b -> b.secretId(name).secretBinary(SdkBytes.fromByteArray(value))
              .clientRequestToken(UUID.randomUUID().toString()));
          return null;
        } catch (ResourceNotFoundException e) {
          if (create(key, value) || attempt > 3) {
            return null;
          }
          // Created by someone else in between: replace their value.
        }
      }
    });
  }

  @Override
  public void delete(String key) {
    String name = name(key);
    call("delete", key, () -> {
      try {
        client.deleteSecret(b -> b.secretId(name).forceDeleteWithoutRecovery(true));
      } catch (ResourceNotFoundException e) {
        // Already gone.
      }
      return null;
    });
  }

  @Override
  public Optional<byte[]> readReference(String name) {
    return call("read", name, () -> {
      try {
        return Optional.of(bytes(client.getSecretValue(b -> b.secretId(name))));
      } catch (ResourceNotFoundException e) {
        return Optional.empty();
      }
    });
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void close() {
    client.close();
  }

  private String name(String key) {
    String name = prefix + SecretKeys.check(key);
    if (name.length() > MAX_NAME) {
      throw SeException.invalid("invalid secret key '%s': with the prefix it exceeds Secrets Manager's %d characters",
          key, MAX_NAME);
    }
    return name;
  }

  private static byte[] bytes(GetSecretValueResponse r) {
    if (r.secretBinary() != null) {
      return r.secretBinary().asByteArray();
    }
    return r.secretString() == null ? new byte[0] : r.secretString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  private <T> T call(String action, String key, Supplier<T> body) {
    try {
      return body.get();
    } catch (SecretsManagerException e) {
      String code = e.awsErrorDetails() == null ? String.valueOf(e.statusCode()) : e.awsErrorDetails().errorCode();
      throw new SeException(ErrorCode.UNAVAILABLE, "aws-sm secret store: cannot " + action + " secret '" + key
          + "' (" + code + ")");
    } catch (SdkException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "aws-sm secret store: cannot " + action + " secret '" + key
          + "' (" + e.getClass().getSimpleName() + ")");
    }
  }
}
