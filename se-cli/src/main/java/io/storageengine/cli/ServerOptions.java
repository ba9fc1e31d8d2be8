package io.storageengine.cli;

import io.storageengine.common.config.Setting;
import io.storageengine.server.ServerConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.IModelTransformer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.IGetter;
import picocli.CommandLine.Model.ISetter;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The configuration flags of section 12, shared by the commands that run engine roles. They are
 * generated from the settings ({@link ServerConfig#SETTINGS}), so a new setting needs no flag
 * written here: each setting's flag and aliases, its variable and its default in {@code --help}.
 * A command whose role has settings of its own implements {@link RoleSettings}.
 */
@Command(modelTransformer = ServerOptions.Flags.class)
public final class ServerOptions {
  /** A command with flags for some of {@link ServerConfig#ROLE_SETTINGS} too. */
  interface RoleSettings {
    List<Setting<?>> roleSettings();
  }

  /** The flags given, by setting key. */
  private final Map<String, String> flags = new HashMap<>();

  /** Flags over environment over defaults. */
  ServerConfig resolve() {
    return ServerConfig.resolveSettings(flags, System.getenv());
  }

  /** Adds one option per setting to the command this mixin is part of (picocli calls it once per command). */
  public static final class Flags implements IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec command) {
      ServerOptions options = command.mixins().values().stream().map(CommandSpec::userObject)
          .filter(ServerOptions.class::isInstance).map(ServerOptions.class::cast).findFirst()
          .orElseThrow(() -> new IllegalStateException(command.name() + ": no ServerOptions mixin"));
      List<Setting<?>> settings = new ArrayList<>(ServerConfig.SETTINGS);
      if (command.userObject() instanceof RoleSettings role) {
        settings.addAll(role.roleSettings());
      }
      for (Setting<?> setting : settings) {
        command.addOption(option(setting, options.flags));
      }
      // Dozens of settings: the synopsis says [OPTIONS], the option list shows each one.
      command.usageMessage().abbreviateSynopsis(true);
      return command;
    }
  }

  static OptionSpec option(Setting<?> setting, Map<String, String> flags) {
    String key = setting.key();
    String where = "env " + setting.environmentVariable()
        + (setting.defaultValue().isEmpty() ? "" : ", default " + setting.defaultValue());
    Binding binding = new Binding(key, flags);
    return OptionSpec.builder(setting.flags().toArray(String[]::new))
        .paramLabel(setting.paramLabel())
        .type(String.class)
        .description(setting.description() + " (" + where + ").")
        .getter(binding)
        .setter(binding)
        .build();
  }

  /** An option's value, kept in the flags map by setting key; null (picocli's reset) removes it. */
  private record Binding(String key, Map<String, String> flags) implements IGetter, ISetter {
    @Override
    @SuppressWarnings("unchecked")
    public <T> T get() {
      return (T) flags.get(key);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T set(T value) {
      String previous = value == null ? flags.remove(key) : flags.put(key, (String) value);
      return (T) previous;
    }
  }
}
