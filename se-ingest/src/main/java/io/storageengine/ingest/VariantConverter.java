package io.storageengine.ingest;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.VariantValues;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Converts a column into a variant column: the table's Arrow layout is the
 * {@value IcebergArrowSchemas#VARIANT_EXTENSION} struct of metadata and value buffers (see
 * {@link IcebergArrowSchemas}). Two incoming forms are accepted:
 *
 * <ul>
 *   <li>the encoded form: a struct of {@code metadata} and {@code value} (binary, large binary
 *       or binary view), with or without the extension name; every value is checked
 *       ({@link VariantValues#check}) so a batch that reconciliation could not publish is never
 *       acknowledged;
 *   <li>JSON text (utf8, large utf8, utf8 view): each value is parsed and encoded.
 * </ul>
 *
 * <p>Either way a bad value is INVALID_ARGUMENT naming the column and the row.
 */
final class VariantConverter extends ColumnConverter {
  /** Spec version 1, an empty dictionary. */
  private static final byte[] EMPTY_METADATA = {1, 0, 0};
  /** The variant null. */
  private static final byte[] NULL_VALUE = {0};
  private final boolean json;
  /** Encoded form: the indexes of the incoming metadata and value children. */
  private final int metadataIndex;
  private final int valueIndex;
  /** Encoded form with the table's layout already (plain binary children in the table's order). */
  private final boolean identity;

  private VariantConverter(String path, Field target, boolean json, int metadataIndex, int valueIndex,
      boolean identity) {
    super(path, target);
    this.json = json;
    this.metadataIndex = metadataIndex;
    this.valueIndex = valueIndex;
    this.identity = identity;
  }

  /** The converter for {@code source} into a variant column, or null when its type cannot be one. */
  static ColumnConverter create(String path, Field source, Field target) {
    ArrowType t = source.getType();
    if (t instanceof ArrowType.Utf8 || t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.Utf8View) {
      return new VariantConverter(path, target, true, -1, -1, false);
    }
    if (!(t instanceof ArrowType.Struct)) {
      return null;
    }
    List<Field> children = source.getChildren();
    int metadata = -1;
    int value = -1;
    for (int i = 0; i < children.size(); i++) {
      Field child = children.get(i);
      if (child.getName().equals(IcebergArrowSchemas.VARIANT_METADATA)) {
        metadata = i;
      } else if (child.getName().equals(IcebergArrowSchemas.VARIANT_VALUE)) {
        value = i;
      } else {
        // typed_value (a shredded variant) or anything else: not the unshredded encoding.
        throw SeException.invalid("column `%s`: a variant struct has only the fields metadata and value, "
            + "got field `%s`", path, child.getName());
      }
    }
    if (metadata < 0 || value < 0) {
      throw SeException.invalid("column `%s`: a variant struct needs the binary fields metadata and value", path);
    }
    for (int i : new int[] {metadata, value}) {
      ArrowType ct = children.get(i).getType();
      if (!(ct instanceof ArrowType.Binary || ct instanceof ArrowType.LargeBinary || ct instanceof ArrowType.BinaryView)) {
        throw SeException.invalid("column `%s.%s`: expected binary, got %s", path, children.get(i).getName(),
            ArrowTypeNames.arrow(ct));
      }
    }
    boolean same = metadata == 0 && value == 1
        && children.get(0).getType() instanceof ArrowType.Binary && children.get(1).getType() instanceof ArrowType.Binary;
    return new VariantConverter(path, target, false, metadata, value, same);
  }

  @Override
  boolean identity() {
    return identity;
  }

  @Override
  FieldVector convert(FieldVector source, BufferAllocator allocator) {
    int rows = source.getValueCount();
    if (!json) {
      StructVector in = (StructVector) source;
      VariableWidthFieldVector metadata = (VariableWidthFieldVector) in.getChildByOrdinal(metadataIndex);
      VariableWidthFieldVector value = (VariableWidthFieldVector) in.getChildByOrdinal(valueIndex);
      for (int row = 0; row < rows; row++) {
        if (in.isNull(row)) {
          continue;
        }
        if (metadata.isNull(row) || value.isNull(row)) {
          throw SeException.invalid("column `%s`: null %s at row %d of a variant", path,
              metadata.isNull(row) ? IcebergArrowSchemas.VARIANT_METADATA : IcebergArrowSchemas.VARIANT_VALUE, row);
        }
        try {
          VariantValues.check(metadata.get(row), value.get(row));
        } catch (IllegalArgumentException e) {
          throw SeException.invalid("column `%s`: invalid variant at row %d: %s", path, row, e.getMessage());
        }
      }
      if (identity && in.getNullCount() == 0) {
        return source;
      }
      return build(allocator, rows, row -> in.isNull(row) ? null
          : new VariantValues.Encoded(metadata.get(row), value.get(row)));
    }
    VariableWidthFieldVector text = (VariableWidthFieldVector) source;
    return build(allocator, rows, row -> {
      if (text.isNull(row)) {
        return null;
      }
      try {
        return VariantValues.fromJson(new String(text.get(row), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw SeException.invalid("column `%s`: invalid JSON at row %d: %s", path, row, e.getMessage());
      }
    });
  }

  private interface RowValue {
    /** The encoded variant of the row, null for a null row. */
    VariantValues.Encoded at(int row);
  }

  private FieldVector build(BufferAllocator allocator, int rows, RowValue values) {
    StructVector out = (StructVector) target.createVector(allocator);
    try {
      out.setInitialCapacity(rows);
      out.allocateNew();
      VarBinaryVector metadata = (VarBinaryVector) out.getChildByOrdinal(0);
      VarBinaryVector value = (VarBinaryVector) out.getChildByOrdinal(1);
      for (int row = 0; row < rows; row++) {
        VariantValues.Encoded encoded = values.at(row);
        if (encoded == null) {
          out.setNull(row);
          // Required children: a well-formed variant null under a null slot, so that no reader
          // decoding the slot anyway meets garbage.
          metadata.setSafe(row, EMPTY_METADATA);
          value.setSafe(row, NULL_VALUE);
        } else {
          out.setIndexDefined(row);
          metadata.setSafe(row, encoded.metadata());
          value.setSafe(row, encoded.value());
        }
      }
      metadata.setValueCount(rows);
      value.setValueCount(rows);
      out.setValueCount(rows);
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }
}
