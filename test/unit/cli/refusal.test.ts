import { describe, expect, it } from "vitest";
import { refusalOf, UsageError } from "../../../src/cli/usage-error.ts";

/* A flag's check from its parser: what the parser refuses is the text's fault, anything else a bug. */

class SyntaxRefusal extends Error {}

describe("refusalOf", () => {
  it("gives the message of a refusal of the class named, and undefined for text the parser takes", () => {
    expect(refusalOf(() => 1, UsageError)).toBeUndefined();
    expect(
      refusalOf(() => {
        throw new UsageError("cannot sweep x");
      }, UsageError),
    ).toBe("cannot sweep x");
    expect(
      refusalOf(() => {
        throw new SyntaxRefusal("not kind@start+length");
      }, SyntaxRefusal),
    ).toBe("not kind@start+length");
  });

  it("throws on an error of another class: a bug in the parser is not a usage error", () => {
    const bug = new TypeError("cannot read properties of undefined");
    expect(() =>
      refusalOf(() => {
        throw bug;
      }, UsageError),
    ).toThrow(bug);
    expect(() =>
      refusalOf(() => {
        throw new UsageError("x");
      }, SyntaxRefusal),
    ).toThrow(UsageError);
  });
});
