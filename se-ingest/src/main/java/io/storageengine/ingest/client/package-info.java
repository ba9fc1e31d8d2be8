/**
 * Java client of the native ingestion protocol (ARCHITECTURE.md 6.1).
 *
 * <p>{@link io.storageengine.ingest.client.IngestClient} opens
 * {@link io.storageengine.ingest.client.IngestStream}s; each stream targets one table with one
 * operation and one Arrow schema. On the wire (see {@link io.storageengine.ingest.IngestProtocol}):
 * a DoPut whose descriptor is a CMD holding {@code Any{type_url =
 * "type.googleapis.com/se.ingestion.v1.Ingest"}}, the schema, a metadata-only message with the
 * header {@code {"request_id":0,"catalog":..,"namespace":[..],"table_name":..,"operation":..}},
 * then record batches with {@code {"request_id":n}}. The server acknowledges the header with
 * request id 0 once the target is validated, and each batch with its id once it is durable in the
 * write-ahead log; acks may arrive out of order. An error ends the stream with a Flight status:
 * INVALID_ARGUMENT (bad header, schema or batch; the message names the field), NOT_FOUND (catalog
 * or table), RESOURCE_EXHAUSTED (memory limits), UNAVAILABLE (storage; retry the unacknowledged
 * batches). Batches acknowledged before an error are durable.
 */
package io.storageengine.ingest.client;
