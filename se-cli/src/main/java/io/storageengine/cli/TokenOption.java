package io.storageengine.cli;

import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --token} / {@code SE_TOKEN}: the credential a client command sends as
 * {@code Authorization: Bearer <token>} (HTTP) and {@code authorization} metadata (Flight). Never
 * shown in {@code --help}.
 */
final class TokenOption {
  @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:SE_TOKEN}",
      showDefaultValue = CommandLine.Help.Visibility.NEVER,
      description = "API token or OIDC access token (default: the SE_TOKEN variable; prefer it, flags show in ps).")
  String token;

  /** The token, empty when neither the flag nor the variable gives one (servers in --auth.mode none). */
  Optional<String> value() {
    return token == null || token.isBlank() ? Optional.empty() : Optional.of(token.strip());
  }
}
