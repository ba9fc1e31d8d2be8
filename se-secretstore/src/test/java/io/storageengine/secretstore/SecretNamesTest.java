package io.storageengine.secretstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.util.HashSet;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SecretNamesTest {
  private static final String KEY_CHARS = "abcz09_.-";

  @Test
  void encodingIsReversibleAndUsesOnlyAllowedCharacters() {
    Random random = new Random(17);
    Set<String> azure = new HashSet<>();
    Set<String> gcp = new HashSet<>();
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 5000; i++) {
      String key = randomKey(random);
      if (!keys.add(key)) {
        continue;
      }
      String a = SecretNames.AZURE.encode(key);
      String g = SecretNames.GCP.encode(key);
      assertThat(a).matches("[0-9a-z-]+");
      assertThat(g).matches("[0-9a-z_-]+");
      assertThat(SecretNames.AZURE.decode(a)).isEqualTo(key);
      assertThat(SecretNames.GCP.decode(g)).isEqualTo(key);
      // Distinct keys, distinct names (Key Vault: also ignoring case).
      assertThat(azure.add(a.toLowerCase(Locale.ROOT))).isTrue();
      assertThat(gcp.add(g)).isTrue();
    }
  }

  @Test
  void examples() {
    assertThat(SecretNames.AZURE.encode("catalog/my-lake_1.x")).isEqualTo("catalog-smy--lake-u1-dx");
    assertThat(SecretNames.GCP.encode("catalog/my-lake_1.x")).isEqualTo("catalog_smy-lake__1_dx");
    assertThat(SecretNames.AZURE.encode("auth/tokens/abc")).isEqualTo("auth-stokens-sabc");
  }

  @Test
  void invalidKeysAndNamesAreRefused() {
    assertThatThrownBy(() -> SecretNames.AZURE.encode("A/b")).isInstanceOf(SeException.class)
        .hasMessageContaining("invalid secret key 'A/b'");
    assertThatThrownBy(() -> SecretNames.AZURE.decode("catalog-")).hasMessageContaining("ends in '-'");
    assertThatThrownBy(() -> SecretNames.AZURE.decode("catalog-x")).hasMessageContaining("unknown escape '-x'");
  }

  private static String randomKey(Random random) {
    StringBuilder key = new StringBuilder();
    int segments = 1 + random.nextInt(3);
    for (int s = 0; s < segments; s++) {
      if (s > 0) {
        key.append('/');
      }
      key.append((char) ('a' + random.nextInt(26)));
      for (int i = random.nextInt(6); i > 0; i--) {
        key.append(KEY_CHARS.charAt(random.nextInt(KEY_CHARS.length())));
      }
    }
    return key.toString();
  }
}
