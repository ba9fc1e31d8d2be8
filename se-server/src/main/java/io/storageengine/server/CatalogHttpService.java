package io.storageengine.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.storageengine.auth.Action;
import io.storageengine.auth.Principal;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.TenantCatalogRegistry;
import io.storageengine.catalog.rest.IcebergRestFacade;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.Ids;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.reconcile.ReconcileStatus;
import io.storageengine.reconcile.ReconcileStatusStore;
import io.storageengine.wal.TableWal;
import java.util.UUID;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tenant catalog API (ARCHITECTURE.md section 4) under {@code /catalogs}, and each tenant's
 * Iceberg REST base URI under {@code /catalogs/{id}/v1/}. Blocking registry work runs on the
 * server's blocking executor. Errors are answered through {@link HttpErrors#engine}: bodies are
 * {@code {"error":{"code":..,"message":..}}}, a backend outage is 503 UNAVAILABLE, and internal
 * failures answer 500 with an error id and no detail (the detail goes to the log under that id).
 *
 * <p>Every route asks {@link Access#require} before it touches the registry (so a refusal reads
 * the same whether or not the catalog exists): creating and deleting catalogs needs a cluster
 * admin, describing a catalog, a table's reconcile status and slices-meta and Iceberg REST reads ({@code GET},
 * {@code HEAD}, scan planning: {@link IcebergRestFacade#isRead}) a reader, Iceberg REST writes an
 * owner; {@code /catalogs/{id}/grants} is the
 * admin API of {@link AccessHttpService}.
 */
final class CatalogHttpService implements HttpService {
  private static final int MAX_BODY_BYTES = 1 << 20;
  /** The Iceberg REST header by which a client asks for vended storage credentials. */
  private static final String ACCESS_DELEGATION = "x-iceberg-access-delegation";

  private final TenantCatalogRegistry registry;
  private final IcebergRestFacade facade;
  private final ReconcileStatusStore reconcileStatuses;
  /** Cluster storage, where the tables' slices-meta lives. */
  private final ObjectStore clusterStore;
  private final Access access;

  CatalogHttpService(TenantCatalogRegistry registry, ReconcileStatusStore reconcileStatuses, ObjectStore clusterStore,
      Access access, int planPageSize) {
    this.registry = registry;
    this.facade = new IcebergRestFacade(registry, registry::config, registry.telemetry(), planPageSize);
    this.reconcileStatuses = reconcileStatuses;
    this.clusterStore = clusterStore;
    this.access = access;
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    return HttpResponse.of(req.aggregate().thenApplyAsync(agg -> {
      try {
        return route(ctx, agg);
      } catch (RuntimeException e) {
        return isIcebergRest(ctx) ? icebergError(e) : error(e);
      }
    }, ctx.blockingTaskExecutor()));
  }

  private HttpResponse route(ServiceRequestContext ctx, AggregatedHttpRequest req) {
    String rawPath = ctx.rawPath();
    int q = rawPath.indexOf('?');
    if (q >= 0) {
      rawPath = rawPath.substring(0, q);
    }
    HttpMethod method = req.method();
    Principal caller = Access.httpCaller(ctx);
    String rest = rawPath.equals("/catalogs") ? "" : rawPath.substring("/catalogs/".length());
    if (rest.isEmpty()) {
      if (method == HttpMethod.POST) {
        access.require(caller, null, Action.ADMIN);
        return create(req);
      }
      return methodNotAllowed("POST", "listing catalogs is not supported; GET /catalogs/{id} instead");
    }
    int slash = rest.indexOf('/');
    String id = decode(slash < 0 ? rest : rest.substring(0, slash));
    String below = slash < 0 ? "" : rest.substring(slash + 1);
    if (below.equals("grants") || below.startsWith("grants/")) {
      return AccessHttpService.grants(access, caller, ctx, req, id,
          below.equals("grants") ? "" : decode(below.substring("grants/".length())));
    }
    if (below.isEmpty()) {
      if (method == HttpMethod.GET) {
        access.require(caller, id, Action.READ);
        Ids.requireCatalogId(id);
        return json(HttpStatus.OK, registry.config(id).toResponseJson(id));
      }
      if (method == HttpMethod.DELETE) {
        access.require(caller, id, Action.ADMIN);
        Ids.requireCatalogId(id);
        registry.delete(id);
        access.catalogDeleted(id);
        return HttpResponse.of(HttpStatus.NO_CONTENT);
      }
      return methodNotAllowed("GET, DELETE", "method " + method + " is not allowed on /catalogs/{id}");
    }
    if (below.equals("v1") || below.startsWith("v1/")) {
      String path = below.equals("v1") ? "" : below.substring(3);
      access.require(caller, id, IcebergRestFacade.isRead(method.name(), path) ? Action.READ : Action.DDL);
      return icebergRest(ctx, req, id, path);
    }
    access.require(caller, id, Action.READ);
    if (below.startsWith("tables/") && below.endsWith("/reconcile")) {
      return reconcileStatus(method, id,
          decode(below.substring("tables/".length(), below.length() - "/reconcile".length())));
    }
    if (below.startsWith("tables/") && below.endsWith("/slices")) {
      return slices(method, id, decode(below.substring("tables/".length(), below.length() - "/slices".length())));
    }
    throw SeException.notFound("no such resource: %s", ctx.path());
  }

  /**
   * {@code GET /catalogs/{id}/tables/{table_uuid}/reconcile}: the table's reconcile status
   * ({@code {"state":"healthy"}} or failing since when, with what), as recorded on cluster storage.
   */
  private HttpResponse reconcileStatus(HttpMethod method, String id, String uuid) {
    Ids.requireCatalogId(id);
    if (method != HttpMethod.GET) {
      return methodNotAllowed("GET", "method " + method + " is not allowed on a table's reconcile status");
    }
    ReconcileStatus status = reconcileStatuses.read(new TableWal(id, tableUuid(uuid)));
    return json(HttpStatus.OK, status.toJson());
  }

  /**
   * {@code GET /catalogs/{id}/tables/{table_uuid}/slices}: a sliced entity table's slices-meta
   * ({@link io.storageengine.reconcile.SliceMeta}) as stored on cluster storage; 404 while it has
   * none (the table is not sliced, or no pass has read it yet).
   */
  private HttpResponse slices(HttpMethod method, String id, String uuid) {
    Ids.requireCatalogId(id);
    if (method != HttpMethod.GET) {
      return methodNotAllowed("GET", "method " + method + " is not allowed on a table's slices");
    }
    TableWal table = new TableWal(id, tableUuid(uuid));
    java.util.Optional<ObjectStore.Blob> blob = clusterStore.get(io.storageengine.reconcile.SliceMeta.key(table));
    if (blob.isEmpty()) {
      throw SeException.notFound("table %s of catalog '%s' has no slices-meta", uuid, id);
    }
    return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, com.linecorp.armeria.common.HttpData.wrap(
        blob.get().data()));
  }

  private static UUID tableUuid(String uuid) {
    UUID tableUuid;
    try {
      tableUuid = UUID.fromString(uuid);
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("invalid table uuid '%s': expected the Iceberg table UUID", uuid);
    }
    if (!tableUuid.toString().equals(uuid.toLowerCase(java.util.Locale.ROOT))) {
      throw SeException.invalid("invalid table uuid '%s': expected the Iceberg table UUID", uuid);
    }
    return tableUuid;
  }

  private HttpResponse create(AggregatedHttpRequest req) {
    MediaType type = req.contentType();
    if (type == null || !type.is(MediaType.JSON)) {
      throw new SeException(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          "Content-Type must be application/json, got " + (type == null ? "none" : "'" + type + "'"));
    }
    if (req.content().length() > MAX_BODY_BYTES) {
      throw SeException.invalid("request body larger than %d bytes", MAX_BODY_BYTES);
    }
    CatalogConfig.Request request = CatalogConfig.parseRequest(req.content().array());
    CatalogConfig created = registry.create(request.catalogId(), request.config());
    ResponseHeaders headers = ResponseHeaders.builder(HttpStatus.CREATED)
        .contentType(MediaType.JSON_UTF_8)
        .set(HttpHeaderNames.LOCATION, "/catalogs/" + request.catalogId())
        .build();
    return HttpResponse.of(headers, com.linecorp.armeria.common.HttpData.wrap(
        Json.toBytes(created.toResponseJson(request.catalogId()))));
  }

  private HttpResponse icebergRest(ServiceRequestContext ctx, AggregatedHttpRequest req, String id, String path) {
    if (!Ids.isValidCatalogId(id)) {
      IcebergRestFacade.Response r = facade.handle(id, req.method().name(), path, Map.of(), new byte[0]);
      return HttpResponse.of(HttpStatus.valueOf(r.status()), MediaType.JSON_UTF_8, r.body());
    }
    Map<String, String> query = new LinkedHashMap<>();
    ctx.queryParams().forEach((k, v) -> query.putIfAbsent(k, v));
    IcebergRestFacade.Response r = facade.handle(id, req.method().name(), path, query,
        req.headers().get(ACCESS_DELEGATION), req.content().array());
    if (r.status() == 204) {
      return HttpResponse.of(HttpStatus.NO_CONTENT);
    }
    return HttpResponse.of(HttpStatus.valueOf(r.status()), MediaType.JSON_UTF_8, r.body());
  }

  private static String decode(String segment) {
    return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static HttpResponse methodNotAllowed(String allow, String message) {
    HttpErrors.HttpError error = HttpErrors.engine(new SeException(ErrorCode.METHOD_NOT_ALLOWED, message));
    ResponseHeaders headers = ResponseHeaders.builder(error.status())
        .contentType(MediaType.JSON_UTF_8).set(HttpHeaderNames.ALLOW, allow).build();
    return HttpResponse.of(headers, com.linecorp.armeria.common.HttpData.wrap(error.body()));
  }

  private static boolean isIcebergRest(ServiceRequestContext ctx) {
    return ctx.path().matches("/catalogs/[^/]+/v1(/.*)?");
  }

  /** {@code e} in the Iceberg REST error model, as the facade answers. */
  private static HttpResponse icebergError(RuntimeException e) {
    HttpErrors.HttpError error = HttpErrors.iceberg(e);
    return HttpResponse.of(HttpStatus.valueOf(error.status()), MediaType.JSON_UTF_8, error.body());
  }

  /** {@code e} in the engine's error model ({@link HttpErrors#engine}). */
  private static HttpResponse error(RuntimeException e) {
    HttpErrors.HttpError error = HttpErrors.engine(e);
    return HttpResponse.of(HttpStatus.valueOf(error.status()), MediaType.JSON_UTF_8, error.body());
  }

  private static HttpResponse json(HttpStatus status, ObjectNode body) {
    return HttpResponse.of(status, MediaType.JSON_UTF_8, Json.toBytes(body));
  }
}
