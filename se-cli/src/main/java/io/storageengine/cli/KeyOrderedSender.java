package io.storageengine.cli;

import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Sends batches of differing schemas to one table, one ingestion stream per schema, without
 * reordering the operations of any key: before a batch goes out on one stream, every batch still
 * unacknowledged on another stream that holds one of its keys is awaited, so the server has the
 * earlier operation durable (it arrived first) before the later one is sent. Batches on one
 * stream keep their order. At most {@code maxStreams} streams are open; the least recently used
 * is finished to make room.
 *
 * <p>Failures surface as the server's {@code FlightRuntimeException}, from {@link #send} or
 * {@link #finish}. Not thread-safe.
 */
final class KeyOrderedSender implements AutoCloseable {
  private record Pending(CompletableFuture<Long> ack, Set<Object> keys) {}

  private static final class Lane {
    final IngestStream stream;
    final Deque<Pending> pending = new ArrayDeque<>();

    Lane(IngestStream stream) {
      this.stream = stream;
    }

    /** Forgets acknowledged batches; rethrows a failed one. */
    void prune() {
      for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
        Pending p = it.next();
        if (p.ack.isDone()) {
          await(p.ack);
          it.remove();
        }
      }
    }
  }

  private final IngestClient client;
  private final String catalog;
  private final List<String> namespace;
  private final String table;
  private final WalOperation operation;
  private final int maxStreams;
  private final LinkedHashMap<Schema, Lane> lanes = new LinkedHashMap<>(16, 0.75f, true);
  private int streamsOpened;

  KeyOrderedSender(IngestClient client, String catalog, List<String> namespace, String table,
      WalOperation operation, int maxStreams) {
    this.client = client;
    this.catalog = catalog;
    this.namespace = namespace;
    this.table = table;
    this.operation = operation;
    this.maxStreams = maxStreams;
  }

  /** Sends {@code batch} (copied), which holds the rows of {@code keys}; returns its ack. */
  CompletableFuture<Long> send(VectorSchemaRoot batch, Set<Object> keys) throws InterruptedException {
    Schema schema = batch.getSchema();
    for (Map.Entry<Schema, Lane> other : lanes.entrySet()) {
      if (other.getKey().equals(schema)) {
        continue;
      }
      Lane lane = other.getValue();
      lane.prune();
      if (!keys.isEmpty()) {
        for (Pending p : lane.pending) {
          if (!Collections.disjoint(p.keys, keys)) {
            await(p.ack);
          }
        }
      }
    }
    Lane lane = lanes.get(schema);
    if (lane == null) {
      if (lanes.size() >= maxStreams) {
        Map.Entry<Schema, Lane> eldest = lanes.entrySet().iterator().next();
        lanes.remove(eldest.getKey());
        try (IngestStream stream = eldest.getValue().stream) {
          stream.finish();
        }
      }
      lane = new Lane(client.open(catalog, namespace, table, operation, schema));
      lanes.put(schema, lane);
      streamsOpened++;
    }
    lane.prune();
    CompletableFuture<Long> ack = lane.stream.send(batch);
    lane.pending.add(new Pending(ack, keys));
    return ack;
  }

  /** How many streams were opened so far (one per distinct schema, more if some were evicted). */
  int streamsOpened() {
    return streamsOpened;
  }

  /** Finishes every stream: returns once all batches are acknowledged; throws the first failure. */
  void finish() {
    for (Lane lane : lanes.values()) {
      lane.stream.finish();
    }
  }

  @Override
  public void close() {
    for (Lane lane : lanes.values()) {
      lane.stream.close();
    }
    lanes.clear();
  }

  private static void await(CompletableFuture<Long> ack) {
    try {
      ack.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }
}
