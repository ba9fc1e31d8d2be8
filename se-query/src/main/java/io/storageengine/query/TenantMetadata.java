package io.storageengine.query;

import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/** Lists what a tenant catalog holds, with namespaces named as in SQL (dot-separated). */
final class TenantMetadata {
  private TenantMetadata() {}

  /** Every namespace of {@code catalog}, nested ones included, sorted by SQL name. */
  static List<Namespace> namespaces(Catalog catalog) {
    List<Namespace> out = new ArrayList<>();
    if (catalog instanceof SupportsNamespaces namespaces) {
      collect(namespaces, Namespace.empty(), out);
    }
    out.sort(Comparator.comparing(TenantMetadata::schemaName));
    return out;
  }

  private static void collect(SupportsNamespaces catalog, Namespace parent, List<Namespace> out) {
    for (Namespace child : catalog.listNamespaces(parent)) {
      out.add(child);
      collect(catalog, child, out);
    }
  }

  /** Every table of {@code catalog} in the given namespaces, sorted. */
  static List<TableIdentifier> tables(Catalog catalog, List<Namespace> namespaces) {
    List<TableIdentifier> out = new ArrayList<>();
    for (Namespace namespace : namespaces) {
      out.addAll(catalog.listTables(namespace));
    }
    out.sort(Comparator.comparing((TableIdentifier id) -> schemaName(id.namespace())).thenComparing(TableIdentifier::name));
    return out;
  }

  /** The SQL schema name of a namespace: its levels joined by dots. */
  static String schemaName(Namespace namespace) {
    return String.join(".", namespace.levels());
  }

  /** The namespace a SQL schema name stands for. */
  static Namespace namespace(String schemaName) {
    return Namespace.of(schemaName.split("\\.", -1));
  }

  /** How a table is written in SQL, for messages. */
  static String displayName(TableIdentifier id) {
    return StatementAnalyzer.CATALOG + "." + SqlQuoting.identifier(schemaName(id.namespace())) + "." + SqlQuoting.identifier(id.name());
  }

  /**
   * Matches a SQL LIKE pattern ({@code %} any run, {@code _} one character) as Flight SQL filter
   * patterns are defined; a null pattern matches everything.
   */
  static boolean matchesPattern(String value, String pattern) {
    if (pattern == null) {
      return true;
    }
    StringBuilder regex = new StringBuilder();
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c == '\\' && i + 1 < pattern.length()) {
        regex.append(java.util.regex.Pattern.quote(String.valueOf(pattern.charAt(++i))));
      } else if (c == '%') {
        regex.append(".*");
      } else if (c == '_') {
        regex.append('.');
      } else {
        regex.append(java.util.regex.Pattern.quote(String.valueOf(c)));
      }
    }
    return value.matches("(?s)" + regex);
  }
}
