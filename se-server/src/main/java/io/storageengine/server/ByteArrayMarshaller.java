package io.storageengine.server;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * gRPC messages as plain byte arrays: for services that copy messages out of buffers whose
 * lifetime they do not control (the Flight listener) or forward them without looking inside
 * (the load balancer).
 */
public final class ByteArrayMarshaller implements MethodDescriptor.Marshaller<byte[]> {
  public static final ByteArrayMarshaller INSTANCE = new ByteArrayMarshaller();

  private ByteArrayMarshaller() {}

  @Override
  public InputStream stream(byte[] value) {
    return new ByteArrayInputStream(value);
  }

  @Override
  public byte[] parse(InputStream stream) {
    try {
      return stream.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
