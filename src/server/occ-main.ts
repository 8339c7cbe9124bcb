import { seededRandom } from "../backoff/random.ts";
import { formatDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { formatListenAddress, parseListenAddress, type ListenAddress } from "../cli/listen-address.ts";
import { OCC_WORKLOAD_FLAG } from "../cli/workload.ts";
import { realClock } from "../clock/real-clock.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { NETWORK_DELAY_FLAGS } from "../strategies/occ-flags.ts";
import { OCC_PATH, startOccServer } from "./occ-server.ts";
import { SERVER_FLAGS } from "../options/server.ts";

const serverFlag = <Name extends (typeof SERVER_FLAGS)[number]["name"]>(name: Name) =>
  SERVER_FLAGS.find((flag) => flag.name === name) as Extract<(typeof SERVER_FLAGS)[number], { name: Name }>;

const OCC_SERVER_FLAGS = [
  OCC_WORKLOAD_FLAG,
  serverFlag("listen"),
  // On the real server the network is the real one (loopback) unless a delay is asked for.
  ...NETWORK_DELAY_FLAGS.map((flag) => ({ ...flag, default: 0 })),
  { ...serverFlag("seed"), description: "random seed of the network delay draws (default: random, printed at start)" },
  serverFlag("headers-timeout"),
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

const OCC_SERVER_PROGRAM: ProgramDescription<typeof OCC_SERVER_FLAGS> = {
  name: "server -workload occ",
  summary:
    `One versioned row under optimistic concurrency, the AWS backoff blog's OCC server, at ${OCC_PATH}:\n` +
    "GET answers {version} with an ETag; PUT with If-Match answers 200 (and the new ETag) when the tag is current,\n" +
    "412 when another write landed since, 428 without If-Match. GET /stats gives the row's counts.\n" +
    "-net-delay adds the blog's network on the server's side: one draw before the row sees a request, one before the answer leaves.",
  flags: OCC_SERVER_FLAGS,
};

export async function occServerMain(argv: readonly string[], io: ProgramIo): Promise<void> {
  const parsed = parseFlags(OCC_SERVER_PROGRAM, argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const values = parsed.values;
  const seed = values.seed ?? randomSeed();
  const network = { meanMs: values["net-delay"], sdMs: values["net-delay-sd"] };
  const server = await startOccServer(
    { listen: parseListenAddress(values.listen) as ListenAddress, network, headersTimeoutMs: values["headers-timeout"] },
    realClock,
    seededRandom(seed),
    (message) => io.stderr.write(`server: ${message}\n`),
  );
  const everywhere = server.address.host === undefined;
  const shown = formatListenAddress(everywhere ? { ...server.address, host: "localhost" } : server.address);
  const delay =
    network.meanMs === 0 && network.sdMs === 0
      ? "no added network delay"
      : `network delay |normal(${formatDuration(network.meanMs)}, ${formatDuration(network.sdMs)})| each way, seed ${seed}`;
  io.stderr.write(`server: listening on http://${shown}${OCC_PATH} (workload occ, ${delay}, pid ${process.pid})\n`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const row = server.row;
    io.stderr.write(
      `server: ${signal}: stopped; version ${row.version}, reads ${row.reads}, writes ${row.writes}, conflicts ${row.conflicts}\n`,
    );
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
