import { existsSync } from "node:fs";
import { resolve } from "node:path";
import protobuf from "protobufjs";

/*
 * Envoy's API v3 as Envoy publishes it, from the .proto files that @grpc/grpc-js-xds ships (its
 * deps/: envoy-api, xds, googleapis, protoc-gen-validate), read by protobufjs. A configuration
 * (YAML, in proto3's JSON mapping with the proto field names, as Envoy reads it) is checked field
 * by field: names and types, one field per oneof, and the protoc-gen-validate rules the fields
 * carry (required, gt/gte/lte on durations and numbers, min_len, min_items, defined enums).
 * Envoy's own semantic checks beyond those annotations (which retry_on words exist) are not here:
 * no Envoy binary is available (Debian has no envoy package).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const PROTO_DIRS = [
  ...["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((folder) =>
    resolve(ROOT, "node_modules/@grpc/grpc-js-xds/deps", folder),
  ),
  // google/protobuf/descriptor.proto and the other well-known types.
  resolve(ROOT, "node_modules/protobufjs"),
];

let loaded: protobuf.Root | undefined;

/** Envoy's message type by its full name, e.g. envoy.config.route.v3.RouteConfiguration. */
export function envoyType(name: string): protobuf.Type {
  if (loaded === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => PROTO_DIRS.map((dir) => resolve(dir, target)).find((path) => existsSync(path)) ?? target;
    root.loadSync(["envoy/config/route/v3/route.proto", "envoy/config/cluster/v3/cluster.proto"], { keepCase: true });
    root.resolveAll();
    loaded = root;
  }
  return loaded.lookupType(name);
}

type Rules = Record<string, Record<string, unknown>>;

const rulesOf = (field: protobuf.Field): Rules =>
  Object.assign({}, ...((field.parsedOptions ?? []) as Record<string, unknown>[]).map((option) => option["(validate.rules)"] ?? {}));

const DURATION = /^(\d+)(\.\d{1,9})?s$/;
const WRAPPERS: Readonly<Record<string, string>> = {
  "google.protobuf.UInt32Value": "uint32",
  "google.protobuf.UInt64Value": "uint64",
  "google.protobuf.Int32Value": "int32",
  "google.protobuf.Int64Value": "int64",
  "google.protobuf.DoubleValue": "double",
  "google.protobuf.FloatValue": "double",
  "google.protobuf.BoolValue": "bool",
  "google.protobuf.StringValue": "string",
};

/** Where `value` breaks message `type` of Envoy's API: one line per problem, none when it conforms. */
export function envoySchemaErrors(type: protobuf.Type, value: unknown, path = type.name): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: ${type.fullName} must be an object`];
  const object = value as Record<string, unknown>;
  const errors: string[] = [];
  for (const key of Object.keys(object))
    if (type.fields[key] === undefined) errors.push(`${path}.${key}: no such field in ${type.fullName}`);
  for (const oneof of type.oneofsArray) {
    const set = oneof.oneof.filter((name) => object[name] !== undefined);
    if (set.length > 1) errors.push(`${path}: ${set.join(", ")} are one of ${oneof.name}; at most one may be set`);
    if (set.length === 0 && oneof.options?.["(validate.required)"] === true) errors.push(`${path}: one of ${oneof.name} is required`);
  }
  for (const field of type.fieldsArray) {
    const rules = rulesOf(field);
    const fieldValue = object[field.name];
    const required = rules.message?.required === true || rules.duration?.required === true;
    if (fieldValue === undefined) {
      // A rule on a member of a oneof applies only to the member that is set.
      if (required && field.partOf === null) errors.push(`${path}.${field.name}: required`);
      continue;
    }
    const at = `${path}.${field.name}`;
    if (!field.repeated) {
      errors.push(...valueErrors(field, rules, fieldValue, at));
      continue;
    }
    if (!Array.isArray(fieldValue)) {
      errors.push(`${at}: must be a list`);
      continue;
    }
    const minItems = Number(rules.repeated?.min_items ?? 0);
    if (fieldValue.length < minItems) errors.push(`${at}: at least ${minItems} items`);
    fieldValue.forEach((item, index) =>
      errors.push(...valueErrors(field, (rules.repeated?.items ?? {}) as Rules, item, `${at}[${index}]`)),
    );
  }
  return errors;
}

function valueErrors(field: protobuf.Field, rules: Rules, value: unknown, at: string): string[] {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    const known = typeof value === "string" ? value in resolved.values : Object.values(resolved.values).includes(value as number);
    return known ? [] : [`${at}: ${String(value)} is not a value of ${resolved.fullName}`];
  }
  if (resolved instanceof protobuf.Type) {
    const name = resolved.fullName.slice(1);
    if (name === "google.protobuf.Duration") return durationErrors(rules.duration ?? {}, value, at);
    const wrapped = WRAPPERS[name];
    if (wrapped !== undefined) return scalarErrors(wrapped, rules[wrapped] ?? {}, value, at);
    return envoySchemaErrors(resolved, value, at);
  }
  return scalarErrors(field.type, rules[field.type] ?? {}, value, at);
}

function durationErrors(rules: Record<string, unknown>, value: unknown, at: string): string[] {
  const match = typeof value === "string" ? DURATION.exec(value) : null;
  if (match === null) return [`${at}: ${JSON.stringify(value)} is not a duration ("<seconds>s")`];
  const seconds = Number.parseFloat(value as string);
  const bound = (key: string) => {
    const limit = rules[key] as { seconds?: number; nanos?: number } | undefined;
    return limit === undefined ? undefined : Number(limit.seconds ?? 0) + Number(limit.nanos ?? 0) / 1e9;
  };
  return boundErrors(seconds, { gt: bound("gt"), gte: bound("gte"), lt: bound("lt"), lte: bound("lte") }, at);
}

function scalarErrors(kind: string, rules: Record<string, unknown>, value: unknown, at: string): string[] {
  if (kind === "string") {
    if (typeof value !== "string") return [`${at}: must be a string`];
    return value.length < Number(rules.min_len ?? 0) ? [`${at}: at least ${String(rules.min_len)} characters`] : [];
  }
  if (kind === "bool") return typeof value === "boolean" ? [] : [`${at}: must be true or false`];
  if (typeof value !== "number" || !Number.isFinite(value)) return [`${at}: must be a number`];
  if (/int/.test(kind) && !Number.isInteger(value)) return [`${at}: must be an integer`];
  if (/^uint|^fixed/.test(kind) && value < 0) return [`${at}: must not be negative`];
  const limit = (key: string) => (rules[key] === undefined ? undefined : Number(rules[key]));
  return boundErrors(value, { gt: limit("gt"), gte: limit("gte"), lt: limit("lt"), lte: limit("lte") }, at);
}

function boundErrors(value: number, bounds: Record<"gt" | "gte" | "lt" | "lte", number | undefined>, at: string): string[] {
  const errors: string[] = [];
  if (bounds.gt !== undefined && !(value > bounds.gt)) errors.push(`${at}: must be > ${bounds.gt}`);
  if (bounds.gte !== undefined && !(value >= bounds.gte)) errors.push(`${at}: must be >= ${bounds.gte}`);
  if (bounds.lt !== undefined && !(value < bounds.lt)) errors.push(`${at}: must be < ${bounds.lt}`);
  if (bounds.lte !== undefined && !(value <= bounds.lte)) errors.push(`${at}: must be <= ${bounds.lte}`);
  return errors;
}
