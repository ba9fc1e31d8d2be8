package io.storageengine.cli;

import io.storageengine.common.Logging;
import io.storageengine.common.SeException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code se} command. */
@Command(
    name = "se",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Storage Engine: a streaming storage engine for Apache Iceberg.",
    subcommands = {
      DevCommand.class,
      StartCommand.class,
      CatalogCommand.class,
      TableCommand.class,
      IngestCommand.class,
      SqlCommand.class,
      ReconcileCommand.class,
      MaintainCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Logging.configureFromEnvironment();
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit code (tests call this directly). */
  public static int execute(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      String message = e instanceof SeException ? e.getMessage() : e.toString();
      cmd.getErr().println("se: " + message);
      return e instanceof SeException se && se.code().category() == io.storageengine.common.ErrorCode.Category.USER ? 2 : 1;
    });
    return cli.execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** Reads the version Maven wrote into {@code se-version.properties}. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws Exception {
      Properties p = new Properties();
      try (InputStream in = Main.class.getResourceAsStream("/se-version.properties")) {
        if (in != null) {
          p.load(in);
        }
      }
      return new String[] {"se " + p.getProperty("version", "unknown")
          + " (commit " + p.getProperty("commit", "unknown") + ", Java " + System.getProperty("java.version") + ")"};
    }
  }
}
