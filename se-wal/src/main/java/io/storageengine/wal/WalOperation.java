package io.storageengine.wal;

/** What a frame's rows do to the table. Append tables only ever carry UPSERT (= append). */
public enum WalOperation {
  UPSERT((byte) 1),
  DELETE((byte) 2);

  private final byte code;

  WalOperation(byte code) {
    this.code = code;
  }

  public byte code() {
    return code;
  }

  public static WalOperation fromCode(byte code) {
    for (WalOperation op : values()) {
      if (op.code == code) {
        return op;
      }
    }
    throw new IllegalArgumentException("unknown WAL operation code " + code);
  }
}
