package io.storageengine.query;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.memory.BufferAllocator;

/** Hosts the producer as the server will: Flight service inside a plain gRPC server, with the interceptor. */
final class TestQueryServer implements AutoCloseable {
  final QueryFlightSqlProducer producer;
  private final Server server;
  private final ExecutorService executor;

  TestQueryServer(BufferAllocator allocator, TestWarehouse warehouse, Path localDirectory) throws IOException {
    producer = new QueryFlightSqlProducer(allocator, warehouse, QueryConfig.defaults(localDirectory).withThreads(1).withMemoryLimit("256MB"));
    executor = Executors.newFixedThreadPool(4);
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(ServerInterceptors.intercept(
            FlightGrpcUtils.createFlightService(allocator, producer, null, new ContextPropagatingExecutorService(executor)),
            new QueryMetadataInterceptor()))
        .build()
        .start();
  }

  int port() {
    return server.getPort();
  }

  @Override
  public void close() throws Exception {
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
    executor.shutdownNow();
    producer.close();
  }
}
