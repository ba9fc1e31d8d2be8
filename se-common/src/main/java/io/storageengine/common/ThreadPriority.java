package io.storageengine.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the scheduling priority of single threads of this process, so that long work yields the
 * cores to short work under contention (and keeps all of them when nothing else runs). Linux only:
 * threads are named by their kernel thread id ({@code /proc/thread-self}) and a thread's nice
 * value is raised with {@code renice(1)} (util-linux or busybox), which on Linux applies to one
 * thread. Elsewhere, or without {@code renice}, nothing is lowered: {@link #lower} answers false
 * and logs once why.
 *
 * <p>The OS lets an unprivileged process raise a nice value but not lower it again (unless its
 * {@code RLIMIT_NICE} allows), so a lowered thread stays lowered: whoever lowers a pooled thread
 * must retire it rather than give it other work.
 */
public final class ThreadPriority {
  private static final Logger LOG = LoggerFactory.getLogger(ThreadPriority.class);
  private static final Path TASKS = Path.of("/proc/self/task");
  private static final long RENICE_TIMEOUT_SECONDS = 10;
  private static volatile boolean unavailable;

  private ThreadPriority() {}

  /** The calling thread's kernel thread id, or empty off Linux. */
  public static OptionalLong currentThreadId() {
    try {
      // The kernel resolves the link per calling thread: "<pid>/task/<tid>".
      Path self = Files.readSymbolicLink(Path.of("/proc/thread-self"));
      return OptionalLong.of(Long.parseLong(self.getFileName().toString()));
    } catch (IOException | UnsupportedOperationException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * The ids of this process's threads whose kernel name ({@code comm}, at most 15 bytes) is
   * {@code name}: native threads (DuckDB's) inherit the name of the thread that started them.
   * Empty off Linux.
   */
  public static List<Long> threadsNamed(String name) {
    List<Long> ids = new ArrayList<>();
    try (Stream<Path> tasks = Files.list(TASKS)) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          if (Files.readString(task.resolve("comm")).strip().equals(name)) {
            ids.add(Long.parseLong(task.getFileName().toString()));
          }
        } catch (NoSuchFileException | NumberFormatException e) {
          // The thread ended while listed.
        }
      }
    } catch (IOException | UnsupportedOperationException e) {
      return List.of();
    }
    return ids;
  }

  /** The nice value of thread {@code threadId} of this process, or empty when it is gone or off Linux. */
  public static OptionalLong nice(long threadId) {
    try {
      String stat = Files.readString(TASKS.resolve(Long.toString(threadId)).resolve("stat"));
      // Fields after the command (which may hold spaces) in parentheses; nice is field 19.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return OptionalLong.of(Long.parseLong(fields[16]));
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Sets the nice value of each thread of {@code threadIds} (of this process) to {@code nice}
   * (1..19: lower priority than the process's default 0). True when {@code renice} ran and
   * lowered them all; a thread that ended meanwhile makes it false, as does an unsupported
   * platform. Takes a few milliseconds (a process is started); call it off latency-critical paths.
   */
  public static boolean lower(Collection<Long> threadIds, int nice) {
    if (nice < 1 || nice > 19) {
      throw new IllegalArgumentException("nice must be 1..19, not " + nice);
    }
    if (threadIds.isEmpty() || unavailable) {
      return false;
    }
    List<String> command = new ArrayList<>(List.of("renice", "-n", Integer.toString(nice), "-p"));
    threadIds.forEach(id -> command.add(Long.toString(id)));
    try {
      Process renice = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!renice.waitFor(RENICE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        renice.destroyForcibly();
        return false;
      }
      return renice.exitValue() == 0;
    } catch (IOException e) {
      if (!unavailable) {
        unavailable = true;
        LOG.warn("cannot lower the priority of long queries' threads: renice(1) did not start ({}); "
            + "they keep the priority of the others", e.getMessage());
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
