package io.storageengine.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.storageengine.common.Json;
import io.storageengine.reconcile.ReconcileStatus;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.wal.TableWal;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /health}: 200 with an empty body, answered on the event loop without touching
 * storage, the catalogs or any lock, so it never waits behind ingestion.
 * {@code GET /health?detail=true} is for operators: a JSON body listing the tables whose
 * reconciliation is failing ({@code "status":"degraded"}) or none ({@code "status":"ok"}), read
 * from cluster storage on an executor of its own (not Armeria's blocking executor, which
 * ingestion and the catalog API share), so it does not wait behind them either; 503 when
 * cluster storage cannot be read.
 */
final class HealthHttpService implements HttpService {
  private static final Logger LOG = LoggerFactory.getLogger(HealthHttpService.class);

  private final ReconcileStatusStore statuses;
  private final Executor detailExecutor;

  /** @param detailExecutor where the detail's storage reads run */
  HealthHttpService(ReconcileStatusStore statuses, Executor detailExecutor) {
    this.statuses = statuses;
    this.detailExecutor = detailExecutor;
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    if (!"true".equals(ctx.queryParam("detail"))) {
      return HttpResponse.of(ResponseHeaders.of(HttpStatus.OK));
    }
    return HttpResponse.of(CompletableFuture.supplyAsync(this::detail, detailExecutor));
  }

  private HttpResponse detail() {
    Map<TableWal, ReconcileStatus> failing;
    try {
      failing = statuses.failing();
    } catch (RuntimeException e) {
      LOG.warn("health detail: cluster storage could not be read: {}", e.getMessage());
      ObjectNode body = Json.object();
      body.put("status", "unavailable");
      body.put("message", "cluster storage could not be read; see the server log");
      return HttpResponse.of(HttpStatus.SERVICE_UNAVAILABLE, MediaType.JSON_UTF_8, Json.toBytes(body));
    }
    ObjectNode body = Json.object();
    body.put("status", failing.isEmpty() ? "ok" : "degraded");
    ArrayNode tables = body.putArray("failing_tables");
    failing.forEach((table, status) -> {
      ObjectNode entry = tables.addObject();
      entry.put("catalog", table.catalogId());
      entry.put("table_uuid", table.tableUuid().toString());
      entry.setAll(status.toJson());
      entry.put("summary", status.describe());
    });
    return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, Json.toBytes(body));
  }
}
