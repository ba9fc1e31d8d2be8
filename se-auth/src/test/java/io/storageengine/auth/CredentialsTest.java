package io.storageengine.auth;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class CredentialsTest {
  private static final String TOKEN = "se_0123456789abcdef_secretsecret";

  @Test
  void readsBearerAndBasic() {
    assertThat(Credentials.token("Bearer " + TOKEN)).isEqualTo(TOKEN);
    assertThat(Credentials.token("bearer   " + TOKEN + " ")).isEqualTo(TOKEN);
    String basic = Base64.getEncoder().encodeToString(("etl:" + TOKEN).getBytes(UTF_8));
    assertThat(Credentials.token("Basic " + basic)).isEqualTo(TOKEN);
    String noUser = Base64.getEncoder().encodeToString((":" + TOKEN).getBytes(UTF_8));
    assertThat(Credentials.token("BASIC " + noUser)).isEqualTo(TOKEN);
  }

  @Test
  void refusesMissingAndMalformedCredentialsWithoutRepeatingThem() {
    assertRefused(null, "no credentials: send Authorization: Bearer <token>");
    assertRefused(" ", "no credentials: send Authorization: Bearer <token>");
    assertRefused("Bearer ", "empty token");
    assertRefused("Bearer  \t", "empty token");
    assertRefused("Digest " + TOKEN, "unsupported authorization scheme `Digest`: use Bearer");
    assertRefused(TOKEN, "malformed Authorization value: expected Bearer <token>");
    assertRefused("Basic !!" + TOKEN, "malformed Basic credentials: expected base64 of user:token");
    assertRefused("Basic " + Base64.getEncoder().encodeToString(TOKEN.getBytes(UTF_8)),
        "malformed Basic credentials: expected base64 of user:token");
    assertRefused("Basic " + Base64.getEncoder().encodeToString("etl:".getBytes(UTF_8)), "empty token");
  }

  private static void assertRefused(String header, String message) {
    assertThatThrownBy(() -> Credentials.token(header))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
  }
}
