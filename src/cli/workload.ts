import { UsageError } from "./usage-error.ts";

/*
 * -workload picks what ./server, ./client and ./sim run: `requests` (every program's
 * default: the herd of users calling GET /api) or `occ` (the AWS backoff blog's clients
 * contending on one versioned row). Each workload has its own flag table, so the flag is
 * read before either table parses the rest.
 */
export const WORKLOADS = ["requests", "occ"] as const;
export type Workload = (typeof WORKLOADS)[number];

export const WORKLOAD_HELP = "-workload occ: N clients updating one versioned row under optimistic concurrency (-workload occ -h)";

/** The workload an argument list selects, whether it names one, and the arguments without `-workload requests`. */
export function selectWorkload(argv: readonly string[]): {
  readonly workload: Workload;
  readonly given: boolean;
  readonly args: readonly string[];
} {
  let workload: Workload = "requests";
  let given = false;
  const args: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const match = /^--?workload(?:=(.*))?$/.exec(arg);
    if (match === null) {
      args.push(arg);
      continue;
    }
    const value = match[1] ?? argv[++index];
    if (value === undefined) throw new UsageError("flag needs an argument: -workload");
    if (!(WORKLOADS as readonly string[]).includes(value))
      throw new UsageError(`invalid value "${value}" for flag -workload: must be one of ${WORKLOADS.join(", ")}`);
    workload = value as Workload;
    given = true;
    if (workload === "occ") args.push("-workload", value);
  }
  return { workload, given, args };
}

/** The -workload flag in the occ workload's own tables, so that its help shows it. */
export const OCC_WORKLOAD_FLAG = {
  name: "workload",
  group: "run",
  kind: "string",
  default: "occ",
  choices: ["occ"],
  description: "the workload: occ here; requests (the default, without this flag) is the herd calling GET /api",
} as const;
