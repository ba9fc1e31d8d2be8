package io.storageengine.catalog;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CatalogConfigTest {

  private static CatalogConfig.Request parse(String json) {
    return CatalogConfig.parseRequest(json.replace('\'', '"').getBytes(UTF_8));
  }

  private static void assertError(String json, ErrorCode code, String message) {
    assertThatThrownBy(() -> parse(json))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(code));
  }

  @Test
  void parsesRestRequest() {
    CatalogConfig.Request r = parse("{'catalog_id':'example','config':{'type':'rest',"
        + "'uri':'http://localhost:8181','warehouse':'s3://wh','properties':{'scope':'catalog','header.X-A':'b'}}}");
    assertThat(r.catalogId()).isEqualTo("example");
    assertThat(r.config().type()).isEqualTo(CatalogConfig.Type.REST);
    assertThat(r.config().uri()).isEqualTo("http://localhost:8181");
    assertThat(r.config().warehouse()).isEqualTo("s3://wh");
    assertThat(r.config().properties()).containsExactly(Map.entry("scope", "catalog"), Map.entry("header.X-A", "b"));
  }

  @Test
  void parsesSqlAndEmbedded() {
    CatalogConfig sql = parse("{'catalog_id':'a','config':{'type':'sql','uri':'jdbc:postgresql://db:5432/cat',"
        + "'warehouse':'s3://b/w','properties':{'jdbc.user':'u'}}}").config();
    assertThat(sql).isEqualTo(new CatalogConfig(CatalogConfig.Type.SQL, "jdbc:postgresql://db:5432/cat",
        "s3://b/w", Map.of("jdbc.user", "u")));
    assertThat(parse("{'catalog_id':'b','config':{'type':'embedded'}}").config()).isEqualTo(CatalogConfig.embedded());
  }

  @Test
  void invalidJson() {
    for (String bad : new String[] {"{'catalog_id':", "not json", ""}) {
      assertThatThrownBy(() -> parse(bad))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("invalid JSON: ")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_JSON));
    }
  }

  @Test
  void wrongShapesAreUnprocessableAndNameTheField() {
    ErrorCode u = ErrorCode.UNPROCESSABLE;
    assertError("[1]", u, "request body must be a JSON object");
    assertError("{'config':{'type':'embedded'}}", u, "missing field 'catalog_id'");
    assertError("{'catalog_id':5,'config':{'type':'embedded'}}", u, "field 'catalog_id' must be a string");
    assertError("{'catalog_id':'a'}", u, "missing field 'config'");
    assertError("{'catalog_id':'a','config':'rest'}", u, "field 'config' must be a JSON object");
    assertError("{'catalog_id':'a','config':{'type':'embedded'},'x':1}", u, "unknown field 'x'");
    assertError("{'catalog_id':'a','config':{'type':'embedded','urls':'x'}}", u, "unknown field 'config.urls'");
    assertError("{'catalog_id':'a','config':{}}", u, "missing field 'config.type'");
    assertError("{'catalog_id':'a','config':{'type':'hive'}}", u,
        "config.type: unknown catalog type 'hive' (expected rest, sql or embedded)");
    assertError("{'catalog_id':'a','config':{'type':'rest'}}", u, "missing field 'config.uri': required for type rest");
    assertError("{'catalog_id':'a','config':{'type':'sql','warehouse':'/w'}}", u,
        "missing field 'config.uri': required for type sql");
    assertError("{'catalog_id':'a','config':{'type':'sql','uri':'jdbc:sqlite:/x.db'}}", u,
        "missing field 'config.warehouse': required for type sql");
    assertError("{'catalog_id':'a','config':{'type':'sql','uri':'postgres://x','warehouse':'/w'}}", u,
        "field 'config.uri' must be a JDBC URL (jdbc:...) for type sql");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':'ftp://x'}}", u,
        "field 'config.uri' must be an http or https URL for type rest");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':7}}", u, "field 'config.uri' must be a string");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':'https://u:pw@h/api'}}", u,
        "field 'config.uri' must not contain credentials (user:password@); use the properties credential or token");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':'http://h','properties':{'n':1}}}", u,
        "field 'config.properties.n' must be a string");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':'http://h','properties':[]}}", u,
        "field 'config.properties' must be an object of strings");
    assertError("{'catalog_id':'a','config':{'type':'rest','uri':'http://h','properties':{'uri':'http://o'}}}", u,
        "field 'config.properties.uri' is not allowed: set 'config.uri' instead");
    assertError("{'catalog_id':'a','config':{'type':'embedded','uri':'http://h'}}", u,
        "field 'config.uri' is not allowed for type embedded");
    assertError("{'catalog_id':'a','config':{'type':'embedded','warehouse':'/w'}}", u,
        "field 'config.warehouse' is not allowed for type embedded");
  }

  @Test
  void invalidIdIsInvalidArgument() {
    assertError("{'catalog_id':'Bad!','config':{'type':'embedded'}}", ErrorCode.INVALID_ARGUMENT,
        "invalid catalog id 'Bad!': must match ^[a-z][a-z0-9_-]{0,62}$");
  }

  @Test
  void responseRedactsSecretsAndUriCredentials() {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("credential", "client:s3cret");
    props.put("token", "tok-123");
    props.put("s3.secret-access-key", "AKS");
    props.put("s3.access-key-id", "AKID");
    props.put("header.Authorization", "Bearer x");
    props.put("scope", "catalog");
    CatalogConfig config = new CatalogConfig(CatalogConfig.Type.SQL,
        "jdbc:postgresql://alice:pa55@db.example.com/api?x=1&api_token=zz", "wh", props);

    JsonNode response = config.toResponseJson("example");
    String text = response.toString();
    assertThat(response.get("name").asText()).isEqualTo("catalogs/example");
    assertThat(response.get("config").get("type").asText()).isEqualTo("sql");
    assertThat(response.get("config").get("uri").asText())
        .isEqualTo("jdbc:postgresql://alice:**redacted**@db.example.com/api?x=1&api_token=**redacted**");
    assertThat(response.get("config").get("warehouse").asText()).isEqualTo("wh");
    JsonNode p = response.get("config").get("properties");
    assertThat(p.get("credential").asText()).isEqualTo("**redacted**");
    assertThat(p.get("token").asText()).isEqualTo("**redacted**");
    assertThat(p.get("s3.secret-access-key").asText()).isEqualTo("**redacted**");
    assertThat(p.get("s3.access-key-id").asText()).isEqualTo("**redacted**");
    assertThat(p.get("header.Authorization").asText()).isEqualTo("**redacted**");
    assertThat(p.get("scope").asText()).isEqualTo("catalog");
    for (String secret : new String[] {"s3cret", "tok-123", "AKS", "AKID", "Bearer", "pa55", "zz"}) {
      assertThat(text).doesNotContain(secret);
      assertThat(config.toString()).doesNotContain(secret);
    }
  }

  @Test
  void jdbcUriPasswordsAreRedacted() {
    CatalogConfig config = CatalogConfig.sql("jdbc:postgresql://db/cat?user=u&password=hunter2;ssl=true", "s3://w")
        .withProperties(Map.of("jdbc.password", "hunter3", "jdbc.user", "u"));
    String response = config.toResponseJson("pg").toString();
    assertThat(response).doesNotContain("hunter2").doesNotContain("hunter3")
        .contains("jdbc:postgresql://db/cat?user=u&password=**redacted**;ssl=true")
        .contains("\"jdbc.user\":\"u\"");
    assertThat(CatalogRedaction.text("https://tokenonly@host/x")).isEqualTo("https://**redacted**@host/x");
  }

  @Test
  void storedFormIsUnredactedAndRoundTrips() {
    CatalogConfig config = CatalogConfig.sql("jdbc:postgresql://u:p@h/db", "w")
        .withProperties(Map.of("token", "t"));
    assertThat(CatalogConfig.parse(config.toBytes())).isEqualTo(config);
    assertThat(Json.toString(config.toJson())).contains("\"token\":\"t\"").contains("u:p@");
  }

  @Test
  void nullOptionalFieldsAreAbsent() {
    CatalogConfig c = parse("{'catalog_id':'a','config':{'type':'rest','uri':'http://h','warehouse':null,"
        + "'properties':null}}").config();
    assertThat(c.warehouse()).isNull();
    assertThat(c.properties()).isEmpty();
    assertThat(c.toResponseJson("a").toString())
        .isEqualTo("{\"name\":\"catalogs/a\",\"config\":{\"type\":\"rest\",\"uri\":\"http://h\",\"properties\":{}}}");
  }
}
