import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ChildProgram } from "../../src/runtime/child-program.ts";
import { freePort } from "./ports.ts";

/**
 * Real services from Debian's packages that differ past saturation (docs/real-services.md): each
 * in front of or as test/fixtures/sleeper/app.py, each on free loopback ports, each program in its
 * own process group with its files in a fresh directory; `stop` ends them and removes it.
 */
export interface ZooService {
  readonly url: string;
  /** The programs and versions, as they said them. */
  readonly versions: readonly string[];
  stop(): Promise<void>;
}

/** The same service as one shell command (demo -target-cmd): its programs in one process group, the front in the foreground. */
export interface ZooCommand {
  readonly url: string;
  readonly command: string;
  readonly versions: readonly string[];
}

export interface ZooEntry {
  readonly name: string;
  /** What it is, and what its documentation says it does with excess work. */
  readonly setup: string;
  /** The Debian packages it needs. */
  readonly packages: readonly string[];
  /** Starts it, each program in a process group of its own, on free loopback ports. */
  start(): Promise<ZooService>;
  /** Writes its files into `dir` (which the caller removes) and says the command that runs it on free loopback ports. */
  command(dir: string): Promise<ZooCommand>;
}

/** One program of a service: what runs, and the loopback port where it is ready. */
interface ProgramSpec {
  readonly name: string;
  readonly path: string;
  readonly args: readonly string[];
  readonly port: number;
}

/** A service's programs, the back first (each waits for the one before it), and what they are. */
interface Layout {
  readonly programs: readonly ProgramSpec[];
  readonly versions: readonly string[];
}

const APP_DIR = resolve(import.meta.dirname, "../fixtures/sleeper");
/** Every sleeper's request: 50 ms in its worker. */
const SLEEP_MS = 50;

export const ZOO: readonly ZooEntry[] = [
  zooEntry({
    name: "gunicorn-sync",
    setup: "gunicorn, 4 sync workers of 50 ms, as it comes: a worker accepts only when free, so the queue is the listen backlog (2048)",
    packages: ["gunicorn", "python3-gunicorn"],
    layout: async () => gunicorn(["-w", "4", "-k", "sync"]),
  }),
  zooEntry({
    name: "gunicorn-sync-backlog-16",
    setup: "the same with --backlog 16: past 4 + 17 held, the kernel drops the SYN (tcp_abort_on_overflow 0)",
    packages: ["gunicorn", "python3-gunicorn"],
    layout: async () => gunicorn(["-w", "4", "-k", "sync", "--backlog", "16"]),
  }),
  zooEntry({
    name: "gunicorn-gthread",
    setup: "gunicorn, 1 gthread worker of 4 threads: it accepts eagerly and queues in its own process (up to --worker-connections, 1000)",
    packages: ["gunicorn", "python3-gunicorn"],
    layout: async () => gunicorn(["-w", "1", "-k", "gthread", "--threads", "4"]),
  }),
  zooEntry({
    name: "nginx-limit-conn",
    setup: "nginx in front of gunicorn-sync with limit_conn 8 per address: the ninth connection in service is answered 503 at once",
    packages: ["nginx-light", "gunicorn", "python3-gunicorn"],
    layout: async (dir) =>
      behind(await gunicorn(["-w", "4", "-k", "sync"]), (upstream) =>
        nginx(dir, upstream, ["limit_conn_zone $binary_remote_addr zone=peraddress:1m;"], ["limit_conn peraddress 8;"]),
      ),
  }),
  zooEntry({
    name: "haproxy-maxconn-queue",
    setup:
      "haproxy in front of gunicorn-sync: maxconn 4 to the server, a request waits in haproxy's queue at most timeout queue 500 ms, then 503",
    packages: ["haproxy", "gunicorn", "python3-gunicorn"],
    layout: async (dir) => behind(await gunicorn(["-w", "4", "-k", "sync"]), (upstream) => haproxy(dir, upstream)),
  }),
  zooEntry({
    name: "apache2-prefork",
    setup:
      "apache2 prefork as a reverse proxy to gunicorn (16 workers): MaxRequestWorkers 4, ListenBacklog 16, so past 4 + 17 the SYN is dropped",
    packages: ["apache2", "gunicorn", "python3-gunicorn"],
    layout: async (dir) => behind(await gunicorn(["-w", "16", "-k", "sync"]), (upstream) => apache(dir, upstream)),
  }),
];

function zooEntry(entry: { name: string; setup: string; packages: string[]; layout: (dir: string) => Promise<Layout> }): ZooEntry {
  const { layout, ...about } = entry;
  return {
    ...about,
    start: async () => {
      const dir = mkdtempSync(join(tmpdir(), "thundering-herd-zoo-"));
      const started: ChildProgram[] = [];
      const stop = async () => {
        // The front first: it stops sending to the back.
        for (const program of [...started].reverse()) await program.stop();
        rmSync(dir, { recursive: true, force: true });
      };
      try {
        const { programs, versions } = await layout(dir);
        for (const spec of programs) {
          const program = new ChildProgram(spec.name, spec.path, spec.args);
          started.push(program);
          await waitForPort(spec.port, program);
        }
        return { url: urlOf(programs), versions, stop };
      } catch (error) {
        await stop();
        throw error;
      }
    },
    command: async (dir) => {
      const { programs, versions } = await layout(dir);
      // Bash for /dev/tcp: each program behind waits until the one before it accepts, so the first request at rest is served.
      const lines = programs.map((spec, index) =>
        index === programs.length - 1
          ? `exec ${shellWords([spec.path, ...spec.args])}`
          : `${shellWords([spec.path, ...spec.args])} &\nuntil (exec 3<>/dev/tcp/127.0.0.1/${spec.port}) 2>/dev/null; do sleep 0.05; done`,
      );
      const script = writeConf(dir, "run.sh", ["#!/bin/bash", ...lines, ""]);
      return { url: urlOf(programs), command: `exec /bin/bash ${script}`, versions };
    },
  };
}

/** The front's URL: the last program's port. */
function urlOf(programs: readonly ProgramSpec[]): string {
  return `http://127.0.0.1:${programs.at(-1)!.port}/`;
}

/** A front in front of `upstream`'s programs. */
async function behind(upstream: Layout, front: (upstreamUrl: string) => Promise<Layout>): Promise<Layout> {
  const served = await front(urlOf(upstream.programs));
  return { programs: [...upstream.programs, ...served.programs], versions: [...served.versions, ...upstream.versions] };
}

function shellWords(words: readonly string[]): string {
  return words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(" ");
}

async function gunicorn(args: readonly string[]): Promise<Layout> {
  const port = await freePort();
  return {
    programs: [
      {
        name: "gunicorn",
        path: "/usr/bin/python3",
        args: ["-m", "gunicorn", "-b", `127.0.0.1:${port}`, "-e", `SLEEP_MS=${SLEEP_MS}`, "--chdir", APP_DIR, ...args, "app:application"],
        port,
      },
    ],
    versions: [versionOf("gunicorn", "/usr/bin/python3", ["-m", "gunicorn", "--version"], /version (\S+?)\)/)],
  };
}

async function nginx(dir: string, upstreamUrl: string, httpLines: readonly string[], locationLines: readonly string[]): Promise<Layout> {
  const port = await freePort();
  const conf = writeConf(dir, "nginx.conf", [
    "daemon off;",
    "worker_processes 1;",
    `pid ${join(dir, "nginx.pid")};`,
    "error_log stderr notice;",
    "events { worker_connections 4096; }",
    "http {",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`),
    ...httpLines.map((line) => `  ${line}`),
    `  server { listen 127.0.0.1:${port}; location / { ${locationLines.join(" ")} proxy_pass ${upstreamUrl}; } }`,
    "}",
  ]);
  return {
    programs: [{ name: "nginx", path: "/usr/sbin/nginx", args: ["-p", dir, "-c", conf, "-e", "stderr"], port }],
    versions: [versionOf("nginx", "/usr/sbin/nginx", ["-v"], /nginx\/(\S+)/)],
  };
}

async function haproxy(dir: string, upstreamUrl: string): Promise<Layout> {
  const port = await freePort();
  const conf = writeConf(dir, "haproxy.cfg", [
    "global",
    "  maxconn 4000",
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 30s",
    "  timeout server 30s",
    "  timeout queue 500ms",
    "frontend users",
    `  bind 127.0.0.1:${port}`,
    "  default_backend service",
    "backend service",
    `  server sleeper ${new URL(upstreamUrl).host} maxconn 4`,
    "",
  ]);
  return {
    programs: [{ name: "haproxy", path: "/usr/sbin/haproxy", args: ["-db", "-f", conf], port }],
    versions: [versionOf("haproxy", "/usr/sbin/haproxy", ["-v"], /version (\S+)/i)],
  };
}

async function apache(dir: string, upstreamUrl: string): Promise<Layout> {
  const port = await freePort();
  const modules = ["mpm_prefork", "proxy", "proxy_http", "authz_core"];
  const conf = writeConf(dir, "apache2.conf", [
    `ServerRoot ${dir}`,
    `DefaultRuntimeDir ${dir}`,
    `PidFile ${join(dir, "apache2.pid")}`,
    `ErrorLog ${join(dir, "error.log")}`,
    "LogLevel warn",
    "ServerName localhost",
    ...modules.map((name) => `LoadModule ${name}_module /usr/lib/apache2/modules/mod_${name}.so`),
    "User www-data",
    "Group www-data",
    `Listen 127.0.0.1:${port}`,
    "ListenBacklog 16",
    "StartServers 4",
    "MinSpareServers 4",
    "MaxSpareServers 4",
    "ServerLimit 4",
    "MaxRequestWorkers 4",
    "KeepAlive Off",
    `ProxyPass / ${upstreamUrl}`,
    "",
  ]);
  return {
    programs: [{ name: "apache2", path: "/usr/sbin/apache2", args: ["-f", conf, "-DFOREGROUND"], port }],
    versions: [versionOf("apache2", "/usr/sbin/apache2", ["-v"], /Apache\/(\S+)/)],
  };
}

/** A file of the service's in `dir` (a program's configuration, the command's script): writes its lines, returns its path. */
function writeConf(dir: string, name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n"));
  return path;
}

/** "<program> <version>", the version read from what `command args` prints; "(unknown)" where it says none. */
function versionOf(program: string, command: string, args: readonly string[], version: RegExp): string {
  return `${program} ${version.exec(spawnText(command, args))?.[1] ?? "(unknown)"}`;
}

function spawnText(command: string, args: readonly string[]): string {
  const done = spawnSync(command, args, { encoding: "utf8" });
  return `${done.stdout}${done.stderr}`;
}

/** Waits until `port` accepts a connection, or the program exits first. */
async function waitForPort(port: number, program: ChildProgram): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (!program.running) throw new Error(`${program.name} exited before listening on ${port}${program.said()}`);
    const up = await new Promise<boolean>((done) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        done(true);
      });
      socket.once("error", () => done(false));
    });
    if (up) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`${program.name} did not listen on ${port} within 10 s${program.said()}`);
}
