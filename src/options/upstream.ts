import { type FlagSpec, type FlagValues, flagsNamed, prefixFlags, unprefixedValues, withPrefixedNames } from "../cli/flags.ts";
import { formatListenAddress, type ListenAddress } from "../cli/listen-address.ts";
import { redactUrl } from "../cli/redact-url.ts";
import { UsageError } from "../cli/usage-error.ts";
import { checkUrl } from "../cli/url.ts";
import { MAX_BODY_FLAG } from "../runtime/http-body.ts";
import { LOAD_CONFIG_FLAGS } from "../config/load.ts";
import { RETRY_POLICY_FLAGS, resolveRetryPolicy, type RetryPolicyOptions } from "../config/load.ts";
import { MIDDLE_TIER_MODELS, middleTierOf, type ServerModelSpec } from "../model/servers/models.ts";

/*
 * A middle tier's flags: ./server -upstream URL serves each request by calling URL, with the
 * client's retry-policy flags under the prefix upstream- (-upstream-max-attempts 3,
 * -upstream-budget yandex, …), generated from the client's one table.
 */

const PREFIX = "upstream-";
/** The most calls one request may fan out to. */
export const MAX_UPSTREAM_CALLS = 64;

function upstreamUrlsProblem(text: string): string | undefined {
  if (text === "") return undefined;
  const urls = text.split(",");
  if (urls.length > MAX_UPSTREAM_CALLS) return `at most ${MAX_UPSTREAM_CALLS} URLs`;
  for (const url of urls.map((each) => each.trim())) {
    const problem = checkUrl(url);
    if (problem !== undefined) return `"${redactUrl(url)}": ${problem}`;
  }
  return undefined;
}

type Loopback = "v4" | "v6";

/** The loopback a URL's hostname reaches (localhost: whichever it resolves to; the any-address: the loopback). */
const REACHES: Readonly<Record<string, readonly Loopback[]>> = {
  localhost: ["v4", "v6"],
  "127.0.0.1": ["v4"],
  "0.0.0.0": ["v4"],
  "[::1]": ["v6"],
  "[::]": ["v6"],
};

/** The loopback a -listen host accepts connections on (none: every interface, both families). */
function accepts(host: string | undefined): readonly Loopback[] {
  if (host === undefined || host === "::" || host === "localhost") return ["v4", "v6"];
  if (host === "0.0.0.0" || host === "127.0.0.1") return ["v4"];
  return host === "::1" ? ["v6"] : [];
}

/**
 * The URL of this server itself: a middle tier that calls itself answers each request with
 * another request to itself, until its threads run out. Known only for an explicit -listen
 * port (port 0 picks one later): the upstream's port is it, and its host is the one listened
 * on or a loopback the server accepts connections on.
 */
function callsItself(url: URL, listen: ListenAddress): boolean {
  if (listen.port === 0) return false;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  if (port !== listen.port) return false;
  const listenHost = listen.host?.includes(":") === true ? `[${listen.host}]` : listen.host;
  if (listenHost?.toLowerCase() === url.hostname) return true;
  const reached = REACHES[url.hostname] ?? [];
  return accepts(listen.host).some((loopback) => reached.includes(loopback));
}

/** A client flag's description as a middle tier's: the flags it names under their prefix; the strategies' list is ./client -h's. */
function describeUpstreamFlag(description: string): string {
  return `middle tier's calls to -upstream: ${withPrefixedNames(description, RETRY_POLICY_FLAGS, PREFIX).replace("(-h lists", "(./client -h lists")}`;
}

export const UPSTREAM_FLAGS = [
  {
    name: "upstream",
    group: "system",
    kind: "string",
    default: "",
    placeholder: "url[,url…]",
    description:
      "be a middle tier: serve each GET /api by calling this URL (several, comma-separated: call each, a fan-out) with the policy of the " +
      "-upstream-… flags, holding the request's thread meanwhile; 502 when a call fails for good. Needs -model queue (empty: off)",
    check: upstreamUrlsProblem,
  },
  {
    name: "upstream-fanout",
    group: "system",
    kind: "integer",
    default: 1,
    min: 1,
    max: MAX_UPSTREAM_CALLS,
    placeholder: "k",
    description: "middle tier: call each -upstream URL k times per request; the answer is 200 only when every call succeeded",
  },
  ...prefixFlags(RETRY_POLICY_FLAGS, PREFIX, describeUpstreamFlag),
  ...prefixFlags([MAX_BODY_FLAG], PREFIX, describeUpstreamFlag),
] as const satisfies readonly FlagSpec[];

export type UpstreamFlagValues = FlagValues<typeof UPSTREAM_FLAGS>;

/** A middle tier's upstream, as its flags set it. */
export interface UpstreamOptions {
  /** One call per entry: each -upstream URL, -upstream-fanout times. */
  readonly targets: readonly string[];
  readonly policy: RetryPolicyOptions;
  /** An answer's body longer than this fails the call (body-too-large). */
  readonly maxBodyBytes: number;
}

/** The client's default -lambda: the think time the reference policy grows its first wait from, as an open-loop arrival draws it. */
const DEFAULT_LAMBDA = flagsNamed(LOAD_CONFIG_FLAGS, ["lambda"])[0]!.default;

/**
 * The upstream the flags describe, undefined without -upstream; a UsageError, naming the
 * flags as ./server knows them, for an -upstream-… flag without -upstream, for a model other
 * than the queue, or for a policy that means nothing.
 */
export function resolveUpstream(values: UpstreamFlagValues, model: ServerModelSpec, listen: ListenAddress): UpstreamOptions | undefined {
  if (values.upstream === "") {
    const set = UPSTREAM_FLAGS.find((flag) => values[flag.name] !== flag.default);
    if (set !== undefined) throw new UsageError(`-${set.name} applies to a middle tier: give -upstream URL too`);
    return undefined;
  }
  if (middleTierOf(model) === undefined) {
    const models = MIDDLE_TIER_MODELS.map((name) => `-model ${name}`).join(" or ");
    throw new UsageError(`-upstream needs ${models} (a middle tier holds a thread while it calls upstream), not -model ${model.kind}`);
  }
  const urls = values.upstream.split(",").map((url) => url.trim());
  const own = urls.find((url) => callsItself(new URL(url), listen));
  if (own !== undefined) {
    throw new UsageError(
      `-upstream ${redactUrl(own)} is this server's own address (-listen ${formatListenAddress(listen)}): it would call itself`,
    );
  }
  const fanout = values["upstream-fanout"];
  if (urls.length * fanout > MAX_UPSTREAM_CALLS) {
    throw new UsageError(
      `-upstream with -upstream-fanout ${fanout} makes ${urls.length * fanout} calls a request; at most ${MAX_UPSTREAM_CALLS}`,
    );
  }
  const policyValues = unprefixedValues(RETRY_POLICY_FLAGS, PREFIX, values);
  let policy: RetryPolicyOptions;
  try {
    policy = resolveRetryPolicy({ ...policyValues, lambda: DEFAULT_LAMBDA, instances: 1 });
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(withPrefixedNames(error.message, RETRY_POLICY_FLAGS, PREFIX));
    throw error;
  }
  return {
    targets: urls.flatMap((url) => Array.from({ length: fanout }, () => url)),
    policy,
    maxBodyBytes: values[`${PREFIX}max-body`],
  };
}
