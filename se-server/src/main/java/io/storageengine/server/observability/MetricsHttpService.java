package io.storageengine.server.observability;

import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.storageengine.common.telemetry.Metrics;

/** {@code GET /metrics}: every meter in the Prometheus text format. Other methods: 405. */
public final class MetricsHttpService implements HttpService {
  private static final MediaType PROMETHEUS_TEXT = MediaType.parse(Metrics.CONTENT_TYPE);

  private final Metrics metrics;

  public MetricsHttpService(Metrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    if (req.method() != HttpMethod.GET && req.method() != HttpMethod.HEAD) {
      return HttpResponse.of(HttpStatus.METHOD_NOT_ALLOWED);
    }
    // Gauges read allocators and JVM state: off the event loop.
    return HttpResponse.of(() -> HttpResponse.of(HttpStatus.OK, PROMETHEUS_TEXT, metrics.scrape()),
        ctx.blockingTaskExecutor());
  }
}
