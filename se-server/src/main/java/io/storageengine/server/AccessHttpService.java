package io.storageengine.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import io.storageengine.auth.CatalogRole;
import io.storageengine.auth.GrantStore;
import io.storageengine.auth.Grantee;
import io.storageengine.auth.Principal;
import io.storageengine.auth.TokenStore;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The admin API of authentication, every operation through {@link Access#administration} (checked
 * for a cluster admin and audited there):
 * <ul>
 *   <li>{@code POST /principals} {@code {"name":"etl"}}: 201; {@code DELETE /principals/{name}}: 204.</li>
 *   <li>{@code POST /principals/{name}/tokens} {@code {"expires_in":"P30D"}}: 201
 *       {@code {"id":..,"principal":..,"token":..,"expires_at":..}}, the token shown this once;
 *       {@code DELETE /principals/{name}/tokens/{id}}: 204.</li>
 *   <li>{@code PUT /catalogs/{id}/grants/{grantee}} {@code {"role":"reader"}} (a grantee is a
 *       principal name, {@code principal:<name>} or {@code group:<name>}): 204;
 *       {@code GET /catalogs/{id}/grants}: 200 {@code {"grants":[{"grantee":..,"role":..}]}};
 *       {@code DELETE /catalogs/{id}/grants/{grantee}}: 204.</li>
 *   <li>{@code PUT /admins/{grantee}}, {@code DELETE /admins/{grantee}}: cluster admins, 204.</li>
 * </ul>
 * Errors are the engine's error model ({@link HttpErrors#engine}).
 */
final class AccessHttpService implements HttpService {
  private static final int MAX_BODY_BYTES = 64 * 1024;

  private final Access access;

  AccessHttpService(Access access) {
    this.access = access;
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    return HttpResponse.of(req.aggregate().thenApplyAsync(agg -> {
      try {
        return route(ctx, agg);
      } catch (RuntimeException e) {
        return error(e);
      }
    }, ctx.blockingTaskExecutor()));
  }

  private HttpResponse route(ServiceRequestContext ctx, AggregatedHttpRequest req) {
    Principal caller = Access.httpCaller(ctx);
    // Non-admins are refused before anything about the request is looked at.
    access.require(caller, null, Action.ADMIN);
    HttpMethod method = req.method();
    String rawPath = ctx.rawPath();
    int q = rawPath.indexOf('?');
    List<String> segments = segments(q < 0 ? rawPath : rawPath.substring(0, q));
    if (segments.get(0).equals("admins") && segments.size() == 2) {
      Grantee grantee = Grantee.parse(segments.get(1));
      if (method == HttpMethod.PUT) {
        access.administration().grantAdmin(caller, grantee);
        return HttpResponse.of(HttpStatus.NO_CONTENT);
      }
      if (method == HttpMethod.DELETE) {
        access.administration().revokeAdmin(caller, grantee);
        return HttpResponse.of(HttpStatus.NO_CONTENT);
      }
      return methodNotAllowed("PUT, DELETE");
    }
    if (segments.get(0).equals("principals")) {
      if (segments.size() == 1) {
        if (method != HttpMethod.POST) {
          return methodNotAllowed("POST");
        }
        String name = text(body(req), "name");
        access.administration().createPrincipal(caller, name);
        ObjectNode created = Json.object();
        created.put("name", name);
        return json(HttpStatus.CREATED, created);
      }
      String name = segments.get(1);
      if (segments.size() == 2) {
        if (method != HttpMethod.DELETE) {
          return methodNotAllowed("DELETE");
        }
        access.administration().deletePrincipal(caller, name);
        return HttpResponse.of(HttpStatus.NO_CONTENT);
      }
      if (segments.get(2).equals("tokens") && segments.size() == 3) {
        if (method != HttpMethod.POST) {
          return methodNotAllowed("POST");
        }
        String expiresIn = text(body(req), "expires_in");
        TokenStore.IssuedToken issued = access.administration().createToken(caller, name, expiresIn);
        ObjectNode answer = Json.object();
        answer.put("id", issued.id());
        answer.put("principal", issued.principal());
        answer.put("token", issued.token());
        answer.put("expires_at", issued.expiresAt().toString());
        return json(HttpStatus.CREATED, answer);
      }
      if (segments.get(2).equals("tokens") && segments.size() == 4) {
        if (method != HttpMethod.DELETE) {
          return methodNotAllowed("DELETE");
        }
        access.administration().revokeToken(caller, name, segments.get(3));
        return HttpResponse.of(HttpStatus.NO_CONTENT);
      }
    }
    throw SeException.notFound("no such resource: %s", ctx.path());
  }

  /** {@code /catalogs/{id}/grants} ({@code grantee} empty) and {@code /catalogs/{id}/grants/{grantee}}. */
  static HttpResponse grants(Access access, Principal caller, ServiceRequestContext ctx, AggregatedHttpRequest req,
      String catalogId, String grantee) {
    access.require(caller, catalogId, Action.ADMIN);
    HttpMethod method = req.method();
    if (grantee.isEmpty()) {
      if (method != HttpMethod.GET) {
        return methodNotAllowed("GET");
      }
      ObjectNode answer = Json.object();
      ArrayNode list = answer.putArray("grants");
      for (GrantStore.Grant grant : access.administration().listGrants(caller, catalogId)) {
        ObjectNode entry = list.addObject();
        entry.put("grantee", grant.grantee().text());
        entry.put("role", grant.role());
      }
      return json(HttpStatus.OK, answer);
    }
    if (method == HttpMethod.PUT) {
      CatalogRole role = CatalogRole.parse(text(body(req), "role"));
      access.administration().grant(caller, catalogId, Grantee.parse(grantee), role);
      return HttpResponse.of(HttpStatus.NO_CONTENT);
    }
    if (method == HttpMethod.DELETE) {
      access.administration().revokeGrant(caller, catalogId, Grantee.parse(grantee));
      return HttpResponse.of(HttpStatus.NO_CONTENT);
    }
    return methodNotAllowed("PUT, DELETE");
  }

  private static List<String> segments(String path) {
    return java.util.Arrays.stream(path.substring(1).split("/", -1))
        .map(s -> URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8)).toList();
  }

  private static JsonNode body(AggregatedHttpRequest req) {
    MediaType type = req.contentType();
    if (type == null || !type.is(MediaType.JSON)) {
      throw new SeException(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          "Content-Type must be application/json, got " + (type == null ? "none" : "'" + type + "'"));
    }
    if (req.content().length() > MAX_BODY_BYTES) {
      throw SeException.invalid("request body larger than %d bytes", MAX_BODY_BYTES);
    }
    return Json.parse(req.content().array());
  }

  private static String text(JsonNode body, String field) {
    JsonNode value = body.isObject() ? body.get(field) : null;
    if (value == null || !value.isTextual() || value.asText().isBlank()) {
      throw SeException.invalid("body: expected a string field \"%s\"", field);
    }
    return value.asText();
  }

  private static HttpResponse methodNotAllowed(String allow) {
    HttpErrors.HttpError error = HttpErrors.engine(new SeException(ErrorCode.METHOD_NOT_ALLOWED,
        "method not allowed here; allowed: " + allow));
    ResponseHeaders headers = ResponseHeaders.builder(error.status())
        .contentType(MediaType.JSON_UTF_8).set(HttpHeaderNames.ALLOW, allow).build();
    return HttpResponse.of(headers, com.linecorp.armeria.common.HttpData.wrap(error.body()));
  }

  private static HttpResponse error(RuntimeException e) {
    HttpErrors.HttpError error = HttpErrors.engine(e);
    return HttpResponse.of(HttpStatus.valueOf(error.status()), MediaType.JSON_UTF_8, error.body());
  }

  private static HttpResponse json(HttpStatus status, ObjectNode body) {
    return HttpResponse.of(status, MediaType.JSON_UTF_8, Json.toBytes(body));
  }
}
