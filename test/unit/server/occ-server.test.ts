import { describe, expect, it } from "vitest";
import { VersionedRow } from "../../../src/model/occ/versioned-row.ts";
import { answerRow, matchedVersion } from "../../../src/server/occ-server.ts";

describe("the OCC server's answers", () => {
  it("matches If-Match strongly: the current tag or *, in a list too; weak, stale or malformed tags never", () => {
    expect(matchedVersion('"3"', 3)).toBe(3);
    expect(matchedVersion('"1", "3"', 3)).toBe(3);
    expect(matchedVersion("*", 3)).toBe(3);
    for (const tag of ['W/"3"', '"2"', "3", "", '"3', "garbage"]) expect(matchedVersion(tag, 3), tag).toBeNaN();
  });

  it("GET gives the version and its ETag; PUT lands with the current tag, 412 with a stale one, 428 without", () => {
    const row = new VersionedRow();
    expect(answerRow(row, "GET", undefined)).toMatchObject({ status: 200, headers: { etag: '"0"' }, body: '{"version":0}\n' });
    expect(answerRow(row, "PUT", undefined).status).toBe(428);
    expect(answerRow(row, "PUT", '"0"')).toMatchObject({ status: 200, headers: { etag: '"1"' } });
    expect(answerRow(row, "PUT", '"0"')).toMatchObject({ status: 412, body: '{"error":"stale version","version":1}\n' });
    expect(answerRow(row, "POST", '"1"')).toMatchObject({ status: 405, headers: { allow: "GET, HEAD, PUT" } });
    expect({ version: row.version, reads: row.reads, writes: row.writes, conflicts: row.conflicts }).toEqual({
      version: 1,
      reads: 1,
      writes: 2,
      conflicts: 1,
    });
  });
});
