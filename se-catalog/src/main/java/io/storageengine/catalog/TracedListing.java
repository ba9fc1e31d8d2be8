package io.storageengine.catalog;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.iceberg.io.FileInfo;

/**
 * The files under a prefix, listed lazily as FileIOs do (S3 fetches pages while the caller
 * iterates). Each iteration is one {@code list} call: its span starts when the iteration does
 * and ends, with {@code io.result_count}, when the iterator reports no more entries or fails.
 * An iteration abandoned midway leaves its span unended (and unreported).
 */
final class TracedListing implements Iterable<FileInfo> {
  private final TracingFileIO io;
  private final String prefix;
  private final Iterable<FileInfo> listing;

  TracedListing(TracingFileIO io, String prefix, Iterable<FileInfo> listing) {
    this.io = io;
    this.prefix = prefix;
    this.listing = listing;
  }

  @Override
  public Iterator<FileInfo> iterator() {
    TableStorageCall call = io.call("list", prefix);
    Iterator<FileInfo> files;
    try {
      files = listing.iterator();
    } catch (RuntimeException | Error e) {
      call.failed(e);
      call.end();
      throw e;
    }
    return new Iterator<>() {
      private long count;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (done) {
          return false;
        }
        try {
          boolean more = files.hasNext();
          if (!more) {
            done = true;
            call.resultCount(count);
            call.end();
          }
          return more;
        } catch (RuntimeException | Error e) {
          fail(e);
          throw e;
        }
      }

      @Override
      public FileInfo next() {
        if (done) {
          throw new NoSuchElementException("listing of " + prefix + " is complete");
        }
        try {
          FileInfo file = files.next();
          count++;
          return file;
        } catch (NoSuchElementException e) {
          throw e; // the caller's mistake, not a storage failure
        } catch (RuntimeException | Error e) {
          fail(e);
          throw e;
        }
      }

      private void fail(Throwable e) {
        done = true;
        call.resultCount(count);
        call.failed(e);
        call.end();
      }
    };
  }
}
