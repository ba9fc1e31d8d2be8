package io.storageengine.catalog.rest;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.storageengine.catalog.LocationConfinement;
import io.storageengine.catalog.LoggingCatalog;
import io.storageengine.catalog.TableLocationPolicy;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Iceberg REST catalog API of one tenant, served by delegating to the tenant's own catalog
 * through Iceberg's {@link CatalogHandlers}. Transport-neutral: the server hands it the method,
 * the raw (still percent-encoded) path below {@code /catalogs/{id}/v1}, the query parameters and
 * the body, and writes back the {@link Response}. Errors follow the Iceberg REST error model;
 * upstream credentials and backend details never appear in a response.
 *
 * <p>Served: config, namespaces (list, create, load, exists, drop, update properties) and tables
 * (list, create, load, exists, update/commit, drop, rename). Anything else answers 404 or 405
 * in the REST error model.
 */
public final class IcebergRestFacade {
  private static final Logger LOG = LoggerFactory.getLogger(IcebergRestFacade.class);
  private static final String SEPARATOR = "%1F";

  private final TenantCatalogs catalogs;
  private final ObjectMapper mapper;

  public IcebergRestFacade(TenantCatalogs catalogs) {
    this.catalogs = catalogs;
    this.mapper = new ObjectMapper()
        .setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
        .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
        .setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY)
        .setSerializationInclusion(JsonInclude.Include.NON_NULL)
        // Unknown fields stay allowed (newer clients send more), duplicate keys never are.
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    RESTSerializers.registerAll(mapper);
  }

  /** A response: HTTP status and a JSON body (empty for 204). */
  public record Response(int status, byte[] body) {
    static Response noContent() {
      return new Response(204, new byte[0]);
    }
  }

  /**
   * Handles one request. {@code path} is the part after {@code /v1/} (e.g.
   * {@code namespaces/a%1Fb/tables/t}), not yet percent-decoded.
   */
  public Response handle(String catalogId, String method, String path, Map<String, String> query, byte[] body) {
    try {
      List<String> seg = segments(path);
      if (seg.size() == 1 && seg.get(0).equals("config")) {
        requireMethod(method, "GET");
        catalogs.catalog(catalogId); // 404 for an unknown tenant
        // Empty endpoints: clients fall back to the standard set, which is what this facade serves.
        return new Response(200, "{\"defaults\":{},\"overrides\":{},\"endpoints\":[]}".getBytes(StandardCharsets.UTF_8));
      }
      Catalog catalog = catalogs.catalog(catalogId);
      if (!seg.isEmpty() && seg.get(0).equals("namespaces")) {
        return namespaces(catalog, method, seg, query, body);
      }
      if (seg.size() == 2 && seg.get(0).equals("tables") && seg.get(1).equals("rename")) {
        requireMethod(method, "POST");
        CatalogHandlers.renameTable(catalog, read(body, RenameTableRequest.class));
        return Response.noContent();
      }
      throw new NotFound("no such endpoint: /v1/" + path);
    } catch (RuntimeException e) {
      return error(e);
    }
  }

  private Response namespaces(Catalog catalog, String method, List<String> seg, Map<String, String> query, byte[] body) {
    SupportsNamespaces ns = asNamespaces(catalog);
    if (seg.size() == 1) {
      if (method.equals("GET")) {
        String parent = query.get("parent");
        Namespace p = parent == null ? Namespace.empty() : RESTUtil.decodeNamespace(parent, SEPARATOR);
        return json(200, query.get("pageSize") == null
            ? CatalogHandlers.listNamespaces(ns, p)
            : CatalogHandlers.listNamespaces(ns, p, query.get("pageToken"), query.get("pageSize")));
      }
      requireMethod(method, "POST");
      return json(200, CatalogHandlers.createNamespace(ns, read(body, CreateNamespaceRequest.class)));
    }
    Namespace namespace = RESTUtil.decodeNamespace(seg.get(1), SEPARATOR);
    if (seg.size() == 2) {
      switch (method) {
        case "GET":
          return json(200, CatalogHandlers.loadNamespace(ns, namespace));
        case "HEAD":
          CatalogHandlers.namespaceExists(ns, namespace);
          return Response.noContent();
        case "DELETE":
          CatalogHandlers.dropNamespace(ns, namespace);
          return Response.noContent();
        default:
          throw new MethodNotAllowed(method);
      }
    }
    if (seg.size() == 3 && seg.get(2).equals("properties")) {
      requireMethod(method, "POST");
      return json(200, CatalogHandlers.updateNamespaceProperties(ns, namespace,
          read(body, UpdateNamespacePropertiesRequest.class)));
    }
    if (seg.get(2).equals("tables")) {
      if (seg.size() == 3) {
        if (method.equals("GET")) {
          return json(200, query.get("pageSize") == null
              ? CatalogHandlers.listTables(catalog, namespace)
              : CatalogHandlers.listTables(catalog, namespace, query.get("pageToken"), query.get("pageSize")));
        }
        requireMethod(method, "POST");
        CreateTableRequest request = read(body, CreateTableRequest.class);
        if (request.stageCreate()) {
          return json(200, CatalogHandlers.stageTableCreate(catalog, namespace, request));
        }
        return json(200, CatalogHandlers.createTable(catalog, namespace, request));
      }
      if (seg.size() == 4) {
        TableIdentifier ident = TableIdentifier.of(namespace, RESTUtil.decodeString(seg.get(3)));
        switch (method) {
          case "GET":
            return json(200, CatalogHandlers.loadTable(catalog, ident, RESTCatalogProperties.SnapshotMode.ALL));
          case "HEAD":
            CatalogHandlers.tableExists(catalog, ident);
            return Response.noContent();
          case "POST":
            UpdateTableRequest update = read(body, UpdateTableRequest.class);
            checkCommit(catalog, ident, update);
            return json(200, CatalogHandlers.updateTable(catalog, ident, update));
          case "DELETE":
            if (Boolean.parseBoolean(query.getOrDefault("purgeRequested", "false"))) {
              CatalogHandlers.purgeTable(catalog, ident);
            } else {
              CatalogHandlers.dropTable(catalog, ident);
            }
            return Response.noContent();
          default:
            throw new MethodNotAllowed(method);
        }
      }
    }
    if (seg.get(2).equals("views")) {
      throw new NoSuchViewException("views are not supported by this catalog endpoint");
    }
    throw new NotFound("no such endpoint");
  }

  /** Snapshot operations that keep every row: the only data commits an entity table takes from outside. */
  private static final java.util.Set<String> ROW_PRESERVING_OPERATIONS = java.util.Set.of(DataOperations.REPLACE);

  /**
   * Checks a table commit before the catalog sees it: its new location and path properties
   * against the tenant's {@link TableLocationPolicy} (a staged create's location arrives here
   * too), and, on an entity table, that it changes no rows. Entity tables are written only
   * through ingestion, where keys are merged and deletes remembered; an outside append,
   * overwrite, row delta or delete would bypass both (duplicates, resurrected rows). Schema and
   * property changes and rewrites that keep every row ({@code replace}) stay allowed.
   */
  private static void checkCommit(Catalog catalog, TableIdentifier ident, UpdateTableRequest update) {
    TableLocationPolicy policy = catalog instanceof LoggingCatalog logging
        ? logging.locationPolicy() : new TableLocationPolicy(LocationConfinement.unconfined());
    boolean create = update.requirements().stream().anyMatch(r -> r instanceof UpdateRequirement.AssertTableDoesNotExist);
    org.apache.iceberg.Table current = create ? null : catalog.loadTable(ident);
    policy.checkUpdates(update.updates(), current == null ? null : current.location());
    boolean entity = current != null && isEntity(current.properties().get(io.storageengine.catalog.TableProperties.MODE));
    for (MetadataUpdate change : update.updates()) {
      if (change instanceof MetadataUpdate.SetProperties set
          && set.updated().containsKey(io.storageengine.catalog.TableProperties.MODE)) {
        entity |= isEntity(set.updated().get(io.storageengine.catalog.TableProperties.MODE));
      }
    }
    if (!entity) {
      return;
    }
    for (MetadataUpdate change : update.updates()) {
      if (change instanceof MetadataUpdate.AddSnapshot add
          && !ROW_PRESERVING_OPERATIONS.contains(add.snapshot().operation())) {
        throw new ForbiddenException("table %s is an entity table: it is written only through the engine's ingestion "
            + "(Arrow Flight DoPut or Flight SQL bulk ingest), which merges keys and remembers deletes; "
            + "an outside '%s' commit is refused. Ingest the rows instead", ident, add.snapshot().operation());
      }
    }
  }

  /**
   * Whether {@code se.mode} names an entity table, by the one rule of {@link
   * io.storageengine.catalog.TableSettings#parseMode}. A value that rule refuses is no entity
   * table: the engine neither ingests into nor reconciles such a table, so there are no merged
   * keys to protect.
   */
  private static boolean isEntity(String mode) {
    try {
      return io.storageengine.catalog.TableSettings.parseMode("", mode) == io.storageengine.catalog.TableDefinition.Mode.ENTITY;
    } catch (io.storageengine.common.SeException e) {
      return false;
    }
  }

  private static SupportsNamespaces asNamespaces(Catalog catalog) {
    if (catalog instanceof SupportsNamespaces ns) {
      return ns;
    }
    throw new BadRequestException("this catalog does not support namespaces");
  }

  private static List<String> segments(String path) {
    String p = path.startsWith("/") ? path.substring(1) : path;
    if (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    return p.isEmpty() ? List.of() : new ArrayList<>(Arrays.asList(p.split("/")));
  }

  private static void requireMethod(String method, String expected) {
    if (!method.equals(expected)) {
      throw new MethodNotAllowed(method);
    }
  }

  private <T> T read(byte[] body, Class<T> type) {
    try {
      return mapper.readValue(body, type);
    } catch (IOException | RuntimeException e) {
      throw new BadRequestException("invalid %s: %s", type.getSimpleName(), firstLine(e.getMessage()));
    }
  }

  private Response json(int status, Object value) {
    try {
      return new Response(status, mapper.writeValueAsBytes(value));
    } catch (IOException e) {
      throw SeException.internal("cannot serialize response", e);
    }
  }

  private Response error(RuntimeException e) {
    int code;
    String type;
    String message = e.getMessage();
    if (e instanceof SeException se) {
      code = se.code() == ErrorCode.INVALID_ARGUMENT ? 400 : se.code().httpStatus();
      type = switch (se.code().category()) {
        case NOT_FOUND -> "NoSuchCatalogException";
        case USER -> "BadRequestException";
        case CONFLICT -> "AlreadyExistsException";
        case UNAVAILABLE -> "ServiceUnavailableException";
        case INTERNAL -> "InternalServerError";
      };
      if (se.code().category() == ErrorCode.Category.INTERNAL || se.code().category() == ErrorCode.Category.UNAVAILABLE) {
        LOG.warn("catalog request failed: {}", se.getMessage(), se.getCause());
      }
    } else if (e instanceof NoSuchTableException || e instanceof NoSuchNamespaceException
        || e instanceof NoSuchViewException || e instanceof NotFound) {
      code = 404;
      type = e.getClass().getSimpleName();
    } else if (e instanceof AlreadyExistsException || e instanceof NamespaceNotEmptyException
        || e instanceof CommitFailedException) {
      code = 409;
      type = e.getClass().getSimpleName();
    } else if (e instanceof ForbiddenException) {
      code = 403;
      type = "ForbiddenException";
    } else if (e instanceof MethodNotAllowed) {
      code = 405;
      type = "MethodNotAllowedException";
    } else if (e instanceof BadRequestException || e instanceof ValidationException
        || e instanceof IllegalArgumentException || e instanceof UnsupportedOperationException) {
      code = e instanceof UnsupportedOperationException ? 406 : 400;
      type = e instanceof UnsupportedOperationException ? "UnsupportedOperationException" : "BadRequestException";
    } else if (e instanceof CommitStateUnknownException) {
      code = 500;
      type = "CommitStateUnknownException";
      message = "commit state unknown";
      LOG.warn("catalog commit state unknown", e);
    } else {
      code = 500;
      type = "InternalServerError";
      message = "internal error in the catalog";
      LOG.warn("catalog request failed", e);
    }
    ErrorResponse response = ErrorResponse.builder()
        .responseCode(code).withType(type).withMessage(message == null ? type : firstLine(message)).build();
    return new Response(code, ErrorResponseParser.toJson(response).getBytes(StandardCharsets.UTF_8));
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static final class NotFound extends RuntimeException {
    NotFound(String message) {
      super(message);
    }
  }

  private static final class MethodNotAllowed extends RuntimeException {
    MethodNotAllowed(String method) {
      super("method " + method + " not allowed here");
    }
  }
}
