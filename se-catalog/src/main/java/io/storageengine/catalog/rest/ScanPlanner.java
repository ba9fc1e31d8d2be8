package io.storageengine.catalog.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.ManifestThreads;
import io.storageengine.common.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Scan;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.NoSuchPlanIdException;
import org.apache.iceberg.exceptions.NoSuchPlanTaskException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.PlanStatus;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.requests.FetchScanTasksRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequestParser;
import org.apache.iceberg.rest.responses.FetchPlanningResultResponse;
import org.apache.iceberg.rest.responses.FetchScanTasksResponse;
import org.apache.iceberg.rest.responses.PlanTableScanResponse;

/**
 * Server-side scan planning of the REST facade ({@code POST .../plan}, {@code GET} and
 * {@code DELETE .../plan/{plan-id}}, {@code POST .../tasks}), with Iceberg's own planner over the
 * tenant's table: the file scan tasks carry their delete files (deletion vectors, position and
 * equality deletes), residual filters and, for {@code stats-fields}, those columns' stats.
 *
 * <p>Planning is synchronous: {@code POST .../plan} answers {@code completed} with the first
 * page of file scan tasks and one plan task for each further page ({@code pageSize} tasks, in
 * data-file path order). A plan task is self-contained: it names the table (by UUID), the scan
 * pinned to the snapshot it was planned on (and the schema its columns were resolved against) and
 * its page, so any server answers it, also after the plan was cancelled or forgotten, by planning
 * the same scan again. Recent plans are kept in memory (at most {@code maxCachedTasks} tasks in
 * all, least recently used first out) so that fetching their pages normally costs no second
 * planning. A plan id is known only to the server that planned it and only while the plan is
 * kept: {@code GET} / {@code DELETE .../plan/{plan-id}} answer 404 {@code NoSuchPlanIdException}
 * otherwise (clients need neither, since plans complete at once).
 *
 * <p>Unlike Iceberg's {@code CatalogHandlers.planTableScan}, which keeps every plan in one
 * process-wide map until it is cancelled and has no notion of tenants, plans here are bounded and
 * scoped to the catalog and table they were made for, and an incremental scan's start snapshot is
 * exclusive, as the REST spec says.
 */
final class ScanPlanner {
  static final int DEFAULT_PAGE_SIZE = 1000;
  static final int DEFAULT_MAX_CACHED_TASKS = 100_000;
  private static final String TOKEN_VERSION = "1";

  private final int pageSize;
  private final int maxCachedTasks;
  /** Plans by id, least recently used first; guarded by {@code this}. */
  private final LinkedHashMap<String, Plan> plans = new LinkedHashMap<>(16, 0.75f, true);
  private long cachedTasks;

  ScanPlanner(int pageSize, int maxCachedTasks) {
    if (pageSize < 1) {
      throw new IllegalArgumentException("page size must be at least 1, got " + pageSize);
    }
    this.pageSize = pageSize;
    this.maxCachedTasks = maxCachedTasks;
  }

  /** One planned scan: its pinned description and its tasks in page order. */
  private record Plan(String catalogId, TableIdentifier ident, PinnedScan scan, List<FileScanTask> tasks) {}

  /**
   * A scan with everything that could change between pages fixed: the snapshot (or the
   * incremental range) and the schema the selected columns are resolved against.
   *
   * @param planId the plan's id
   * @param tableUuid the table's UUID (a plan task of another table is refused)
   * @param request the request with {@code snapshot-id} pinned (null for a table without snapshots)
   * @param schemaId the schema {@code select} is resolved against
   */
  private record PinnedScan(String planId, String tableUuid, PlanTableScanRequest request, int schemaId) {}

  /** {@code POST .../plan}: plans {@code request} on {@code table}, completed, first page inline. */
  PlanTableScanResponse plan(String catalogId, TableIdentifier ident, Table table, PlanTableScanRequest request,
      List<Credential> credentials) {
    try {
      request.validate();
    } catch (IllegalArgumentException e) {
      throw new BadRequestException("invalid PlanTableScanRequest: %s", e.getMessage());
    }
    PinnedScan scan = pin(table, request);
    Plan plan = new Plan(catalogId, ident, scan, planFiles(table, scan));
    remember(plan);
    PlanTableScanResponse.Builder response = PlanTableScanResponse.builder(table.specs())
        .withPlanStatus(PlanStatus.COMPLETED)
        .withPlanId(scan.planId())
        .withFileScanTasks(page(plan.tasks(), 0))
        .withCredentials(credentials);
    List<String> more = planTasks(scan, plan.tasks().size());
    return (more.isEmpty() ? response : response.withPlanTasks(more)).build();
  }

  /** {@code GET .../plan/{plan-id}}: a kept plan's result again; 404 for an unknown plan. */
  FetchPlanningResultResponse fetch(String catalogId, TableIdentifier ident, Table table, String planId,
      List<Credential> credentials) {
    Plan plan = kept(catalogId, ident, planId);
    if (plan == null) {
      throw new NoSuchPlanIdException("no plan '%s' for table %s on this server", planId, ident);
    }
    FetchPlanningResultResponse.Builder response = FetchPlanningResultResponse.builder(table.specs())
        .withPlanStatus(PlanStatus.COMPLETED)
        .withFileScanTasks(page(plan.tasks(), 0))
        .withCredentials(credentials);
    List<String> more = planTasks(plan.scan(), plan.tasks().size());
    return (more.isEmpty() ? response : response.withPlanTasks(more)).build();
  }

  /** {@code DELETE .../plan/{plan-id}}: forgets a kept plan; 404 for an unknown plan. */
  void cancel(String catalogId, TableIdentifier ident, String planId) {
    synchronized (this) {
      Plan plan = plans.get(planId);
      if (plan != null && plan.catalogId().equals(catalogId) && plan.ident().equals(ident)) {
        plans.remove(planId);
        cachedTasks -= plan.tasks().size();
        return;
      }
    }
    throw new NoSuchPlanIdException("no plan '%s' for table %s on this server", planId, ident);
  }

  /** {@code POST .../tasks}: the file scan tasks of one plan task (a page of its plan). */
  FetchScanTasksResponse tasks(String catalogId, TableIdentifier ident, Table table, FetchScanTasksRequest request) {
    if (request.planTask() == null || request.planTask().isEmpty()) {
      throw new BadRequestException("invalid FetchScanTasksRequest: plan-task is missing");
    }
    PlanTask task = decode(request.planTask());
    if (!task.scan().tableUuid().equals(table.uuid().toString())) {
      throw new NoSuchPlanTaskException("plan task does not belong to table %s", ident);
    }
    Plan plan = kept(catalogId, ident, task.scan().planId());
    List<FileScanTask> tasks = plan != null && sameScan(plan.scan(), task.scan())
        ? plan.tasks() : planFiles(table, task.scan());
    if ((long) task.page() * pageSize >= tasks.size()) {
      throw new NoSuchPlanTaskException("plan task page %d is past the end of its plan", task.page());
    }
    return FetchScanTasksResponse.builder(table.specs()).withFileScanTasks(page(tasks, task.page())).build();
  }

  /** {@code request} with its snapshot fixed and the schema of its columns chosen. */
  private static PinnedScan pin(Table table, PlanTableScanRequest request) {
    String planId = UUID.randomUUID().toString();
    boolean incremental = request.startSnapshotId() != null;
    Long snapshotId = request.snapshotId();
    if (incremental) {
      requireSnapshot(table, request.startSnapshotId(), "start-snapshot-id");
      requireSnapshot(table, request.endSnapshotId(), "end-snapshot-id");
    } else if (snapshotId != null) {
      requireSnapshot(table, snapshotId, "snapshot-id");
    } else if (table.currentSnapshot() != null) {
      snapshotId = table.currentSnapshot().snapshotId();
    }
    int schemaId = table.schema().schemaId();
    if (request.useSnapshotSchema()) {
      Long schemaOf = incremental ? request.endSnapshotId() : request.snapshotId();
      Snapshot snapshot = schemaOf == null ? null : table.snapshot(schemaOf);
      if (snapshot != null && snapshot.schemaId() != null) {
        schemaId = snapshot.schemaId();
      }
    }
    PlanTableScanRequest.Builder pinned = PlanTableScanRequest.builder()
        .withSelect(request.select())
        .withFilter(request.filter())
        .withCaseSensitive(request.caseSensitive())
        .withUseSnapshotSchema(request.useSnapshotSchema())
        .withStatsFields(request.statsFields());
    if (incremental) {
      pinned.withStartSnapshotId(request.startSnapshotId()).withEndSnapshotId(request.endSnapshotId());
    } else {
      pinned.withSnapshotId(snapshotId);
    }
    return new PinnedScan(planId, table.uuid().toString(), pinned.build(), schemaId);
  }

  private static void requireSnapshot(Table table, Long id, String field) {
    if (id == null) {
      throw new BadRequestException("invalid PlanTableScanRequest: %s is missing", field);
    }
    if (table.snapshot(id) == null) {
      throw new BadRequestException("invalid PlanTableScanRequest: %s %d is not a snapshot of the table", field, id);
    }
  }

  /** Every file scan task of {@code scan}, in data-file path order (the same on every planning). */
  private static List<FileScanTask> planFiles(Table table, PinnedScan scan) {
    PlanTableScanRequest request = scan.request();
    if (request.startSnapshotId() == null && request.snapshotId() == null) {
      return List.of(); // a table without snapshots
    }
    Schema schema = table.schemas().get(scan.schemaId());
    for (Long id : Arrays.asList(request.snapshotId(), request.startSnapshotId(), request.endSnapshotId())) {
      if (id != null && table.snapshot(id) == null) {
        throw new NoSuchPlanTaskException("snapshot %d of the plan is no longer in table %s: plan the scan again",
            id, table.name());
      }
    }
    if (schema == null) {
      throw new NoSuchPlanTaskException("the schema of the plan is no longer in table %s: plan the scan again",
          table.name());
    }
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = request.startSnapshotId() != null
        ? configure(ManifestThreads.scan(table.newIncrementalAppendScan(), table, table.snapshot(request.endSnapshotId()))
            .fromSnapshotExclusive(request.startSnapshotId()).toSnapshot(request.endSnapshotId()), schema, request)
            .planFiles()
        : configure(ManifestThreads.scan(table.newScan(), table, table.snapshot(request.snapshotId()))
            .useSnapshot(request.snapshotId()), schema, request).planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    tasks.sort(Comparator.comparing((FileScanTask t) -> t.file().location()).thenComparingLong(FileScanTask::start));
    return tasks;
  }

  /**
   * {@code scan} projected to the request's columns of {@code schema} (the current table schema,
   * or the snapshot's for {@code use-snapshot-schema}), filtered, with the requested stats.
   */
  private static <T extends Scan<T, FileScanTask, ?>> T configure(T scan, Schema schema, PlanTableScanRequest request) {
    Schema projection = schema;
    if (request.select() != null && !request.select().isEmpty()) {
      try {
        projection = request.caseSensitive() ? schema.select(request.select()) : schema.caseInsensitiveSelect(request.select());
      } catch (IllegalArgumentException e) {
        throw new BadRequestException("invalid select %s: %s", request.select(), e.getMessage());
      }
    }
    T configured = scan.project(projection).caseSensitive(request.caseSensitive());
    if (request.filter() != null) {
      configured = configured.filter(request.filter());
    }
    if (request.statsFields() != null && !request.statsFields().isEmpty()) {
      configured = configured.includeColumnStats(request.statsFields());
    }
    return configured;
  }

  private List<FileScanTask> page(List<FileScanTask> tasks, int page) {
    int from = (int) Math.min((long) page * pageSize, tasks.size());
    return new ArrayList<>(tasks.subList(from, (int) Math.min((long) from + pageSize, tasks.size())));
  }

  /** One plan task per page after the first. */
  private List<String> planTasks(PinnedScan scan, int taskCount) {
    List<String> tasks = new ArrayList<>();
    for (int page = 1; (long) page * pageSize < taskCount; page++) {
      tasks.add(encode(new PlanTask(scan, page)));
    }
    return tasks;
  }

  private synchronized void remember(Plan plan) {
    if (plan.tasks().size() > maxCachedTasks) {
      return;
    }
    plans.put(plan.scan().planId(), plan);
    cachedTasks += plan.tasks().size();
    Iterator<Plan> oldest = plans.values().iterator();
    while (cachedTasks > maxCachedTasks && oldest.hasNext()) {
      cachedTasks -= oldest.next().tasks().size();
      oldest.remove();
    }
  }

  private synchronized Plan kept(String catalogId, TableIdentifier ident, String planId) {
    Plan plan = plans.get(planId);
    return plan != null && plan.catalogId().equals(catalogId) && plan.ident().equals(ident) ? plan : null;
  }

  /** A page of a pinned scan: what a plan task string encodes. */
  private record PlanTask(PinnedScan scan, int page) {}

  /** URL-safe base64 of {@code {"v":..,"plan-id":..,"table-uuid":..,"schema-id":..,"page":..,"scan":{request}}}. */
  private static String encode(PlanTask task) {
    ObjectNode node = Json.object();
    node.put("v", TOKEN_VERSION);
    node.put("plan-id", task.scan().planId());
    node.put("table-uuid", task.scan().tableUuid());
    node.put("schema-id", task.scan().schemaId());
    node.put("page", task.page());
    node.set("scan", Json.parse(PlanTableScanRequestParser.toJson(task.scan().request()).getBytes(StandardCharsets.UTF_8)));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(Json.toBytes(node));
  }

  private static PlanTask decode(String token) {
    try {
      JsonNode node = Json.parse(Base64.getUrlDecoder().decode(token));
      if (!TOKEN_VERSION.equals(node.path("v").asText()) || !node.path("page").canConvertToInt()
          || node.path("page").asInt() < 1 || !node.path("schema-id").canConvertToInt()
          || !node.path("plan-id").isTextual() || !node.path("table-uuid").isTextual() || !node.path("scan").isObject()) {
        throw new IllegalArgumentException("unknown plan task format");
      }
      PlanTableScanRequest request = PlanTableScanRequestParser.fromJson(node.get("scan"));
      PinnedScan scan = new PinnedScan(node.get("plan-id").asText(), node.get("table-uuid").asText(), request,
          node.get("schema-id").asInt());
      return new PlanTask(scan, node.get("page").asInt());
    } catch (RuntimeException e) {
      throw new NoSuchPlanTaskException("invalid plan task: pass a plan-task of a plan response unchanged");
    }
  }

  /** Whether two pinned scans are the same (requests do not define equals: compared as JSON). */
  private static boolean sameScan(PinnedScan a, PinnedScan b) {
    return a.planId().equals(b.planId()) && a.tableUuid().equals(b.tableUuid()) && a.schemaId() == b.schemaId()
        && PlanTableScanRequestParser.toJson(a.request()).equals(PlanTableScanRequestParser.toJson(b.request()));
  }
}
