package io.storageengine.catalog.rest;

import java.util.List;
import org.apache.iceberg.rest.Endpoint;

/**
 * The Iceberg REST endpoints {@link IcebergRestFacade} serves, exactly: advertised in
 * {@code GET /v1/config} so clients call nothing else (remote signing is not served).
 */
final class RestEndpoints {
  static final List<Endpoint> SERVED = List.of(
      Endpoint.V1_LIST_NAMESPACES,
      Endpoint.V1_LOAD_NAMESPACE,
      Endpoint.V1_NAMESPACE_EXISTS,
      Endpoint.V1_CREATE_NAMESPACE,
      Endpoint.V1_UPDATE_NAMESPACE,
      Endpoint.V1_DELETE_NAMESPACE,
      Endpoint.V1_COMMIT_TRANSACTION,
      Endpoint.V1_LIST_TABLES,
      Endpoint.V1_LOAD_TABLE,
      Endpoint.V1_TABLE_EXISTS,
      Endpoint.V1_CREATE_TABLE,
      Endpoint.V1_UPDATE_TABLE,
      Endpoint.V1_DELETE_TABLE,
      Endpoint.V1_RENAME_TABLE,
      Endpoint.V1_REGISTER_TABLE,
      Endpoint.V1_REPORT_METRICS,
      Endpoint.V1_TABLE_CREDENTIALS,
      Endpoint.V1_SUBMIT_TABLE_SCAN_PLAN,
      Endpoint.V1_FETCH_TABLE_SCAN_PLAN,
      Endpoint.V1_CANCEL_TABLE_SCAN_PLAN,
      Endpoint.V1_FETCH_TABLE_SCAN_PLAN_TASKS,
      Endpoint.V1_LIST_VIEWS,
      Endpoint.V1_LOAD_VIEW,
      Endpoint.V1_VIEW_EXISTS,
      Endpoint.V1_CREATE_VIEW,
      Endpoint.V1_UPDATE_VIEW,
      Endpoint.V1_DELETE_VIEW,
      Endpoint.V1_RENAME_VIEW,
      Endpoint.V1_REGISTER_VIEW);

  private RestEndpoints() {}
}
