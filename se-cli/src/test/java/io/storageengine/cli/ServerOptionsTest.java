package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.common.config.Setting;
import io.storageengine.query.QueryConfig;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The flags of the commands that run roles come from the settings, and resolve to them. */
class ServerOptionsTest {
  @Test
  void everyRoleCommandHasAFlagPerSettingAndTheRoleOnesOnlyWhereTheyBelong() {
    List<String> common = ServerConfig.SETTINGS.stream().flatMap(s -> s.flags().stream()).toList();
    for (Object command : List.of(new DevCommand(), new StartCommand.Server(), new StartCommand.Broker(),
        new StartCommand.Worker(), new StartCommand.Lb(), new ReconcileCommand(), new MaintainCommand())) {
      CommandLine cli = new CommandLine(command);
      assertThat(cli.getCommandSpec().optionsMap().keySet()).as(cli.getCommandName()).containsAll(common);
    }
    assertThat(new CommandLine(new StartCommand.Lb()).getCommandSpec().optionsMap())
        .containsKeys("--probe-interval", "--lb.probe-interval").doesNotContainKey("--concurrency");
    assertThat(new CommandLine(new StartCommand.Worker()).getCommandSpec().optionsMap())
        .containsKeys("--concurrency", "--worker.concurrency").doesNotContainKey("--probe-interval");
    assertThat(new CommandLine(new DevCommand()).getCommandSpec().optionsMap())
        .doesNotContainKeys("--concurrency", "--probe-interval");
  }

  @Test
  void flagsResolveToTheModuleConfigs() {
    StartCommand.Lb lb = new StartCommand.Lb();
    new CommandLine(lb).parseArgs("--probe-interval", "2s", "--query.memory-limit=2GB",
        "--ingest.flush-threads", "3", "--server.address", "127.0.0.1:0");
    ServerConfig config = lb.options.resolve();
    assertThat(config.duration(ConfigKey.LB_PROBE_INTERVAL)).isEqualTo(Duration.ofSeconds(2));
    assertThat(config.query().duckdbMemoryLimit()).isEqualTo("2GB");
    assertThat(config.ingest().flushThreads()).isEqualTo(3);
    assertThat(config.serverAddress().getPort()).isZero();

    StartCommand.Worker worker = new StartCommand.Worker();
    new CommandLine(worker).parseArgs("--worker.concurrency", "5");
    assertThat(worker.options.resolve().integer(ConfigKey.WORKER_CONCURRENCY)).isEqualTo(5);
  }

  @Test
  void helpShowsEachFlagsVariableAndDefault() {
    String help = new CommandLine(new StartCommand.Lb()).getUsageMessage(CommandLine.Help.Ansi.OFF);
    for (Setting<?> setting : List.<Setting<?>>of(QueryConfig.MEMORY_LIMIT, ConfigKey.LB_PROBE_INTERVAL.setting())) {
      assertThat(help.replaceAll("\\s+", " "))
          .contains("env " + setting.environmentVariable() + ", default " + setting.defaultValue() + ")");
    }
  }
}
