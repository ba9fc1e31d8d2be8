package io.storageengine.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The contract against a directory, plus what is specific to files. */
class FsObjectStoreTest extends ObjectStoreContractTest {
  @TempDir
  Path temp;

  private Path root;

  @Override
  protected ObjectStore newStore() {
    root = temp.resolve("store");
    return new FsObjectStore(root);
  }

  @AfterEach
  void noTempFilesLeftBehind() throws IOException {
    try (Stream<Path> temps = Files.list(root.resolve(FsObjectStore.TEMP_DIR))) {
      assertThat(temps).isEmpty();
    }
  }

  @Test
  void keysAreFilesUnderTheRootAndEtagsTheirMd5() throws IOException {
    String etag = store.put("a/b/c.json", bytes("{}"));

    assertThat(Files.readString(root.resolve("a/b/c.json"))).isEqualTo("{}");
    assertThat(etag).isEqualTo(Md5.hex(bytes("{}"))).isEqualTo("99914b932bd37a50b983c5e7c90ae93b");
  }

  @Test
  void tempAndLockAreasAreReservedAndNeverListed() {
    store.put("k", bytes("v"));
    store.putIfMatch("k", bytes("w"), store.head("k").orElseThrow().etag()).orElseThrow();

    assertThat(keys("")).containsExactly("k");
    assertThat(keys(".")).isEmpty();
    assertThat(keys(".locks/")).isEmpty();
    assertThatThrownBy(() -> store.put(".tmp/x", bytes("v")))
        .isInstanceOf(SeException.class)
        .hasMessage("invalid object key '.tmp/x': the fs object store reserves '.tmp/'");
    assertThatThrownBy(() -> store.get(".locks"))
        .isInstanceOf(SeException.class)
        .hasMessage("invalid object key '.locks': the fs object store reserves '.locks/'");
  }

  @Test
  void aKeyCannotAlsoBeTheParentOfOtherKeys() {
    store.put("a", bytes("blob"));
    store.put("d/e", bytes("blob"));

    assertThatThrownBy(() -> store.put("a/b", bytes("v")))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage("object key 'a/b' lies below an existing key:"
            + " the fs object store cannot hold both");
    assertThatThrownBy(() -> store.putIfAbsent("d", bytes("v")))
        .isInstanceOf(SeException.class)
        .hasMessage("object key 'd' is the parent of other keys: the fs object store cannot hold both");
    assertThat(store.get("a/b")).isEmpty();
    assertThat(store.get("d")).isEmpty();
    assertThat(store.head("d")).isEmpty();
    assertThat(store.getRange("d", 0, 1)).isEmpty();
    assertThat(store.putIfMatch("d", bytes("v"), "etag")).isEmpty();
    store.delete("d");
    assertThat(text(store.get("d/e"))).isEqualTo("blob");
  }

  @Test
  void ioFailuresAreUnavailableAndNameTheKeyNotTheRoot() throws IOException {
    // Take the temp area away: every write needs it.
    deleteTree(root.resolve(FsObjectStore.TEMP_DIR));

    assertThatThrownBy(() -> store.put("k", bytes("v")))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .hasMessage("fs object store: cannot write key 'k' (NoSuchFileException)")
        .hasMessageNotContaining(root.toString());
    Files.createDirectories(root.resolve(FsObjectStore.TEMP_DIR));
  }

  @Test
  void openingAnUnusableRootIsUnavailable() throws IOException {
    Path file = Files.writeString(temp.resolve("plain-file"), "x");

    assertThatThrownBy(() -> new FsObjectStore(file.resolve("store")))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .hasMessageStartingWith("fs object store: cannot open directory '" + file.resolve("store"));
  }

  @Test
  void staleTempFilesOfCrashedWritersAreRemovedAtOpen() throws IOException {
    Path stale = Files.writeString(root.resolve(".tmp/crashed.tmp"), "partial");
    Files.setLastModifiedTime(stale, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
    Path fresh = Files.writeString(root.resolve(".tmp/in-flight.tmp"), "partial");

    new FsObjectStore(root).close();

    assertThat(stale).doesNotExist();
    assertThat(fresh).exists();
    Files.delete(fresh);
  }

  @Test
  void etagsFollowContentReplacedByAnotherStoreInstance() {
    try (FsObjectStore other = new FsObjectStore(root)) {
      store.put("k", bytes("one"));
      assertThat(store.head("k").orElseThrow().etag()).isEqualTo(Md5.hex(bytes("one")));

      other.put("k", bytes("two"));

      assertThat(store.head("k").orElseThrow().etag()).isEqualTo(Md5.hex(bytes("two")));
      assertThat(store.list("")).extracting(ObjectStore.ObjectInfo::etag)
          .containsExactly(Md5.hex(bytes("two")));
    }
  }

  @Test
  void twoStoreInstancesOnOneDirectoryExcludeEachOther() throws Exception {
    try (FsObjectStore other = new FsObjectStore(root)) {
      store.put("counter", bytes("0"));
      runConcurrently(6, i -> {
        ObjectStore mine = i % 2 == 0 ? store : other;
        for (int done = 0; done < 20; ) {
          ObjectStore.Blob current = mine.get("counter").orElseThrow();
          int value = Integer.parseInt(new String(current.data()));
          if (mine.putIfMatch("counter", bytes(Integer.toString(value + 1)), current.etag())
              .isPresent()) {
            done++;
          }
        }
        return null;
      });
      assertThat(text(store.get("counter"))).isEqualTo("120");
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
