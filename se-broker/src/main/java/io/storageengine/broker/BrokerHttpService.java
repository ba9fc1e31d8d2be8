package io.storageengine.broker;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.broker.BrokerMessages.AckRequest;
import io.storageengine.broker.BrokerMessages.AckResponse;
import io.storageengine.broker.BrokerMessages.HeartbeatRequest;
import io.storageengine.broker.BrokerMessages.HeartbeatResponse;
import io.storageengine.broker.BrokerMessages.LeaseRequest;
import io.storageengine.broker.BrokerMessages.ScheduleRequest;
import io.storageengine.broker.BrokerMessages.ScheduleResponse;
import java.util.Set;

/**
 * The broker's HTTP API, JSON in and out. Mount it with
 * {@code serverBuilder.serviceUnder(BrokerHttpService.PATH_PREFIX, service)}:
 * <ul>
 *   <li>{@code POST /broker/v1/schedule} {@code {key, kind, payload}} -> {@code {outcome}}</li>
 *   <li>{@code POST /broker/v1/lease} {@code {worker, kinds, max}} -> {@code {lease_ms, tasks}}</li>
 *   <li>{@code POST /broker/v1/heartbeat} {@code {key, lease_id}} -> {@code {lease_expires_ms}}</li>
 *   <li>{@code POST /broker/v1/ack} {@code {key, lease_id, success, error?, retry_after_ms?}}
 *       -> {@code {outcome}}</li>
 *   <li>{@code GET /broker/v1/tasks} -> the queue document</li>
 * </ul>
 * Errors are {@code {"error":{"code":..,"message":..}}} with the code's HTTP status
 * ({@link HttpErrors#engine}; internal failures show only an error id); a fenced or stopped broker
 * answers 503 UNAVAILABLE "not the active broker". Broker calls block until the
 * queue commit lands, so they run on the blocking executor.
 */
public final class BrokerHttpService implements HttpService {
  public static final String PATH_PREFIX = "/broker/v1/";
  private static final int MAX_BODY_BYTES = 1 << 20;

  private final Broker broker;

  public BrokerHttpService(Broker broker) {
    this.broker = broker;
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    return HttpResponse.of(req.aggregate().thenApplyAsync(agg -> {
      try {
        return route(ctx.path(), agg);
      } catch (RuntimeException e) {
        return error(e);
      }
    }, ctx.blockingTaskExecutor()));
  }

  private HttpResponse route(String path, AggregatedHttpRequest req) {
    if (!path.startsWith(PATH_PREFIX)) {
      throw SeException.notFound("no broker endpoint at '%s'", path);
    }
    String operation = path.substring(PATH_PREFIX.length());
    if (operation.equals("tasks")) {
      requireMethod(req, HttpMethod.GET, path);
      return ok(broker.snapshot());
    }
    requireMethod(req, HttpMethod.POST, path);
    if (req.content().length() > MAX_BODY_BYTES) {
      throw SeException.invalid("request body of %s exceeds %d bytes", path, MAX_BODY_BYTES);
    }
    byte[] body = req.content().array();
    switch (operation) {
      case "schedule": {
        ScheduleRequest r = Json.read(body, ScheduleRequest.class);
        return ok(new ScheduleResponse(broker.schedule(r.key(), r.kind(), r.payload())));
      }
      case "lease": {
        LeaseRequest r = Json.read(body, LeaseRequest.class);
        Set<String> kinds = r.kinds() == null ? Set.of() : Set.copyOf(r.kinds());
        return ok(broker.lease(r.worker(), kinds, r.max()));
      }
      case "heartbeat": {
        HeartbeatRequest r = Json.read(body, HeartbeatRequest.class);
        return ok(new HeartbeatResponse(broker.heartbeat(r.key(), r.leaseId())));
      }
      case "ack": {
        AckRequest r = Json.read(body, AckRequest.class);
        return ok(new AckResponse(broker.ack(r.key(), r.leaseId(), r.success(), r.error(), r.retryAfterMs())));
      }
      default:
        throw SeException.notFound("no broker endpoint at '%s'", path);
    }
  }

  private static void requireMethod(AggregatedHttpRequest req, HttpMethod expected, String path) {
    if (req.method() != expected) {
      throw new SeException(ErrorCode.METHOD_NOT_ALLOWED,
          String.format("%s %s is not supported; use %s", req.method(), path, expected));
    }
  }

  private static HttpResponse ok(Object body) {
    return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, Json.toBytes(body));
  }

  /** {@code e} in the engine's error model ({@link HttpErrors#engine}). */
  private static HttpResponse error(RuntimeException e) {
    HttpErrors.HttpError error = HttpErrors.engine(e);
    return HttpResponse.of(HttpStatus.valueOf(error.status()), MediaType.JSON_UTF_8, error.body());
  }
}
