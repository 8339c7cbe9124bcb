import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";
import { partOf } from "../../../src/client/shard.ts";
import { parseServerArgs } from "../../../src/options/server.ts";

/*
 * The Kubernetes manifests are checked where they tie together: labels and selectors,
 * ports, the image, the Job's indices and the shard each pod runs. No cluster is needed:
 * the pods' shell wrappers are run with sh, the program replaced by printf, and the
 * arguments they would pass are read with the programs' own flag parsers.
 */

const DIR = resolve(import.meta.dirname, "../../../deploy/kubernetes");
const PROGRAM = "node /app/dist/bin/thundering-herd.js";

interface Container {
  name: string;
  image: string;
  command: string[];
  args: string[];
  env?: { name: string; value: string }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: unknown;
  readinessProbe?: unknown;
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; restartPolicy?: string };
}
type Manifest =
  | {
      kind: "Deployment";
      metadata: { name: string };
      spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate };
    }
  | {
      kind: "Service";
      metadata: { name: string };
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: string | number }[] };
    }
  | {
      kind: "Job";
      metadata: { name: string };
      spec: { completionMode: string; completions: number; parallelism: number; template: PodTemplate };
    };

const manifests = readdirSync(DIR)
  .filter((name) => name.endsWith(".yaml"))
  .flatMap((name) => loadAll(readFileSync(join(DIR, name), "utf8")) as Manifest[]);
const find = <K extends Manifest["kind"]>(kind: K) => {
  const found = manifests.filter((manifest): manifest is Extract<Manifest, { kind: K }> => manifest.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};
const contains = (labels: Record<string, string>, selector: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);
const envOf = (container: Container) => Object.fromEntries((container.env ?? []).map(({ name, value }) => [name, value]));

/** The arguments a wrapper script passes to the program, with `env` set: the program replaced by printf. */
function argumentsOf(script: string, env: Record<string, string>): string[] {
  expect(script).toContain(PROGRAM);
  const printed = execFileSync("sh", ["-c", script.replace(`exec ${PROGRAM}`, "printf '%s\\n'")], {
    env: { PATH: process.env.PATH, ...env },
    encoding: "utf8",
  });
  return printed.split("\n").slice(0, -1);
}

describe("deploy/kubernetes", () => {
  const deployment = find("Deployment");
  const service = find("Service");
  const job = find("Job");
  const server = deployment.spec.template.spec.containers[0]!;
  const client = job.spec.template.spec.containers[0]!;

  it("ties the Service to the server's pods only, on the port the server listens on", () => {
    const podLabels = deployment.spec.template.metadata.labels;
    expect(contains(podLabels, deployment.spec.selector.matchLabels)).toBe(true);
    expect(contains(podLabels, service.spec.selector)).toBe(true);
    expect(contains(job.spec.template.metadata.labels, service.spec.selector)).toBe(false);
    const [port] = service.spec.ports;
    const containerPort = server.ports!.find(
      (candidate) => candidate.name === port!.targetPort || candidate.containerPort === port!.targetPort,
    );
    expect(containerPort, "the Service's targetPort names a container port").toBeDefined();
    // The server's own flags, read by its parser, listen on that port on every interface.
    const line = server.args[0]!.split("\n").find((text) => text.includes(PROGRAM))!;
    const argv = line.replace(PROGRAM, "").replace(/&\s*$/, "").trim().split(/\s+/);
    expect(argv[0]).toBe("server");
    const parsed = parseServerArgs(argv.slice(1));
    expect(parsed.kind === "run" && parsed.values.listen).toBe(`:${containerPort!.containerPort}`);
    expect(parsed.kind === "run" && parsed.values.json).toBe(true);
    // A probe would take a stopped server out of the Service or restart it.
    expect(server.livenessProbe).toBeUndefined();
    expect(server.readinessProbe).toBeUndefined();
  });

  it("runs one image, the one the Dockerfile builds, at the path the package's bin has", () => {
    expect(client.image).toBe(server.image);
    const dockerfile = readFileSync(join(DIR, "Dockerfile"), "utf8");
    expect(dockerfile).toContain('ENTRYPOINT ["node", "/app/dist/bin/thundering-herd.js"]');
    const bin = (JSON.parse(readFileSync(resolve(DIR, "../../package.json"), "utf8")) as { bin: Record<string, string> }).bin;
    expect(`/app/${bin["thundering-herd"]}`).toBe(PROGRAM.replace("node ", ""));
  });

  it("points every client at the Service", () => {
    const env = envOf(client);
    expect(env.SERVER_URL).toBe(`http://${service.metadata.name}:${service.spec.ports[0]!.port}/api`);
  });

  it("gives each of the Job's indices one shard, all of them together every user once", () => {
    expect(job.spec.completionMode).toBe("Indexed");
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    const env = envOf(client);
    const shards = Number(env.SHARDS);
    expect(job.spec.completions).toBe(shards);
    expect(job.spec.parallelism).toBe(shards);
    const covered: number[] = [];
    for (let index = 0; index < job.spec.completions; index++) {
      const argv = argumentsOf(client.args[0]!, { ...env, JOB_COMPLETION_INDEX: String(index) });
      expect(argv[0]).toBe("client");
      const parsed = parseClientArgs(argv.slice(1));
      if (parsed.kind !== "run") throw new Error("help?");
      const options = resolveClientOptions(parsed.values);
      expect(options.shard).toEqual({ index, count: shards });
      expect(options.clients).toBe(Number(env.CLIENTS));
      expect(options.json).toBe(true);
      expect(options.startAtEpochMs).toBe(0);
      const range = partOf({ firstUser: 0, users: options.clients }, index, shards);
      covered.push(...Array.from({ length: range.users }, (_, offset) => range.firstUser + offset));
    }
    expect(covered).toEqual(Array.from({ length: Number(env.CLIENTS) }, (_, user) => user));
  });
});
