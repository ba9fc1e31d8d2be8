package io.storageengine.objectstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Three JVMs share one fs store directory: no lost update, every key created exactly once. */
class FsCrossProcessTest {
  private static final int WORKERS = 3;
  private static final int OPERATIONS = 40;

  @TempDir
  Path temp;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void processesShareOneDirectorySafely() throws Exception {
    Path root = temp.resolve("store");
    Path startSignal = temp.resolve("start");
    try (FsObjectStore store = new FsObjectStore(root)) {
      store.put("counter", "0".getBytes(UTF_8));
    }

    List<Process> processes = new ArrayList<>();
    List<BufferedReader> outputs = new ArrayList<>();
    try {
      for (int w = 0; w < WORKERS; w++) {
        Process process = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"),
                FsCrossProcessWorker.class.getName(),
                root.toString(), startSignal.toString(), "worker-" + w, Integer.toString(OPERATIONS))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        processes.add(process);
        outputs.add(new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8)));
      }
      for (BufferedReader output : outputs) {
        assertThat(output.readLine()).isEqualTo("ready");
      }
      Files.createFile(startSignal); // release all workers at once for maximum contention

      Map<Integer, List<String>> winners = new HashMap<>();
      for (int w = 0; w < WORKERS; w++) {
        for (String line = outputs.get(w).readLine(); line != null; line = outputs.get(w).readLine()) {
          if (line.startsWith("won ")) {
            winners.computeIfAbsent(Integer.parseInt(line.substring(4)), k -> new ArrayList<>())
                .add("worker-" + w);
          }
        }
        assertThat(processes.get(w).waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(processes.get(w).exitValue()).as("exit code of worker-%d", w).isZero();
      }

      try (FsObjectStore store = new FsObjectStore(root)) {
        assertThat(new String(store.get("counter").orElseThrow().data(), UTF_8))
            .isEqualTo(Integer.toString(WORKERS * OPERATIONS));
        assertThat(store.list("claims/")).hasSize(OPERATIONS);
        for (int i = 0; i < OPERATIONS; i++) {
          assertThat(winners.get(i)).as("winners of claims/%d", i).hasSize(1);
          assertThat(new String(store.get("claims/" + i).orElseThrow().data(), UTF_8))
              .isEqualTo(winners.get(i).get(0));
        }
      }
    } finally {
      for (Process process : processes) {
        process.destroyForcibly();
      }
      for (BufferedReader output : outputs) {
        closeQuietly(output);
      }
    }
  }

  private static void closeQuietly(BufferedReader reader) {
    try {
      reader.close();
    } catch (IOException e) {
      // the process is gone; nothing to release
    }
  }
}
