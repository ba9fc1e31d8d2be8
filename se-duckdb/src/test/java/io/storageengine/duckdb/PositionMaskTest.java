package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PositionMaskTest {
  @Test
  void aBitmapHasOneBitPerPositionUpToTheLastDeleted() {
    assertThat(PositionMask.of(new long[] {0, 7, 8, 15})).containsExactly((byte) 0x81, (byte) 0x81);
    assertThat(PositionMask.of(new long[] {9})).containsExactly((byte) 0x00, (byte) 0x40);
    assertThat(PositionMask.of(new long[0])).isEmpty();
  }

  @Test
  void aPositionDuckDbCannotAddressIsRefusedNamingIt() {
    assertThatThrownBy(() -> PositionMask.of(new long[] {PositionMask.MAX_POSITION}))
        .isInstanceOf(SeException.class).hasMessageContaining("position " + PositionMask.MAX_POSITION);
    assertThatThrownBy(() -> PositionMask.of(new long[] {-1, 3})).isInstanceOf(SeException.class)
        .hasMessageContaining("position -1");
  }

  /** DuckDB reads bit {@code p} of the bitmap cast to BIT as row {@code p}'s. */
  @Test
  void duckDbsGetBitReadsEveryPositionAsSet() throws Exception {
    long[] positions = {0, 5, 8, 13, 4095, 4096};
    byte[] mask = PositionMask.of(positions);
    List<Long> set = new ArrayList<>();
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
        PreparedStatement statement = connection.prepareStatement("SELECT p FROM range(0, 5000) r(p)"
            + " WHERE p < 8 * octet_length(?::BLOB) AND get_bit(CAST(?::BLOB AS BIT), CAST(p AS INTEGER)) = 1"
            + " ORDER BY p")) {
      statement.setBytes(1, mask);
      statement.setBytes(2, mask);
      try (ResultSet rs = statement.executeQuery()) {
        while (rs.next()) {
          set.add(rs.getLong(1));
        }
      }
    }
    assertThat(set).containsExactly(0L, 5L, 8L, 13L, 4095L, 4096L);
  }
}
