package io.storageengine.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AuthConfigTest {
  private static final String BOOTSTRAP = "0123456789abcdef0123456789abcdef";

  @Test
  void pinsEveryKeyFlagVariableAndDefault() {
    Map<String, String> defaults = new LinkedHashMap<>();
    for (Setting<?> setting : AuthConfig.SETTINGS) {
      defaults.put(setting.key(), setting.defaultValue());
      assertThat(setting.flag()).isEqualTo("--" + setting.key());
    }
    assertThat(defaults).containsExactly(
        Map.entry("auth.mode", ""),
        Map.entry("auth.allow-insecure", "false"),
        Map.entry("auth.bootstrap-token", ""),
        Map.entry("auth.cluster-token", ""),
        Map.entry("auth.oidc.issuer", ""),
        Map.entry("auth.oidc.jwks-uri", ""),
        Map.entry("auth.oidc.audience", ""),
        Map.entry("auth.oidc.principal-claim", "sub"),
        Map.entry("auth.oidc.groups-claim", ""),
        Map.entry("auth.oidc.clock-skew", "60s"));
    assertThat(AuthConfig.MODE.environmentVariable()).isEqualTo("SE_AUTH_MODE");
    assertThat(AuthConfig.BOOTSTRAP_TOKEN.environmentVariable()).isEqualTo("SE_AUTH_BOOTSTRAP_TOKEN");
    assertThat(AuthConfig.OIDC_JWKS_URI.environmentVariable()).isEqualTo("SE_AUTH_OIDC_JWKS_URI");
  }

  @Test
  void defaultModeDependsOnTheLaunch() {
    assertThat(AuthConfig.Launch.DEV.defaultMode()).isEqualTo(AuthMode.NONE);
    assertThat(AuthConfig.Launch.START.defaultMode()).isEqualTo(AuthMode.TOKENS);

    AuthConfig dev = AuthConfig.from(ConfigSource.defaults(), AuthConfig.Launch.DEV);
    assertThat(dev.mode()).isEqualTo(AuthMode.NONE);
    assertThat(dev.allowInsecure()).isFalse();
    assertThat(dev.bootstrapToken()).isEmpty();
    assertThat(dev.oidc().principalClaim()).isEqualTo("sub");
    assertThat(dev.oidc().groupsClaim()).isEmpty();
    assertThat(dev.oidc().clockSkew()).isEqualTo(Duration.ofSeconds(60));
    assertThat(AuthConfig.from(ConfigSource.defaults(), AuthConfig.Launch.START).mode()).isEqualTo(AuthMode.TOKENS);
  }

  @Test
  void readsEverySettingFromFlagsAndVariables() {
    ConfigSource source = ConfigSource.of(Map.of(
        "auth.mode", "oidc",
        "auth.oidc.issuer", "https://idp.example/realms/a",
        "auth.oidc.audience", "storage-engine",
        "auth.oidc.principal-claim", "preferred_username",
        "auth.oidc.clock-skew", "30s"), Map.of(
        "SE_AUTH_ALLOW_INSECURE", "true",
        "SE_AUTH_BOOTSTRAP_TOKEN", BOOTSTRAP,
        "SE_AUTH_OIDC_JWKS_URI", "https://idp.example/certs",
        "SE_AUTH_OIDC_GROUPS_CLAIM", "groups"));
    AuthConfig config = AuthConfig.from(source, AuthConfig.Launch.DEV);
    assertThat(config.mode()).isEqualTo(AuthMode.OIDC);
    assertThat(config.allowInsecure()).isTrue();
    assertThat(config.bootstrapToken()).contains(BOOTSTRAP);
    assertThat(config.oidc()).isEqualTo(new AuthConfig.Oidc(Optional.of(URI.create("https://idp.example/realms/a")),
        Optional.of(URI.create("https://idp.example/certs")), Optional.of("storage-engine"), "preferred_username",
        Optional.of("groups"), Duration.ofSeconds(30)));
  }

  @Test
  void refusesBadValuesNamingTheFlag() {
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.mode", "open"), Map.of()),
        AuthConfig.Launch.START)).hasMessage("--auth.mode: expected none, tokens or oidc, got 'open'");
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.mode", "oidc"), Map.of()),
        AuthConfig.Launch.START)).hasMessage("--auth.mode oidc needs --auth.oidc.issuer (SE_AUTH_OIDC_ISSUER)");
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.mode", "oidc",
        "auth.oidc.issuer", "https://idp.example"), Map.of()), AuthConfig.Launch.START))
        .hasMessage("--auth.mode oidc needs --auth.oidc.audience (SE_AUTH_OIDC_AUDIENCE)");
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.oidc.issuer", "idp.example"), Map.of()),
        AuthConfig.Launch.START)).hasMessage("--auth.oidc.issuer: expected an http(s) URL, got 'idp.example'");
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.oidc.jwks-uri", "https://idp/^certs"),
        Map.of()), AuthConfig.Launch.START))
        .hasMessage("--auth.oidc.jwks-uri: expected an http(s) URL, got 'https://idp/^certs'");
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.oidc.clock-skew", "1h"), Map.of()),
        AuthConfig.Launch.START)).hasMessage("--auth.oidc.clock-skew: expected 0s to 5m, got PT1H");
  }

  @Test
  void refusesAShortBootstrapTokenWithoutRepeatingIt() {
    assertThatThrownBy(() -> AuthConfig.from(ConfigSource.of(Map.of("auth.bootstrap-token", "hunter2"), Map.of()),
        AuthConfig.Launch.START))
        .isInstanceOf(SeException.class)
        .hasMessage("--auth.bootstrap-token: expected at least 32 characters, got 7")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void neverPrintsTheBootstrapToken() {
    AuthConfig config = AuthConfig.from(ConfigSource.of(Map.of("auth.bootstrap-token", BOOTSTRAP), Map.of()),
        AuthConfig.Launch.START);
    assertThat(config.toString()).doesNotContain(BOOTSTRAP).contains("bootstrapToken=set");
  }

  @Test
  void modeNoneOnlyOnLoopbackUnlessInsecureIsAllowed() {
    for (String host : new String[] {"127.0.0.1", "127.10.0.3", "localhost", "LOCALHOST", "::1"}) {
      AuthConfig.checkListenAddress(AuthConfig.Launch.DEV, AuthMode.NONE, false,
          InetSocketAddress.createUnresolved(host, 7777));
    }
    for (String host : new String[] {"0.0.0.0", "::", "10.0.0.5", "engine.example"}) {
      InetSocketAddress address = InetSocketAddress.createUnresolved(host, 7777);
      AuthConfig.checkListenAddress(AuthConfig.Launch.START, AuthMode.NONE, true, address);
      AuthConfig.checkListenAddress(AuthConfig.Launch.START, AuthMode.TOKENS, false, address);
      AuthConfig.checkListenAddress(AuthConfig.Launch.START, AuthMode.OIDC, false, address);
      assertThatThrownBy(() -> AuthConfig.checkListenAddress(AuthConfig.Launch.DEV, AuthMode.NONE, false, address))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("se dev: --auth.mode none on ")
          .hasMessageContaining("--auth.allow-insecure").hasMessageContaining("SE_AUTH_MODE");
    }
    assertThatThrownBy(() -> AuthConfig.checkListenAddress(AuthConfig.Launch.START, AuthMode.NONE, false,
        InetSocketAddress.createUnresolved("0.0.0.0", 7777)))
        .hasMessage("se start: --auth.mode none on 0.0.0.0:7777 would let anyone on the network in; set "
            + "--auth.mode tokens or oidc (SE_AUTH_MODE), listen on a loopback address such as 127.0.0.1, or pass "
            + "--auth.allow-insecure (SE_AUTH_ALLOW_INSECURE=true) to accept it");
  }
}
