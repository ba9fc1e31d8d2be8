package io.storageengine.common;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM that runs a main class of the {@code se-spark} module (Spark
 * local and Iceberg's Spark runtime, whose Jackson, Netty, Arrow, Hadoop and Scala versions differ
 * from the engine's, so they never share a JVM with it). The child runs on the module's
 * {@code <target>/classes} and the jars its build lists in {@code <target>/spark-classpath.txt}
 * ({@code mvn -q -B -pl se-spark process-classes} writes it), with the JVM options Spark's own
 * launcher passes to a Java 17 JVM.
 */
public final class SparkModuleCommand {
  /** What Spark's launcher passes to a Java 17 JVM (its {@code JavaModuleOptions}). */
  public static final List<String> JVM_OPTIONS = List.of(
      "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true");

  private SparkModuleCommand() {}

  /**
   * {@code java} of this JVM's installation, {@link #JVM_OPTIONS}, then {@code jvmArgs}, the
   * module's class path, {@code mainClass} and {@code args}.
   *
   * @param moduleTarget the se-spark module's {@code target} directory
   * @throws SeException NOT_FOUND naming the missing file and the build command when the module
   *     is not built (no class path file, or no compiled {@code mainClass})
   */
  public static List<String> of(Path moduleTarget, List<String> jvmArgs, String mainClass, List<String> args)
      throws IOException {
    Path classpathFile = moduleTarget.resolve("spark-classpath.txt");
    Path classes = moduleTarget.resolve("classes");
    Path mainFile = classes.resolve(mainClass.replace('.', '/') + ".class");
    for (Path required : List.of(classpathFile, mainFile)) {
      if (!Files.isRegularFile(required)) {
        throw SeException.notFound("the se-spark module is not built: no %s (build it: mvn -q -B -pl se-spark process-classes)",
            required.toAbsolutePath());
      }
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(JVM_OPTIONS);
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(classes.toAbsolutePath() + File.pathSeparator + Files.readString(classpathFile).strip());
    command.add(mainClass);
    command.addAll(args);
    return command;
  }
}
