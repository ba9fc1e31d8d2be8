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
import io.storageengine.common.ClientError;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.Telemetry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.iceberg.BaseMetastoreCatalog;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.FetchScanTasksRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RegisterViewRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ImmutableLoadCredentialsResponse;
import org.apache.iceberg.rest.responses.ListNamespacesResponse;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Iceberg REST catalog API of one tenant, served by delegating to the tenant's own catalog
 * through Iceberg's {@link CatalogHandlers}. Transport-neutral: the server hands it the method,
 * the raw (still percent-encoded) path below {@code /catalogs/{id}/v1}, the query parameters and
 * the body, and writes back the {@link Response}. Errors follow the Iceberg REST error model,
 * with the exception type Iceberg's client maps to the right exception; upstream credentials and
 * backend details never appear in a response.
 *
 * <p>Served (and advertised in {@code /v1/config}, see {@link RestEndpoints}): config;
 * namespaces (list, create, load, exists, drop, update properties); tables (list, create and
 * staged create, load, exists, commit, drop and purge, rename, register, metrics reports);
 * server-side scan planning ({@link ScanPlanner}); a table's storage credentials ({@code GET
 * .../credentials}, and in load, create and plan responses for a client that sends
 * {@code X-Iceberg-Access-Delegation: vended-credentials}, see {@link VendedCredentials});
 * multi-table transactions; views (list, create, load, exists, replace, drop, rename, register).
 * Listings page by {@code pageToken}/{@code pageSize}. Anything else answers 404 or 405 in the
 * REST error model. {@link #isRead} says which requests only read (the caller needs
 * {@code reader}, not {@code owner}).
 *
 * <p>Every write path is held to the tenant's {@link TableLocationPolicy} (names, locations under
 * the storage root, path properties), and every table commit, single or in a transaction, to
 * {@link #checkCommit}'s entity-table rule.
 */
public final class IcebergRestFacade {
  private static final Logger LOG = LoggerFactory.getLogger(IcebergRestFacade.class);
  private static final String SEPARATOR = "%1F";

  private final TenantCatalogs catalogs;
  private final Consumer<String> requireConfigured;
  private final ObjectMapper mapper;
  private final ClientMetricsRecorder metrics;
  private final ScanPlanner planner;

  /** A facade whose {@code /v1/config} checks the tenant by building its catalog. */
  public IcebergRestFacade(TenantCatalogs catalogs) {
    this(catalogs, catalogs::catalog);
  }

  /**
   * A facade whose {@code /v1/config} checks the tenant with {@code requireConfigured}, which
   * throws {@code SeException(NOT_FOUND)} for a tenant with no stored config and must not build
   * the catalog (so config answers while a tenant's upstream is down).
   */
  public IcebergRestFacade(TenantCatalogs catalogs, Consumer<String> requireConfigured) {
    this(catalogs, requireConfigured, Telemetry.none());
  }

  /**
   * As {@link #IcebergRestFacade(TenantCatalogs, Consumer)}, recording clients' metrics reports
   * into {@code telemetry}.
   */
  public IcebergRestFacade(TenantCatalogs catalogs, Consumer<String> requireConfigured, Telemetry telemetry) {
    this(catalogs, requireConfigured, telemetry, ScanPlanner.DEFAULT_PAGE_SIZE);
  }

  /**
   * As {@link #IcebergRestFacade(TenantCatalogs, Consumer, Telemetry)}, a scan plan answering at
   * most {@code planPageSize} file scan tasks per response (more come as plan tasks).
   */
  public IcebergRestFacade(TenantCatalogs catalogs, Consumer<String> requireConfigured, Telemetry telemetry,
      int planPageSize) {
    this.metrics = new ClientMetricsRecorder(telemetry);
    this.planner = new ScanPlanner(planPageSize, ScanPlanner.DEFAULT_MAX_CACHED_TASKS);
    this.catalogs = catalogs;
    this.requireConfigured = requireConfigured;
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

  /** What a request names, for the error type of a failure (Iceberg's client maps 404s by it). */
  private enum Subject { OTHER, NAMESPACE, TABLE, VIEW }

  /**
   * Whether a request only reads: {@code GET} and {@code HEAD}, and the scan-planning calls
   * ({@code POST .../tables/{t}/plan}, {@code DELETE .../plan/{plan-id}}, {@code POST
   * .../tables/{t}/tasks}), which change nothing in the catalog. {@code path} as for {@link #handle}.
   */
  public static boolean isRead(String method, String path) {
    if (method.equals("GET") || method.equals("HEAD")) {
      return true;
    }
    List<String> seg = segments(path);
    if (seg.size() < 5 || !seg.get(0).equals("namespaces") || !seg.get(2).equals("tables")) {
      return false;
    }
    String kind = seg.get(4);
    // Reporting scan metrics is part of reading: a reader's scans report them too.
    return (seg.size() == 5 && method.equals("POST")
            && (kind.equals("plan") || kind.equals("tasks") || kind.equals("metrics")))
        || (seg.size() == 6 && method.equals("DELETE") && kind.equals("plan"));
  }

  /**
   * Handles one request. {@code path} is the part after {@code /v1/} (e.g.
   * {@code namespaces/a%1Fb/tables/t}), not yet percent-decoded.
   */
  public Response handle(String catalogId, String method, String path, Map<String, String> query, byte[] body) {
    return handle(catalogId, method, path, query, null, body);
  }

  /**
   * As {@link #handle(String, String, String, Map, byte[])}, with the request's
   * {@code X-Iceberg-Access-Delegation} header ({@code accessDelegation}, null when absent): with
   * {@code vended-credentials}, table load, create and plan responses carry the table's storage
   * credentials ({@link VendedCredentials}). The caller must have checked that the client may read
   * the catalog.
   */
  public Response handle(String catalogId, String method, String path, Map<String, String> query,
      String accessDelegation, byte[] body) {
    boolean vend = VendedCredentials.requested(accessDelegation);
    Subject[] subject = {Subject.OTHER};
    try {
      List<String> seg = segments(path);
      if (seg.size() == 1 && seg.get(0).equals("config")) {
        requireMethod(method, "GET");
        requireConfigured.accept(catalogId); // 404 for an unknown tenant; the catalog is not built
        return json(200, ConfigResponse.builder().withEndpoints(RestEndpoints.SERVED).build());
      }
      Catalog catalog = catalogs.catalog(catalogId);
      if (!seg.isEmpty() && seg.get(0).equals("namespaces")) {
        return namespaces(catalogId, catalog, method, seg, query, body, vend, subject);
      }
      if (seg.size() == 2 && seg.get(0).equals("tables") && seg.get(1).equals("rename")) {
        subject[0] = Subject.TABLE;
        requireMethod(method, "POST");
        RenameTableRequest request = read(body, RenameTableRequest.class);
        TableLocationPolicy.checkIdentifier(request.destination());
        CatalogHandlers.renameTable(catalog, request);
        return Response.noContent();
      }
      if (seg.size() == 2 && seg.get(0).equals("views") && seg.get(1).equals("rename")) {
        subject[0] = Subject.VIEW;
        requireMethod(method, "POST");
        RenameTableRequest request = read(body, RenameTableRequest.class);
        TableLocationPolicy.checkIdentifier(request.destination());
        CatalogHandlers.renameView(views(catalog), request);
        return Response.noContent();
      }
      if (seg.size() == 2 && seg.get(0).equals("transactions") && seg.get(1).equals("commit")) {
        subject[0] = Subject.TABLE;
        requireMethod(method, "POST");
        commitTransaction(catalog, read(body, CommitTransactionRequest.class));
        return Response.noContent();
      }
      throw notFound("no such endpoint: /v1/" + path);
    } catch (RuntimeException e) {
      return error(e, subject[0]);
    }
  }

  private Response namespaces(String catalogId, Catalog catalog, String method, List<String> seg,
      Map<String, String> query, byte[] body, boolean vend, Subject[] subject) {
    SupportsNamespaces ns = asNamespaces(catalog);
    subject[0] = Subject.NAMESPACE;
    if (seg.size() == 1) {
      if (method.equals("GET")) {
        String parent = query.get("parent");
        Namespace p = parent == null || parent.isEmpty() ? Namespace.empty() : RESTUtil.decodeNamespace(parent, SEPARATOR);
        RestPages<Namespace> page = RestPages.of(CatalogHandlers.listNamespaces(ns, p).namespaces(), query);
        return json(200, ListNamespacesResponse.builder().addAll(page.items()).nextPageToken(page.next()).build());
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
          throw methodNotAllowed(method);
      }
    }
    String kind = seg.get(2);
    if (seg.size() == 3 && kind.equals("properties")) {
      requireMethod(method, "POST");
      return json(200, CatalogHandlers.updateNamespaceProperties(ns, namespace,
          read(body, UpdateNamespacePropertiesRequest.class)));
    }
    if (seg.size() == 3 && kind.equals("register")) {
      subject[0] = Subject.TABLE;
      requireMethod(method, "POST");
      return json(200, registerTable(catalog, namespace, read(body, RegisterTableRequest.class)));
    }
    if (seg.size() == 3 && kind.equals("register-view")) {
      subject[0] = Subject.VIEW;
      requireMethod(method, "POST");
      RegisterViewRequest request = read(body, RegisterViewRequest.class);
      TableLocationPolicy.checkIdentifier(TableIdentifier.of(namespace, request.name()));
      policy(catalog).checkRegister(request.metadataLocation());
      return json(200, CatalogHandlers.registerView(views(catalog), namespace, request));
    }
    if (kind.equals("tables")) {
      subject[0] = Subject.TABLE;
      return tables(catalogId, catalog, namespace, method, seg, query, body, vend);
    }
    if (kind.equals("views")) {
      subject[0] = Subject.VIEW;
      return views(catalog, namespace, method, seg, query, body);
    }
    throw notFound("no such endpoint");
  }

  private Response tables(String catalogId, Catalog catalog, Namespace namespace, String method, List<String> seg,
      Map<String, String> query, byte[] body, boolean vend) {
    if (seg.size() == 3) {
      if (method.equals("GET")) {
        RestPages<TableIdentifier> page = RestPages.of(CatalogHandlers.listTables(catalog, namespace).identifiers(), query);
        return json(200, ListTablesResponse.builder().addAll(page.items()).nextPageToken(page.next()).build());
      }
      requireMethod(method, "POST");
      CreateTableRequest request = read(body, CreateTableRequest.class);
      request = withFreeDefaultLocation(catalog, namespace, request);
      if (request.stageCreate()) {
        policy(catalog).checkTableLocation(request.location());
        policy(catalog).checkTableProperties(request.properties(), request.location());
        LoadTableResponse staged = CatalogHandlers.stageTableCreate(catalog, namespace, request);
        return json(200, vend ? withCredentials(staged, stagedCredentials(catalog, namespace, request, staged)) : staged);
      }
      LoadTableResponse created = CatalogHandlers.createTable(catalog, namespace, request);
      return json(200, vend ? withCredentials(created,
          credentials(catalog.loadTable(TableIdentifier.of(namespace, request.name())))) : created);
    }
    TableIdentifier ident = TableIdentifier.of(namespace, RESTUtil.decodeString(seg.get(3)));
    if (seg.size() >= 5) {
      return tableResource(catalogId, catalog, ident, method, seg, body, vend);
    }
    switch (method) {
      case "GET":
        LoadTableResponse loaded = CatalogHandlers.loadTable(catalog, ident, snapshotMode(query.get("snapshots")));
        return json(200, vend ? withCredentials(loaded, credentials(catalog.loadTable(ident))) : loaded);
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
        throw methodNotAllowed(method);
    }
  }

  /**
   * The sub-resources of a table: {@code metrics}, {@code credentials}, {@code plan},
   * {@code plan/{plan-id}} and {@code tasks}.
   */
  private Response tableResource(String catalogId, Catalog catalog, TableIdentifier ident, String method,
      List<String> seg, byte[] body, boolean vend) {
    String kind = seg.get(4);
    if (seg.size() == 5 && kind.equals("metrics")) {
      requireMethod(method, "POST");
      ReportMetricsRequest request = read(body, ReportMetricsRequest.class);
      metrics.record(catalogId, ident, request.report());
      return Response.noContent();
    }
    if (seg.size() == 5 && kind.equals("credentials")) {
      requireMethod(method, "GET");
      return json(200, ImmutableLoadCredentialsResponse.builder()
          .addAllCredentials(credentials(catalog.loadTable(ident))).build());
    }
    if (seg.size() == 5 && kind.equals("plan")) {
      requireMethod(method, "POST");
      PlanTableScanRequest request = read(body, PlanTableScanRequest.class);
      Table table = catalog.loadTable(ident);
      return json(200, planner.plan(catalogId, ident, table, request, vend ? credentials(table) : List.of()));
    }
    if (seg.size() == 6 && kind.equals("plan")) {
      String planId = RESTUtil.decodeString(seg.get(5));
      switch (method) {
        case "GET":
          Table table = catalog.loadTable(ident);
          return json(200, planner.fetch(catalogId, ident, table, planId, vend ? credentials(table) : List.of()));
        case "DELETE":
          catalog.loadTable(ident); // 404 for a table that does not exist
          planner.cancel(catalogId, ident, planId);
          return Response.noContent();
        default:
          throw methodNotAllowed(method);
      }
    }
    if (seg.size() == 5 && kind.equals("tasks")) {
      requireMethod(method, "POST");
      FetchScanTasksRequest request = read(body, FetchScanTasksRequest.class);
      return json(200, planner.tasks(catalogId, ident, catalog.loadTable(ident), request));
    }
    throw notFound("no such endpoint");
  }

  /** The storage credentials of {@code table} ({@link VendedCredentials}); none when it is not on S3. */
  private static List<Credential> credentials(Table table) {
    return VendedCredentials.of(table.location(), table.io());
  }

  /**
   * The credentials for a staged create: the location the staged metadata names, read through
   * the FileIO the catalog would give the table (a create transaction that is never committed:
   * nothing is written).
   */
  private static List<Credential> stagedCredentials(Catalog catalog, Namespace namespace, CreateTableRequest request,
      LoadTableResponse staged) {
    Table probe = catalog.buildTable(TableIdentifier.of(namespace, request.name()), request.schema())
        .withLocation(staged.tableMetadata().location())
        .createTransaction()
        .table();
    return VendedCredentials.of(staged.tableMetadata().location(), probe.io());
  }

  /**
   * {@code response} with {@code credentials} in both forms of the spec: the {@code
   * storage-credentials} list, and their properties in {@code config} for older clients.
   */
  private static LoadTableResponse withCredentials(LoadTableResponse response, List<Credential> credentials) {
    if (credentials.isEmpty()) {
      return response;
    }
    return LoadTableResponse.builder()
        .withTableMetadata(response.tableMetadata())
        .addAllConfig(response.config())
        .addAllConfig(VendedCredentials.config(credentials))
        .addAllCredentials(credentials)
        .build();
  }

  private Response views(Catalog catalog, Namespace namespace, String method, List<String> seg,
      Map<String, String> query, byte[] body) {
    ViewCatalog views = views(catalog);
    TableLocationPolicy policy = policy(catalog);
    if (seg.size() == 3) {
      if (method.equals("GET")) {
        RestPages<TableIdentifier> page = RestPages.of(CatalogHandlers.listViews(views, namespace).identifiers(), query);
        return json(200, ListTablesResponse.builder().addAll(page.items()).nextPageToken(page.next()).build());
      }
      requireMethod(method, "POST");
      CreateViewRequest request = read(body, CreateViewRequest.class);
      TableLocationPolicy.checkIdentifier(TableIdentifier.of(namespace, request.name()));
      if (request.location() != null) {
        policy.confinement().check(request.location(), "view location");
      }
      return json(200, CatalogHandlers.createView(views, namespace, request));
    }
    if (seg.size() != 4) {
      throw notFound("no such endpoint");
    }
    TableIdentifier ident = TableIdentifier.of(namespace, RESTUtil.decodeString(seg.get(3)));
    switch (method) {
      case "GET":
        return json(200, CatalogHandlers.loadView(views, ident));
      case "HEAD":
        CatalogHandlers.viewExists(views, ident);
        return Response.noContent();
      case "POST":
        UpdateTableRequest update = read(body, UpdateTableRequest.class);
        for (MetadataUpdate change : update.updates()) {
          if (change instanceof MetadataUpdate.SetLocation setLocation) {
            policy.confinement().check(setLocation.location(), "view location");
          }
        }
        return json(200, CatalogHandlers.updateView(views, ident, update));
      case "DELETE":
        CatalogHandlers.dropView(views, ident);
        return Response.noContent();
      default:
        throw methodNotAllowed(method);
    }
  }

  /**
   * Registers an existing metadata file as a table. The name and the metadata file are checked
   * first; the table's location and path properties (read from the registered metadata) after,
   * undoing the registration when they break the policy. Overwriting an entity table is refused:
   * it would replace rows merged by ingestion with rows that were not.
   */
  private LoadTableResponse registerTable(Catalog catalog, Namespace namespace, RegisterTableRequest request) {
    request.validate();
    TableIdentifier ident = TableIdentifier.of(namespace, request.name());
    TableLocationPolicy policy = policy(catalog);
    TableLocationPolicy.checkIdentifier(ident);
    policy.checkRegister(request.metadataLocation());
    String previous = null;
    if (request.overwrite() && catalog.tableExists(ident)) {
      Table existing = catalog.loadTable(ident);
      if (isEntity(existing.properties().get(io.storageengine.catalog.TableProperties.MODE))) {
        throw new ForbiddenException("table %s is an entity table: it is written only through the engine's "
            + "ingestion; registering other metadata over it is refused", ident);
      }
      previous = existing instanceof HasTableOperations ops ? ops.operations().current().metadataFileLocation() : null;
    }
    LoadTableResponse response = CatalogHandlers.registerTable(catalog, namespace, request);
    TableMetadata metadata = response.tableMetadata();
    try {
      policy.checkTableLocation(metadata.location());
      policy.checkTableProperties(metadata.properties(), metadata.location());
    } catch (SeException refused) {
      try {
        if (previous != null) {
          catalog.registerTable(ident, previous, true);
        } else {
          catalog.dropTable(ident, false);
        }
      } catch (RuntimeException e) {
        refused.addSuppressed(e);
      }
      throw refused;
    }
    return response;
  }

  /**
   * Commits the table changes of a multi-table transaction: every change is checked like a
   * single commit ({@link #checkCommit}) and validated against its table's current metadata
   * (requirements met, updates applicable) before any is applied; then each is committed. A
   * refused or invalid change leaves every table as it was. The tenant catalogs have no atomic
   * multi-table commit, so a writer racing between validation and the commits can still fail one
   * of them after another was applied (that one answers 409).
   */
  private void commitTransaction(Catalog catalog, CommitTransactionRequest request) {
    request.validate();
    java.util.Set<TableIdentifier> seen = new java.util.HashSet<>();
    for (UpdateTableRequest change : request.tableChanges()) {
      TableIdentifier ident = change.identifier();
      if (!seen.add(ident)) {
        throw new BadRequestException("transaction changes table %s more than once", ident);
      }
      checkCommit(catalog, ident, change);
      boolean create = change.requirements().stream()
          .anyMatch(r -> r instanceof UpdateRequirement.AssertTableDoesNotExist);
      if (create) {
        if (catalog.tableExists(ident)) {
          throw new CommitFailedException("Requirement failed: table already exists: %s", ident);
        }
        continue;
      }
      Table table = catalog.loadTable(ident);
      if (!(table instanceof HasTableOperations ops)) {
        throw new BadRequestException("table %s cannot take transaction commits in this catalog", ident);
      }
      TableMetadata base = ops.operations().current();
      for (UpdateRequirement requirement : change.requirements()) {
        requirement.validate(base);
      }
      TableMetadata.Builder builder = TableMetadata.buildFrom(base);
      for (MetadataUpdate update : change.updates()) {
        update.applyTo(builder);
      }
      builder.build();
    }
    for (UpdateTableRequest change : request.tableChanges()) {
      CatalogHandlers.updateTable(catalog, change.identifier(), change);
    }
  }

  /**
   * {@code request}, given a location of its own when it names none and the catalog's default
   * location for it already holds files (left by a table dropped without purge): the default
   * with a random suffix. Without this, re-creating a dropped table would be refused, since a new
   * table never shares storage (see {@link TableLocationPolicy}). Only catalogs that pick
   * locations themselves (SQL and embedded); a REST upstream picks its own.
   */
  private static CreateTableRequest withFreeDefaultLocation(Catalog catalog, Namespace namespace,
      CreateTableRequest request) {
    Catalog base = catalog instanceof LoggingCatalog logging ? logging.delegate() : catalog;
    if (request.location() != null || request.schema() == null || request.name() == null
        || !(base instanceof BaseMetastoreCatalog)) {
      return request;
    }
    TableIdentifier ident = TableIdentifier.of(namespace, request.name());
    TableLocationPolicy.checkIdentifier(ident);
    String location;
    try {
      Catalog.TableBuilder builder = base.buildTable(ident, request.schema());
      if (request.properties() != null) {
        builder.withProperties(request.properties()); // e.g. format-version, which the schema may need
      }
      Transaction probe = builder.createTransaction(); // writes nothing
      location = probe.table().location();
      if (!TableLocationPolicy.holdsFiles(probe.table().io(), location)) {
        return request;
      }
    } catch (RuntimeException e) {
      return request; // the create itself answers (already exists, invalid schema, ...)
    }
    String fresh = location + "-" + UUID.randomUUID().toString().substring(0, 8);
    LOG.debug("default location {} of {} holds files of a dropped table: using {}", location, ident, fresh);
    CreateTableRequest.Builder b = CreateTableRequest.builder()
        .withName(request.name())
        .withLocation(fresh)
        .withSchema(request.schema())
        .withPartitionSpec(request.spec())
        .withWriteOrder(request.writeOrder());
    if (request.properties() != null) {
      b.setProperties(request.properties());
    }
    if (request.stageCreate()) {
      b.stageCreate();
    }
    return b.build();
  }

  private static RESTCatalogProperties.SnapshotMode snapshotMode(String value) {
    if (value == null || value.isEmpty()) {
      return RESTCatalogProperties.SnapshotMode.ALL;
    }
    try {
      return RESTCatalogProperties.SnapshotMode.valueOf(value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new BadRequestException("invalid snapshots '%s': must be 'all' or 'refs'", value);
    }
  }

  private static TableLocationPolicy policy(Catalog catalog) {
    return catalog instanceof LoggingCatalog logging
        ? logging.locationPolicy() : new TableLocationPolicy(LocationConfinement.unconfined());
  }

  private static ViewCatalog views(Catalog catalog) {
    if (catalog instanceof ViewCatalog views) {
      return views;
    }
    if (catalog instanceof LoggingCatalog logging && logging.delegate() instanceof ViewCatalog views) {
      return views;
    }
    throw notFound("this catalog does not support views");
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
    TableLocationPolicy policy = policy(catalog);
    boolean create = update.requirements().stream().anyMatch(r -> r instanceof UpdateRequirement.AssertTableDoesNotExist);
    Table current = create ? null : catalog.loadTable(ident);
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
      throw methodNotAllowed(method);
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

  /**
   * The REST error for {@code e} ({@link HttpErrors#iceberg}): status and exception type as
   * Iceberg's client expects them (it maps a 404 to the exception its {@code type} names, else by
   * what the request was about).
   */
  private static Response error(RuntimeException e, Subject subject) {
    ClientError error = ClientError.of(e);
    if (subject == Subject.VIEW && e instanceof NotFoundException) {
      // A view whose metadata file is missing: the client should raise NoSuchViewException.
      error = error.withType(NoSuchViewException.class.getSimpleName());
    }
    HttpErrors.HttpError http = HttpErrors.iceberg(error);
    return new Response(http.status(), http.body());
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  /** A request for an endpoint (or a feature of the catalog) that does not exist: 404. */
  private static NotFoundException notFound(String message) {
    return new NotFoundException("%s", message);
  }

  private static SeException methodNotAllowed(String method) {
    return new SeException(ErrorCode.METHOD_NOT_ALLOWED, "method " + method + " not allowed here");
  }
}
