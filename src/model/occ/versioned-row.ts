/**
 * One row with a version, updated under optimistic concurrency: a write carries the version
 * its writer read and lands only if no other write landed since (HTTP: If-Match against the
 * ETag). The AWS backoff blog's OCC server (aws-samples/aws-arch-backoff-simulator) is this row.
 */
export class VersionedRow {
  private current = 0;
  private readCount = 0;
  private writeCount = 0;
  private conflictCount = 0;

  get version(): number {
    return this.current;
  }

  /** Reads (GETs) answered. */
  get reads(): number {
    return this.readCount;
  }

  /** Writes tried, landed or not: the blog's "calls". */
  get writes(): number {
    return this.writeCount;
  }

  /** Writes refused because another landed since their read (HTTP 412). */
  get conflicts(): number {
    return this.conflictCount;
  }

  read(): number {
    this.readCount++;
    return this.current;
  }

  /** Lands the write if `expectedVersion` is still current; the row's version then grows by one. */
  write(expectedVersion: number): boolean {
    this.writeCount++;
    if (expectedVersion !== this.current) {
      this.conflictCount++;
      return false;
    }
    this.current++;
    return true;
  }
}
