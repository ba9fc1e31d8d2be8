package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.variants.PhysicalType;
import org.apache.iceberg.variants.VariantArray;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantObject;
import org.apache.iceberg.variants.VariantValue;
import org.junit.jupiter.api.Test;

/** JSON encoded by {@link VariantValues} decodes with Iceberg's variant reader, value for value. */
class VariantValuesTest {
  private static VariantValue decode(VariantValues.Encoded encoded) {
    VariantValues.check(encoded.metadata(), encoded.value());
    VariantMetadata metadata = VariantMetadata.from(ByteBuffer.wrap(encoded.metadata()).order(ByteOrder.LITTLE_ENDIAN));
    return VariantValue.from(metadata, ByteBuffer.wrap(encoded.value()).order(ByteOrder.LITTLE_ENDIAN));
  }

  @Test
  void scalarsTakeTheSmallestTypeThatHoldsThem() {
    assertThat(decode(VariantValues.fromJson("null")).type()).isEqualTo(PhysicalType.NULL);
    assertThat(decode(VariantValues.fromJson("true")).asPrimitive().get()).isEqualTo(true);
    assertThat(decode(VariantValues.fromJson("false")).asPrimitive().get()).isEqualTo(false);
    assertThat(decode(VariantValues.fromJson("-128")).type()).isEqualTo(PhysicalType.INT8);
    assertThat(decode(VariantValues.fromJson("300")).asPrimitive().get()).isEqualTo((short) 300);
    assertThat(decode(VariantValues.fromJson("-70000")).asPrimitive().get()).isEqualTo(-70000);
    assertThat(decode(VariantValues.fromJson("9223372036854775807")).asPrimitive().get()).isEqualTo(Long.MAX_VALUE);
    VariantValue big = decode(VariantValues.fromJson("-123456789012345678901234567890"));
    assertThat(big.type()).isEqualTo(PhysicalType.DECIMAL16);
    assertThat(big.asPrimitive().get()).isEqualTo(new BigDecimal("-123456789012345678901234567890"));
    assertThat(decode(VariantValues.fromJson("1" + "0".repeat(40))).type()).isEqualTo(PhysicalType.DOUBLE);
    assertThat(decode(VariantValues.fromJson("2.5e-3")).asPrimitive().get()).isEqualTo(0.0025);
    assertThat(decode(VariantValues.fromJson("\"héllo ✓\"")).asPrimitive().get()).isEqualTo("héllo ✓");
    String longText = "x".repeat(70);
    assertThat(decode(VariantValues.fromJson("\"" + longText + "\"")).asPrimitive().get()).isEqualTo(longText);
  }

  @Test
  void objectsAndArraysOfAnySizeKeepTheirStructure() {
    StringBuilder wide = new StringBuilder("{");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      String key = "k" + i + (i % 7 == 0 ? "é𝄞" : "");
      keys.add(key);
      wide.append(i == 0 ? "" : ",").append('"').append(key).append("\":[").append(i).append(",\"")
          .append("v".repeat(i % 80)).append("\"]");
    }
    wide.append(",\"nested\":{\"a\":{\"b\":[[],{}]}}}");
    VariantObject object = decode(VariantValues.fromJson(wide.toString())).asObject();
    assertThat(object.numFields()).isEqualTo(301);
    for (int i = 0; i < 300; i++) {
      VariantArray pair = object.get(keys.get(i)).asArray();
      assertThat(((Number) pair.get(0).asPrimitive().get()).intValue()).isEqualTo(i);
      assertThat(pair.get(1).asPrimitive().get()).isEqualTo("v".repeat(i % 80));
    }
    VariantArray inner = object.get("nested").asObject().get("a").asObject().get("b").asArray();
    assertThat(inner.get(0).asArray().numElements()).isZero();
    assertThat(inner.get(1).asObject().numFields()).isZero();

    StringBuilder long1 = new StringBuilder("[");
    for (int i = 0; i < 1000; i++) {
      long1.append(i == 0 ? "" : ",").append(i * 1000);
    }
    VariantArray array = decode(VariantValues.fromJson(long1.append(']').toString())).asArray();
    assertThat(array.numElements()).isEqualTo(1000);
    assertThat(((Number) array.get(999).asPrimitive().get()).intValue()).isEqualTo(999_000);
  }

  @Test
  void badJsonAndBadEncodingsAreRefused() {
    for (String bad : List.of("", "{", "{\"a\":1,\"a\":2}", "[1] [2]", "{'a':1}", "nul")) {
      assertThatThrownBy(() -> VariantValues.fromJson(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
    }
    VariantValues.Encoded good = VariantValues.fromJson("{\"a\":[1,2,3]}");
    byte[] cut = java.util.Arrays.copyOf(good.value(), good.value().length - 2);
    assertThatThrownBy(() -> VariantValues.check(good.metadata(), cut)).isInstanceOf(IllegalArgumentException.class);
    byte[] longer = java.util.Arrays.copyOf(good.value(), good.value().length + 1);
    assertThatThrownBy(() -> VariantValues.check(good.metadata(), longer)).hasMessageContaining("bytes after its end");
    assertThatThrownBy(() -> VariantValues.check(new byte[0], good.value())).hasMessage("empty variant metadata");
  }
}
