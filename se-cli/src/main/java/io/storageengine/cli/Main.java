package io.storageengine.cli;

import io.storageengine.common.SeException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
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
      AccessCommands.Principal.class,
      AccessCommands.Grant.class,
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

  /** The exit code of a command that failed with {@code e}: 2 for the user's mistake, else 1. */
  static int exitCode(Throwable e) {
    return e instanceof SeException se && se.code().category() == io.storageengine.common.ErrorCode.Category.USER ? 2 : 1;
  }

  /** Runs the command line and returns its exit code (tests call this directly). */
  public static int execute(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      String message = e instanceof SeException ? e.getMessage()
          : TlsOption.tlsFailure(e).map(ssl -> TlsOption.handshakeFailure("the server", ssl)).orElse(e.toString());
      cmd.getErr().println("se: " + message);
      return exitCode(e);
    });
    CommandLine.IParameterExceptionHandler defaultHandler = cli.getParameterExceptionHandler();
    cli.setParameterExceptionHandler((e, arguments) -> {
      // picocli checks required options before it reports unknown ones, so `--tabel x` would
      // say "Missing required option '--table'"; name the mistyped option and suggest instead.
      if (e instanceof CommandLine.MissingParameterException) {
        List<String> unknown = unknownOptions(e.getCommandLine(), arguments);
        if (!unknown.isEmpty()) {
          e = new CommandLine.UnmatchedArgumentException(e.getCommandLine(), unknown);
        }
      }
      return defaultHandler.handleParseException(e, arguments);
    });
    return cli.execute(args);
  }

  /** Arguments that look like options but no command on the path to {@code command} knows. */
  private static List<String> unknownOptions(CommandLine command, String[] args) {
    List<String> unknown = new ArrayList<>();
    for (String arg : args) {
      if (arg.equals("--")) {
        break;
      }
      if (!arg.startsWith("-") || arg.equals("-") || arg.matches("-\\d.*")) {
        continue;
      }
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      boolean known = false;
      for (CommandLine c = command; c != null && !known; c = c.getParent()) {
        known = c.getCommandSpec().optionsMap().containsKey(name);
      }
      if (!known) {
        unknown.add(arg);
      }
    }
    return unknown;
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /**
   * Reads the version and git commit Maven wrote into {@code se-version.properties} when it built
   * this jar (the {@code se} launcher passes the commit; a plain {@code mvn} build says
   * {@code unknown}).
   */
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
