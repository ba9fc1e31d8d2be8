package io.storageengine.auth;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Authentication settings of a process. {@link #SETTINGS} declare the flag, variable and default of
 * each field; {@link #from} reads them. The mode has no fixed default: it depends on how the process
 * was launched ({@link Launch#defaultMode()}).
 *
 * @param mode how callers authenticate ({@code --auth.mode})
 * @param allowInsecure accept {@code none} on a non-loopback listen address ({@code --auth.allow-insecure})
 * @param bootstrapToken the bootstrap admin token ({@code --auth.bootstrap-token}), empty when not set;
 *     held in memory only, never written anywhere
 * @param oidc the issuer settings, used in {@link AuthMode#OIDC} mode
 */
public record AuthConfig(AuthMode mode, boolean allowInsecure, Optional<String> bootstrapToken, Oidc oidc) {

  /** Bootstrap tokens shorter than this are refused: an operator-chosen token must not be guessable. */
  public static final int MIN_BOOTSTRAP_TOKEN_LENGTH = 32;
  /** The largest accepted {@code --auth.oidc.clock-skew}: more would keep expired tokens alive. */
  public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(5);

  private static final Pattern URL = Pattern.compile("https?://\\S+");

  public static final Setting<String> MODE = Setting.oneOf("auth.mode", "", List.of("none", "tokens", "oidc"),
      "how callers authenticate; default none for `se dev`, tokens for `se start`");
  public static final Setting<Boolean> ALLOW_INSECURE = Setting.bool("auth.allow-insecure", "false",
      "accept --auth.mode none on a non-loopback listen address");
  public static final Setting<String> BOOTSTRAP_TOKEN = Setting.string("auth.bootstrap-token", "", "TOKEN",
      "an admin token (at least " + MIN_BOOTSTRAP_TOKEN_LENGTH + " characters, e.g. `openssl rand -hex 32`) "
          + "for the first start in tokens mode; never stored");
  public static final Setting<String> CLUSTER_TOKEN = Setting.string("auth.cluster-token", "", "TOKEN",
      "the token of the broker API, sent by servers and workers (at least " + MIN_BOOTSTRAP_TOKEN_LENGTH
          + " characters; default: the bootstrap token); never stored");
  public static final Setting<String> OIDC_ISSUER = Setting.matching("auth.oidc.issuer", "", URL,
      "an http(s) URL", "URL", "the OIDC issuer (`iss` of accepted tokens)");
  public static final Setting<String> OIDC_JWKS_URI = Setting.matching("auth.oidc.jwks-uri", "", URL,
      "an http(s) URL", "URL", "the issuer's JWKS; default: jwks_uri of <issuer>/.well-known/openid-configuration");
  public static final Setting<String> OIDC_AUDIENCE = Setting.string("auth.oidc.audience", "", "AUDIENCE",
      "the audience (`aud`) accepted tokens must name");
  public static final Setting<String> OIDC_PRINCIPAL_CLAIM = Setting.string("auth.oidc.principal-claim", "sub",
      "CLAIM", "the claim naming the principal");
  public static final Setting<String> OIDC_GROUPS_CLAIM = Setting.string("auth.oidc.groups-claim", "", "CLAIM",
      "the claim listing the principal's groups; not set: no groups");
  public static final Setting<Duration> OIDC_CLOCK_SKEW = Setting.duration("auth.oidc.clock-skew", "60s",
      "tolerated clock difference for exp / nbf (at most 5m)");
  /** Every setting of authentication. */
  public static final List<Setting<?>> SETTINGS = List.of(MODE, ALLOW_INSECURE, BOOTSTRAP_TOKEN, CLUSTER_TOKEN, OIDC_ISSUER,
      OIDC_JWKS_URI, OIDC_AUDIENCE, OIDC_PRINCIPAL_CLAIM, OIDC_GROUPS_CLAIM, OIDC_CLOCK_SKEW);

  /** How the process was started: the default mode and the listen rule depend on it. */
  public enum Launch {
    /** {@code se dev}: one process on a laptop, listening on loopback. */
    DEV(AuthMode.NONE, "se dev"),
    /** {@code se start server|lb|broker|worker}: a cluster role. */
    START(AuthMode.TOKENS, "se start");

    private final AuthMode defaultMode;
    private final String command;

    Launch(AuthMode defaultMode, String command) {
      this.defaultMode = defaultMode;
      this.command = command;
    }

    /** The mode when {@code --auth.mode} is not given. */
    public AuthMode defaultMode() {
      return defaultMode;
    }

    /** The command that launches this kind of process, for messages. */
    public String command() {
      return command;
    }
  }

  /**
   * The OIDC issuer settings.
   *
   * @param issuer the issuer URL, empty when not set
   * @param jwksUri the JWKS URL, empty when it is to be discovered from the issuer
   * @param audience the audience tokens must name, empty when not set
   * @param principalClaim the claim naming the principal ({@code sub})
   * @param groupsClaim the claim listing groups, empty when tokens carry none
   * @param clockSkew tolerated clock difference for {@code exp} and {@code nbf}
   */
  public record Oidc(Optional<URI> issuer, Optional<URI> jwksUri, Optional<String> audience, String principalClaim,
      Optional<String> groupsClaim, Duration clockSkew) {
    public Oidc {
      Objects.requireNonNull(issuer, "issuer");
      Objects.requireNonNull(jwksUri, "jwksUri");
      Objects.requireNonNull(audience, "audience");
      Objects.requireNonNull(groupsClaim, "groupsClaim");
      if (principalClaim == null || principalClaim.isBlank()) {
        throw SeException.invalid("%s must not be empty", OIDC_PRINCIPAL_CLAIM);
      }
      if (clockSkew == null || clockSkew.isNegative() || clockSkew.compareTo(MAX_CLOCK_SKEW) > 0) {
        throw SeException.invalid("%s: expected 0s to 5m, got %s", OIDC_CLOCK_SKEW, clockSkew);
      }
    }

    /** The issuer settings as {@code source} gives them. */
    public static Oidc from(ConfigSource source) {
      return new Oidc(source.find(OIDC_ISSUER).map(text -> uri(OIDC_ISSUER, text)),
          source.find(OIDC_JWKS_URI).map(text -> uri(OIDC_JWKS_URI, text)),
          source.find(OIDC_AUDIENCE), source.get(OIDC_PRINCIPAL_CLAIM), source.find(OIDC_GROUPS_CLAIM),
          source.get(OIDC_CLOCK_SKEW));
    }
  }

  public AuthConfig {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(bootstrapToken, "bootstrapToken");
    Objects.requireNonNull(oidc, "oidc");
    bootstrapToken.ifPresent(AuthConfig::checkBootstrapToken);
    if (mode == AuthMode.OIDC) {
      if (oidc.issuer().isEmpty()) {
        throw SeException.invalid("--auth.mode oidc needs %s (SE_AUTH_OIDC_ISSUER)", OIDC_ISSUER);
      }
      if (oidc.audience().isEmpty()) {
        // Without an audience any token the issuer minted for any other application would be accepted.
        throw SeException.invalid("--auth.mode oidc needs %s (SE_AUTH_OIDC_AUDIENCE)", OIDC_AUDIENCE);
      }
    }
  }

  /** The config given by {@link #SETTINGS} in {@code source}, the mode defaulting as {@code launch} says. */
  public static AuthConfig from(ConfigSource source, Launch launch) {
    AuthMode mode = source.find(MODE).map(AuthMode::parse).orElse(launch.defaultMode());
    return new AuthConfig(mode, source.get(ALLOW_INSECURE), source.find(BOOTSTRAP_TOKEN), Oidc.from(source));
  }

  /**
   * The cluster token of {@code source}: {@link #CLUSTER_TOKEN}, else the bootstrap token; empty
   * when neither is set. The broker API accepts it alone, and servers and workers send it there.
   */
  public static Optional<String> clusterToken(ConfigSource source) {
    Optional<String> token = source.find(CLUSTER_TOKEN).or(() -> source.find(BOOTSTRAP_TOKEN));
    token.ifPresent(t -> checkToken(CLUSTER_TOKEN, t));
    return token;
  }

  /**
   * Refuses to serve without authentication on an address others can reach: {@code none} is accepted
   * on a loopback address ({@code localhost}, {@code 127.0.0.0/8}, {@code ::1}) or with
   * {@code --auth.allow-insecure}. Host names other than {@code localhost} are not resolved and count
   * as reachable. Applies to every launch; the launch only names the command in the error.
   */
  public static void checkListenAddress(Launch launch, AuthMode mode, boolean allowInsecure,
      InetSocketAddress listen) {
    if (mode != AuthMode.NONE || allowInsecure || isLoopback(listen)) {
      return;
    }
    throw SeException.invalid("%s: --auth.mode none on %s would let anyone on the network in; set --auth.mode "
        + "tokens or oidc (SE_AUTH_MODE), listen on a loopback address such as 127.0.0.1, or pass "
        + "--auth.allow-insecure (SE_AUTH_ALLOW_INSECURE=true) to accept it", launch.command(), display(listen));
  }

  /** {@link #checkListenAddress} with this config's mode and {@code allowInsecure}. */
  public void checkListenAddress(Launch launch, InetSocketAddress listen) {
    checkListenAddress(launch, mode, allowInsecure, listen);
  }

  /** True when {@code address} can only be reached from this machine. */
  static boolean isLoopback(InetSocketAddress address) {
    String host = address.getHostString().toLowerCase(Locale.ROOT);
    if (host.equals("localhost")) {
      return true;
    }
    // Only IP literals are parsed (no DNS look-up): anything else is treated as reachable.
    if (!host.matches("[0-9.]+") && !host.contains(":")) {
      return false;
    }
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static URI uri(Setting<String> setting, String text) {
    try {
      return new URI(text);
    } catch (URISyntaxException e) {
      throw SeException.invalid("%s: expected an http(s) URL, got '%s'", setting, text);
    }
  }

  private static String display(InetSocketAddress address) {
    String host = address.getHostString();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  private static void checkBootstrapToken(String token) {
    checkToken(BOOTSTRAP_TOKEN, token);
  }

  private static void checkToken(Setting<String> setting, String token) {
    if (token.length() < MIN_BOOTSTRAP_TOKEN_LENGTH) {
      // The message names the length only, never the value.
      throw SeException.invalid("%s: expected at least %d characters, got %d", setting,
          MIN_BOOTSTRAP_TOKEN_LENGTH, token.length());
    }
    if (!token.chars().allMatch(c -> c > ' ' && c < 127)) {
      throw SeException.invalid("%s: expected printable ASCII without spaces", setting);
    }
  }

  @Override
  public String toString() {
    // Config records end up in startup logs: never print the bootstrap token.
    return "AuthConfig[mode=" + mode.flagValue() + ", allowInsecure=" + allowInsecure + ", bootstrapToken="
        + (bootstrapToken.isPresent() ? "set" : "not set") + ", oidc=" + oidc + "]";
  }
}
