package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.core.exception.ClientAuthenticationException;
import com.azure.core.exception.HttpResponseException;
import com.azure.core.exception.ResourceNotFoundException;
import com.azure.core.http.HttpClient;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.identity.ClientSecretCredentialBuilder;
import com.azure.identity.DefaultAzureCredentialBuilder;
import com.azure.security.keyvault.secrets.SecretClient;
import com.azure.security.keyvault.secrets.SecretClientBuilder;
import com.azure.security.keyvault.secrets.models.KeyVaultSecret;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * Secrets in Azure Key Vault, through the Azure SDK's {@code SecretClient} over the JDK HTTP
 * client.
 *
 * <p>Key Vault names allow only {@code [0-9a-zA-Z-]} (compared case-insensitively, at most 127
 * characters), so key {@code catalog/x} is the secret {@code <prefix><encoded key>} with
 * {@link SecretNames#AZURE} ({@code catalog/my-lake} is {@code catalog-smy--lake}; default prefix
 * {@code storage-engine-}). The value is stored base64-encoded with content type
 * {@value #CONTENT_TYPE}; the version is Key Vault's version id, new on every write (also after a
 * delete and re-create).
 *
 * <ul>
 *   <li>{@link #put}: Set Secret, which adds a version.</li>
 *   <li>{@link #delete}: Delete Secret, waiting until the deletion has finished, then Purge
 *       Deleted Secret, so that the name can be created again at once (also when an earlier
 *       delete's purge failed). The vault must allow purging (no purge protection) and the
 *       identity needs the purge permission.</li>
 *   <li>{@link #create}: Key Vault has no conditional write. Create reads the secret and, when it
 *       is absent, sets it, holding a lock for that secret in this process. It is therefore
 *       atomic among the threads of one process, <b>not</b> among processes: two processes
 *       creating the same key at the same moment may both return true, and the later value stays.
 *       A key held by a deleted but unpurged secret is UNAVAILABLE naming it.</li>
 * </ul>
 *
 * <p>Credentials: a fixed access token if given, else a service principal (tenant, client id,
 * client secret), else the Azure SDK's default chain (environment, workload identity, managed
 * identity with the optional client id, Azure CLI). Failures are UNAVAILABLE naming the key and the
 * HTTP status; the service's messages are not passed on and no token or value appears in them.
 */
public final class AzureKeyVaultStore implements ExternalSecretStore {
  public static final String DEFAULT_PREFIX = "storage-engine-";
  static final String CONTENT_TYPE = "application/vnd.storage-engine.secret+base64";
  private static final int MAX_NAME = 127;
  private static final Object[] LOCKS = new Object[64];

  static {
    for (int i = 0; i < LOCKS.length; i++) {
      LOCKS[i] = new Object();
    }
  }

  private final SecretClient client;
  private final String prefix;
  private final String description;

  /** Uses {@code client} and names secrets {@code prefix + encoded key}. */
  public AzureKeyVaultStore(SecretClient client, String prefix) {
    this.client = Objects.requireNonNull(client, "client");
    this.prefix = prefix == null ? DEFAULT_PREFIX : prefix;
    if (!this.prefix.isEmpty() && !this.prefix.matches("[0-9a-zA-Z-]+")) {
      throw SeException.invalid("--secret-store.azure-kv.prefix: '%s' has characters Key Vault names do not allow "
          + "(letters, digits and - only)", this.prefix);
    }
    this.description = "azure-kv:" + client.getVaultUrl() + "/" + this.prefix;
  }

  /** The settings of an {@code azure-kv} store ({@code --secret-store.azure-kv.*}); blank means unset. */
  public record Options(String vaultUrl, String tenantId, String clientId, String clientSecret, String accessToken,
      String prefix) {
    @Override
    public String toString() {
      return "AzureKeyVaultStore.Options[vaultUrl=" + vaultUrl + ", prefix=" + prefix + "]";
    }
  }

  /** A client for {@code options}, over the JDK HTTP client. */
  public static AzureKeyVaultStore open(Options options) {
    return open(options, java.net.http.HttpClient.newBuilder(), true, null);
  }

  /**
   * As {@link #open(Options)} over {@code http} (tests: a client trusting their certificate).
   * {@code verifyChallengeResource} false skips the SDK's check that the vault's host lies under
   * the challenge's resource domain ({@code *.vault.azure.net}), which a server on a loopback
   * address cannot satisfy. {@code authorityHost} (null: the SDK's, {@code AZURE_AUTHORITY_HOST}
   * or Entra ID's public cloud) is where a service principal signs in, without instance discovery.
   */
  static AzureKeyVaultStore open(Options options, java.net.http.HttpClient.Builder http,
      boolean verifyChallengeResource, String authorityHost) {
    String url = blankToNull(options.vaultUrl());
    if (url == null) {
      throw SeException.invalid("azure-kv secret store: no vault URL; set --secret-store.azure-kv.vault-url or "
          + "SE_SECRET_STORE_AZURE_KV_VAULT_URL (e.g. https://my-vault.vault.azure.net)");
    }
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("--secret-store.azure-kv.vault-url: expected an https URL, got '%s'", url);
    }
    if (!"https".equals(uri.getScheme()) || uri.getHost() == null) {
      throw SeException.invalid("--secret-store.azure-kv.vault-url: expected an https URL, got '%s'", url);
    }
    HttpClient httpClient = new JdkHttpClientBuilder(http).connectionTimeout(Duration.ofSeconds(10))
        .responseTimeout(Duration.ofSeconds(30)).build();
    SecretClientBuilder builder = new SecretClientBuilder()
        .vaultUrl(url)
        .credential(credential(options, httpClient, authorityHost))
        .httpClient(httpClient)
        .retryOptions(new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(3)
            .setBaseDelay(Duration.ofMillis(200)).setMaxDelay(Duration.ofSeconds(5))));
    if (!verifyChallengeResource) {
      builder.disableChallengeResourceVerification();
    }
    SecretClient client = builder.buildClient();
    return new AzureKeyVaultStore(client, options.prefix() == null ? null : options.prefix().strip());
  }

  private static TokenCredential credential(Options o, HttpClient http, String authorityHost) {
    String token = blankToNull(o.accessToken());
    if (token != null) {
      return request -> Mono.just(new AccessToken(token, OffsetDateTime.now().plusHours(1)));
    }
    String tenant = blankToNull(o.tenantId());
    String clientId = blankToNull(o.clientId());
    String secret = blankToNull(o.clientSecret());
    if (secret != null) {
      if (tenant == null || clientId == null) {
        throw SeException.invalid("azure-kv secret store: a client secret needs --secret-store.azure-kv.tenant-id and "
            + "--secret-store.azure-kv.client-id");
      }
      ClientSecretCredentialBuilder principal = new ClientSecretCredentialBuilder().tenantId(tenant).clientId(clientId)
          .clientSecret(secret).httpClient(http);
      if (authorityHost != null) {
        principal.authorityHost(authorityHost).disableInstanceDiscovery();
      }
      return principal.build();
    }
    DefaultAzureCredentialBuilder chain = new DefaultAzureCredentialBuilder().httpClient(http);
    if (tenant != null) {
      chain.tenantId(tenant);
    }
    if (clientId != null) {
      chain.managedIdentityClientId(clientId);
    }
    return chain.build();
  }

  @Override
  public Optional<Secret> get(String key) {
    String name = name(key);
    return call("read", key, () -> read(name).map(s -> new Secret(value(s, key), s.getProperties().getVersion())));
  }

  @Override
  public boolean create(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    synchronized (LOCKS[Math.floorMod((client.getVaultUrl() + "/" + name).hashCode(), LOCKS.length)]) {
      return call("create", key, () -> {
        if (read(name).isPresent()) {
          return false;
        }
        write(name, value);
        return true;
      });
    }
  }

  @Override
  public void put(String key, byte[] value) {
    String name = name(key);
    Objects.requireNonNull(value, "value");
    call("write", key, () -> {
      write(name, value);
      return null;
    });
  }

  @Override
  public void delete(String key) {
    String name = name(key);
    call("delete", key, () -> {
      try {
        client.beginDeleteSecret(name).setPollInterval(Duration.ofMillis(250)).waitForCompletion(Duration.ofMinutes(2));
      } catch (ResourceNotFoundException e) {
        // Absent, or deleted earlier without the purge (which failed): purge below all the same.
      }
      try {
        client.purgeDeletedSecret(name);
      } catch (ResourceNotFoundException e) {
        // Nothing held the name.
      }
      return null;
    });
  }

  /** {@code name} is a Key Vault secret name, optionally {@code <name>/<version>}; the text value as UTF-8. */
  @Override
  public Optional<byte[]> readReference(String name) {
    int slash = name.indexOf('/');
    String secret = slash < 0 ? name : name.substring(0, slash);
    String version = slash < 0 ? null : name.substring(slash + 1);
    return call("read", name, () -> {
      try {
        KeyVaultSecret s = version == null ? client.getSecret(secret) : client.getSecret(secret, version);
        return Optional.of(s.getValue() == null ? new byte[0] : s.getValue().getBytes(UTF_8));
      } catch (ResourceNotFoundException e) {
        return Optional.empty();
      }
    });
  }

  @Override
  public String describe() {
    return description;
  }

  private Optional<KeyVaultSecret> read(String name) {
    try {
      return Optional.of(client.getSecret(name));
    } catch (ResourceNotFoundException e) {
      return Optional.empty();
    }
  }

  private void write(String name, byte[] value) {
    KeyVaultSecret secret = new KeyVaultSecret(name, Base64.getEncoder().encodeToString(value));
    secret.getProperties().setContentType(CONTENT_TYPE);
    client.setSecret(secret);
  }

  private static byte[] value(KeyVaultSecret s, String key) {
    String text = s.getValue() == null ? "" : s.getValue();
    if (!CONTENT_TYPE.equals(s.getProperties().getContentType())) {
      // Written by someone else: the text as it is.
      return text.getBytes(UTF_8);
    }
    try {
      return Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw new SeException(ErrorCode.INTERNAL, "azure-kv secret store: secret '" + key + "' is unreadable");
    }
  }

  private String name(String key) {
    String name = prefix + SecretNames.AZURE.encode(key);
    if (name.length() > MAX_NAME) {
      throw SeException.invalid("invalid secret key '%s': encoded with the prefix it exceeds Key Vault's %d characters",
          key, MAX_NAME);
    }
    return name;
  }

  private <T> T call(String action, String key, Supplier<T> body) {
    try {
      return body.get();
    } catch (ClientAuthenticationException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "azure-kv secret store: cannot " + action + " secret '" + key
          + "' (" + status(e) + ": not authenticated, check the credentials)");
    } catch (HttpResponseException e) {
      int status = e.getResponse() == null ? 0 : e.getResponse().getStatusCode();
      String hint = switch (status) {
        case 401 -> ": not authenticated, check the credentials";
        case 403 -> ": permission denied, check the identity's access policy or role";
        case 409 -> ": the name is held by a deleted secret; purge or recover it";
        default -> "";
      };
      throw new SeException(ErrorCode.UNAVAILABLE, "azure-kv secret store: cannot " + action + " secret '" + key
          + "' (HTTP " + status + hint + ")");
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "azure-kv secret store: cannot " + action + " secret '" + key
          + "' (" + e.getClass().getSimpleName() + ")");
    }
  }

  private static String status(HttpResponseException e) {
    return e.getResponse() == null ? "no response" : "HTTP " + e.getResponse().getStatusCode();
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.strip();
  }
}
