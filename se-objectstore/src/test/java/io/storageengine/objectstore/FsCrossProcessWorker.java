package io.storageengine.objectstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child process of {@link FsCrossProcessTest}: waits for the start signal, then does
 * {@code n} compare-and-swap increments of {@code counter} and tries to create each of
 * {@code claims/0..n-1}, printing {@code won <i>} for every claim it created.
 *
 * <p>Arguments: store root, start-signal file, worker name, n.
 */
public final class FsCrossProcessWorker {
  private FsCrossProcessWorker() {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]);
    Path startSignal = Path.of(args[1]);
    String name = args[2];
    int n = Integer.parseInt(args[3]);
    try (FsObjectStore store = new FsObjectStore(root)) {
      System.out.println("ready");
      System.out.flush();
      while (!Files.exists(startSignal)) {
        Thread.sleep(5);
      }
      for (int i = 0; i < n; i++) {
        increment(store);
        if (store.putIfAbsent("claims/" + i, name.getBytes(UTF_8)).isPresent()) {
          System.out.println("won " + i);
        }
      }
    }
    System.out.println("done");
  }

  private static void increment(ObjectStore store) {
    while (true) {
      ObjectStore.Blob current = store.get("counter").orElseThrow();
      int value = Integer.parseInt(new String(current.data(), UTF_8));
      if (store.putIfMatch("counter", Integer.toString(value + 1).getBytes(UTF_8), current.etag())
          .isPresent()) {
        return;
      }
    }
  }
}
