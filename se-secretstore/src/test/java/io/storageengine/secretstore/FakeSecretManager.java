package io.storageengine.secretstore;

import com.google.cloud.secretmanager.v1.AccessSecretVersionRequest;
import com.google.cloud.secretmanager.v1.AccessSecretVersionResponse;
import com.google.cloud.secretmanager.v1.AddSecretVersionRequest;
import com.google.cloud.secretmanager.v1.CreateSecretRequest;
import com.google.cloud.secretmanager.v1.DeleteSecretRequest;
import com.google.cloud.secretmanager.v1.GetSecretRequest;
import com.google.cloud.secretmanager.v1.Secret;
import com.google.cloud.secretmanager.v1.SecretPayload;
import com.google.cloud.secretmanager.v1.SecretVersion;
import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.zip.CRC32C;

/**
 * Secret Manager v1's gRPC service on a loopback port (plaintext), for the five methods the store
 * calls: CreateSecret (ALREADY_EXISTS when taken), GetSecret, DeleteSecret (with etag: ABORTED on
 * a mismatch), AddSecretVersion (checks the payload CRC32C when sent), AccessSecretVersion
 * ({@code latest} or a number). Calls need {@code authorization: Bearer} {@link #TOKEN};
 * {@link #DENIED_TOKEN} is PERMISSION_DENIED. The service definition is built from the published
 * request and response messages and the service's method names, as the generated base class would.
 */
final class FakeSecretManager implements AutoCloseable {
  static final String TOKEN = "gcp-test-token";
  static final String DENIED_TOKEN = "gcp-denied-token";
  private static final String SERVICE = "google.cloud.secretmanager.v1.SecretManagerService";
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private static final class Stored {
    Secret meta;
    final List<ByteString> versions = new ArrayList<>();
  }

  private final Map<String, Stored> secrets = new HashMap<>();
  private final Server server;
  private Instant lastTime = Instant.EPOCH;
  final List<String> calls = new ArrayList<>();

  FakeSecretManager() throws IOException {
    ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
        .addMethod(method("CreateSecret", CreateSecretRequest.getDefaultInstance(), Secret.getDefaultInstance()),
            unary(this::createSecret))
        .addMethod(method("GetSecret", GetSecretRequest.getDefaultInstance(), Secret.getDefaultInstance()),
            unary(this::getSecret))
        .addMethod(method("DeleteSecret", DeleteSecretRequest.getDefaultInstance(), Empty.getDefaultInstance()),
            unary(this::deleteSecret))
        .addMethod(method("AddSecretVersion", AddSecretVersionRequest.getDefaultInstance(), SecretVersion.getDefaultInstance()),
            unary(this::addSecretVersion))
        .addMethod(method("AccessSecretVersion", AccessSecretVersionRequest.getDefaultInstance(),
            AccessSecretVersionResponse.getDefaultInstance()), unary(this::accessSecretVersion))
        .build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(ServerInterceptors.intercept(service, new Auth()))
        .build().start();
  }

  /** {@code http://127.0.0.1:<port>}: the store's plaintext endpoint form. */
  String endpoint() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /** Adds a version to secret {@code name} (full resource name) as an operator would. */
  synchronized void putRaw(String name, byte[] value) {
    Stored s = secrets.computeIfAbsent(name, n -> newStored(n, now()));
    s.versions.add(ByteString.copyFrom(value));
  }

  /** A secret without versions created at {@code created}: what a creator that died between its calls leaves. */
  synchronized void putEmpty(String name, Instant created) {
    secrets.put(name, newStored(name, created));
  }

  synchronized Map<String, byte[]> latestValues() {
    Map<String, byte[]> out = new HashMap<>();
    secrets.forEach((k, v) -> {
      if (!v.versions.isEmpty()) {
        out.put(k, v.versions.get(v.versions.size() - 1).toByteArray());
      }
    });
    return out;
  }

  synchronized boolean exists(String name) {
    return secrets.containsKey(name);
  }

  private synchronized Secret createSecret(CreateSecretRequest r) {
    calls.add("CreateSecret");
    if (!r.getParent().matches("projects/[a-z0-9-]+") || !r.getSecretId().matches("[a-zA-Z0-9_-]{1,255}")) {
      throw Status.INVALID_ARGUMENT.withDescription("bad parent or secret id").asRuntimeException();
    }
    if (!r.getSecret().hasReplication()) {
      throw Status.INVALID_ARGUMENT.withDescription("Secret.replication is required").asRuntimeException();
    }
    String name = r.getParent() + "/secrets/" + r.getSecretId();
    if (secrets.containsKey(name)) {
      throw Status.ALREADY_EXISTS.withDescription("Secret [" + name + "] already exists.").asRuntimeException();
    }
    Stored s = newStored(name, now());
    s.meta = s.meta.toBuilder().setReplication(r.getSecret().getReplication()).putAllLabels(r.getSecret().getLabelsMap()).build();
    secrets.put(name, s);
    return s.meta;
  }

  private synchronized Secret getSecret(GetSecretRequest r) {
    calls.add("GetSecret");
    return find(r.getName()).meta;
  }

  private synchronized Empty deleteSecret(DeleteSecretRequest r) {
    calls.add("DeleteSecret");
    Stored s = find(r.getName());
    if (!r.getEtag().isEmpty() && !r.getEtag().equals(s.meta.getEtag())) {
      throw Status.ABORTED.withDescription("etag does not match").asRuntimeException();
    }
    secrets.remove(r.getName());
    return Empty.getDefaultInstance();
  }

  private synchronized SecretVersion addSecretVersion(AddSecretVersionRequest r) {
    calls.add("AddSecretVersion");
    Stored s = find(r.getParent());
    SecretPayload p = r.getPayload();
    if (p.hasDataCrc32C() && p.getDataCrc32C() != crc32c(p.getData())) {
      throw Status.INVALID_ARGUMENT.withDescription("Checksum mismatch").asRuntimeException();
    }
    s.versions.add(p.getData());
    return SecretVersion.newBuilder().setName(r.getParent() + "/versions/" + s.versions.size())
        .setCreateTime(timestamp(now())).setState(SecretVersion.State.ENABLED).build();
  }

  private synchronized AccessSecretVersionResponse accessSecretVersion(AccessSecretVersionRequest r) {
    calls.add("AccessSecretVersion");
    int at = r.getName().lastIndexOf("/versions/");
    if (at < 0) {
      throw Status.INVALID_ARGUMENT.withDescription("bad version name").asRuntimeException();
    }
    Stored s = find(r.getName().substring(0, at));
    String v = r.getName().substring(at + "/versions/".length());
    int n = v.equals("latest") ? s.versions.size() : Integer.parseInt(v);
    if (n < 1 || n > s.versions.size()) {
      throw Status.NOT_FOUND.withDescription("Secret Version [" + r.getName() + "] not found.").asRuntimeException();
    }
    ByteString data = s.versions.get(n - 1);
    return AccessSecretVersionResponse.newBuilder()
        .setName(r.getName().substring(0, at) + "/versions/" + n)
        .setPayload(SecretPayload.newBuilder().setData(data).setDataCrc32C(crc32c(data)))
        .build();
  }

  private Stored find(String name) {
    Stored s = secrets.get(name);
    if (s == null) {
      throw Status.NOT_FOUND.withDescription("Secret [" + name + "] not found or has no versions.").asRuntimeException();
    }
    return s;
  }

  private Stored newStored(String name, Instant created) {
    Stored s = new Stored();
    s.meta = Secret.newBuilder().setName(name).setCreateTime(timestamp(created))
        .setEtag("\"" + UUID.randomUUID() + "\"").build();
    return s;
  }

  /** Strictly increasing, so two incarnations of a name never share a creation time. */
  private Instant now() {
    Instant t = Instant.now();
    lastTime = t.isAfter(lastTime) ? t : lastTime.plusNanos(1);
    return lastTime;
  }

  private static Timestamp timestamp(Instant t) {
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  private static long crc32c(ByteString data) {
    CRC32C crc = new CRC32C();
    crc.update(data.asReadOnlyByteBuffer());
    return crc.getValue();
  }

  private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> method(String name, Q request, R response) {
    return MethodDescriptor.<Q, R>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
        .setRequestMarshaller(ProtoUtils.marshaller(request))
        .setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }

  private static <Q, R> ServerCallHandler<Q, R> unary(Function<Q, R> body) {
    return ServerCalls.asyncUnaryCall((request, observer) -> {
      R response;
      try {
        response = body.apply(request);
      } catch (StatusRuntimeException e) {
        observer.onError(e);
        return;
      }
      observer.onNext(response);
      observer.onCompleted();
    });
  }

  private static final class Auth implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      String auth = headers.get(AUTHORIZATION);
      if (("Bearer " + DENIED_TOKEN).equals(auth)) {
        call.close(Status.PERMISSION_DENIED.withDescription("Permission 'secretmanager.versions.access' denied"), new Metadata());
        return new ServerCall.Listener<>() {};
      }
      if (!("Bearer " + TOKEN).equals(auth)) {
        call.close(Status.UNAUTHENTICATED.withDescription("Request had invalid authentication credentials."), new Metadata());
        return new ServerCall.Listener<>() {};
      }
      return next.startCall(call, headers);
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
  }
}
