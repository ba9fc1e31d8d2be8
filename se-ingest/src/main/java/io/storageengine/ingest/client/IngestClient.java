package io.storageengine.ingest.client;

import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.ProducerState;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.LocationSchemes;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A small Java client of the native ingestion protocol (ARCHITECTURE.md 6.1) over Arrow's
 * {@link FlightClient}, for the CLI, the load generator and tests.
 *
 * <pre>{@code
 * try (BufferAllocator allocator = new RootAllocator();
 *      IngestClient client = IngestClient.connect(Location.forGrpcInsecure("127.0.0.1", 7777), allocator);
 *      IngestStream stream = client.open("warehouse", List.of("analytics"), "events",
 *          WalOperation.UPSERT, schema)) {
 *   CompletableFuture<Long> ack = stream.send(root); // completes when the batch is durable
 *   stream.finish();                                  // waits for every ack
 * }
 * }</pre>
 *
 * <p>Over TLS: {@code Location.forGrpcTls(host, port)}, and {@link #connect(Location,
 * BufferAllocator, Path, String)} with the CA bundle when the server's certificate comes from a
 * private CA.
 *
 * <p>{@link #open} returns once the server validated the target (ack of request 0), so an
 * unknown table or an incompatible schema fails right there with the server's
 * {@code FlightRuntimeException} (NOT_FOUND, INVALID_ARGUMENT ...). Later failures complete the
 * pending futures exceptionally and make {@link IngestStream#finish()} throw.
 */
public final class IngestClient implements AutoCloseable {
  /** Batches a stream may have unacknowledged before {@code send} blocks (the server's limit). */
  public static final int DEFAULT_MAX_IN_FLIGHT = 32;

  private final FlightClient client;
  private final BufferAllocator allocator;
  private final boolean ownsClient;

  /** Uses {@code client} without taking ownership of it. */
  public IngestClient(FlightClient client, BufferAllocator allocator) {
    this(client, allocator, false);
  }

  private IngestClient(FlightClient client, BufferAllocator allocator, boolean ownsClient) {
    this.client = client;
    this.allocator = allocator;
    this.ownsClient = ownsClient;
  }

  /** Connects to a server; the client is closed with this object. */
  public static IngestClient connect(Location location, BufferAllocator allocator) {
    return new IngestClient(FlightClient.builder(allocator, location).build(), allocator, true);
  }

  /**
   * Connects to a server, sending {@code token} as {@code authorization: Bearer <token>} with
   * every call ({@link BearerToken}); the client is closed with this object.
   */
  public static IngestClient connect(Location location, BufferAllocator allocator, String token) {
    return new IngestClient(FlightClient.builder(allocator, location).intercept(new BearerToken(token)).build(),
        allocator, true);
  }

  /**
   * Opens a stream writing {@code operation} rows of {@code schema} to the table and waits until
   * the server accepted the target. Throws the server's {@code FlightRuntimeException} if not.
   */
  public IngestStream open(String catalog, List<String> namespace, String table,
      WalOperation operation, Schema schema, CallOption... options) {
    return open(new IngestProtocol.Header(catalog, namespace, table, operation), schema,
        DEFAULT_MAX_IN_FLIGHT, options);
  }

  /** {@link #open} with an explicit header and limit of unacknowledged batches. */
  public IngestStream open(IngestProtocol.Header header, Schema schema, int maxInFlight,
      CallOption... options) {
    return IngestStream.open(client, allocator, header, schema, maxInFlight, options);
  }

  /**
   * Opens an idempotent stream ({@link IdempotentIngestStream}) of {@code producerId}: it
   * numbers its batches and, after a break, reconnects and resends the unacknowledged ones with
   * their sequences, so each batch is stored once.
   */
  public IdempotentIngestStream openIdempotent(String catalog, List<String> namespace,
      String table, WalOperation operation, Schema schema, String producerId,
      CallOption... options) {
    return openIdempotent(new IngestProtocol.Header(catalog, namespace, table, operation,
        producerId), schema, DEFAULT_MAX_IN_FLIGHT, IdempotentIngestStream.DEFAULT_ATTEMPTS,
        IdempotentIngestStream.DEFAULT_BACKOFF, options);
  }

  /** {@link #openIdempotent} with an explicit header (with a producer id) and limits. */
  public IdempotentIngestStream openIdempotent(IngestProtocol.Header header, Schema schema,
      int maxInFlight, int reconnectAttempts, Duration backoff, CallOption... options) {
    return new IdempotentIngestStream(this, allocator, header, schema, maxInFlight,
        reconnectAttempts, backoff, options);
  }

  /**
   * The highest sequence of {@code producerId} durable in the table ({@link ProducerState}):
   * where a producer that numbers its batches by a monotonic source position resumes (after it).
   * Empty when the producer has nothing durable there (never written, or forgotten after the
   * table's producer retention). Throws the server's {@code FlightRuntimeException} (NOT_FOUND,
   * UNAUTHORIZED, UNAVAILABLE ...).
   */
  public OptionalLong lastSequence(String catalog, List<String> namespace, String table,
      String producerId, CallOption... options) {
    byte[] body = ProducerState.encodeRequest(new ProducerState.Request(catalog, namespace, table, producerId));
    Iterator<Result> results = client.doAction(new Action(ProducerState.ACTION, body), options);
    OptionalLong last = OptionalLong.empty();
    boolean answered = false;
    while (results.hasNext()) {
      last = ProducerState.parseResult(results.next().getBody());
      answered = true;
    }
    if (!answered) {
      throw SeException.unavailable("action " + ProducerState.ACTION + ": the server sent no result", null);
    }
    return last;
  }

  /**
   * Connects over TLS to a server whose certificate chains to one of the PEM CA certificates in
   * {@code caBundle} (a private CA; a server with a publicly trusted certificate needs only a
   * {@code grpc+tls} location). The host name of {@code location} is verified against the
   * certificate. {@code token}, when not null, goes with every call as {@link #connect(Location,
   * BufferAllocator, String)} sends it; the client is closed with this object.
   */
  public static IngestClient connect(Location location, BufferAllocator allocator, Path caBundle, String token) {
    if (!LocationSchemes.GRPC_TLS.equals(location.getUri().getScheme())) {
      throw new IllegalArgumentException("a CA bundle needs a " + LocationSchemes.GRPC_TLS + " location, got " + location.getUri());
    }
    // Read and checked here, so a missing or non-PEM file fails naming it.
    ClientTrust.of("CA bundle", caBundle);
    FlightClient.Builder builder = FlightClient.builder(allocator, location);
    try (InputStream pem = Files.newInputStream(caBundle)) {
      builder.useTls().trustedCertificates(pem);
      if (token != null) {
        builder.intercept(new BearerToken(token));
      }
      // build() reads the certificates, so it runs while the stream is open.
      return new IngestClient(builder.build(), allocator, true);
    } catch (IOException e) {
      throw SeException.invalid("CA bundle %s: cannot read the file (%s)", caBundle, e.getClass().getSimpleName());
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (ownsClient) {
      client.close();
    }
  }
}
