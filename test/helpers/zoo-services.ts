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

export interface ZooEntry {
  readonly name: string;
  /** What it is, and what its documentation says it does with excess work. */
  readonly setup: string;
  /** The Debian packages it needs. */
  readonly packages: readonly string[];
  start(): Promise<ZooService>;
}

const APP_DIR = resolve(import.meta.dirname, "../fixtures/sleeper");
/** Every sleeper's request: 50 ms in its worker. */
const SLEEP_MS = 50;

export const ZOO: readonly ZooEntry[] = [
  {
    name: "gunicorn-sync",
    setup: "gunicorn, 4 sync workers of 50 ms, as it comes: a worker accepts only when free, so the queue is the listen backlog (2048)",
    packages: ["gunicorn", "python3-gunicorn"],
    start: () => withDir((_dir, started) => gunicorn(["-w", "4", "-k", "sync"], started)),
  },
  {
    name: "gunicorn-sync-backlog-16",
    setup: "the same with --backlog 16: past 4 + 17 held, the kernel drops the SYN (tcp_abort_on_overflow 0)",
    packages: ["gunicorn", "python3-gunicorn"],
    start: () => withDir((_dir, started) => gunicorn(["-w", "4", "-k", "sync", "--backlog", "16"], started)),
  },
  {
    name: "gunicorn-gthread",
    setup: "gunicorn, 1 gthread worker of 4 threads: it accepts eagerly and queues in its own process (up to --worker-connections, 1000)",
    packages: ["gunicorn", "python3-gunicorn"],
    start: () => withDir((_dir, started) => gunicorn(["-w", "1", "-k", "gthread", "--threads", "4"], started)),
  },
  {
    name: "nginx-limit-conn",
    setup: "nginx in front of gunicorn-sync with limit_conn 8 per address: the ninth connection in service is answered 503 at once",
    packages: ["nginx-light", "gunicorn", "python3-gunicorn"],
    start: () =>
      withDir(async (dir, started) => {
        const upstream = await gunicorn(["-w", "4", "-k", "sync"], started);
        return nginx(dir, upstream, ["limit_conn_zone $binary_remote_addr zone=peraddress:1m;"], ["limit_conn peraddress 8;"], started);
      }),
  },
  {
    name: "haproxy-maxconn-queue",
    setup:
      "haproxy in front of gunicorn-sync: maxconn 4 to the server, a request waits in haproxy's queue at most timeout queue 500 ms, then 503",
    packages: ["haproxy", "gunicorn", "python3-gunicorn"],
    start: () =>
      withDir(async (dir, started) => {
        const upstream = await gunicorn(["-w", "4", "-k", "sync"], started);
        return haproxy(dir, upstream, started);
      }),
  },
  {
    name: "apache2-prefork",
    setup:
      "apache2 prefork as a reverse proxy to gunicorn (16 workers): MaxRequestWorkers 4, ListenBacklog 16, so past 4 + 17 the SYN is dropped",
    packages: ["apache2", "gunicorn", "python3-gunicorn"],
    start: () =>
      withDir(async (dir, started) => {
        const upstream = await gunicorn(["-w", "16", "-k", "sync"], started);
        return apache(dir, upstream, started);
      }),
  },
];

/** The programs a service started, each stopped at its end; the first is the one its users call. */
type Started = ChildProgram[];

/** Runs `start` with a fresh directory and a list of programs, both cleaned up by the service's `stop`, or at once if it fails. */
async function withDir(start: (dir: string, started: Started) => Promise<{ url: string; versions: string[] }>): Promise<ZooService> {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-zoo-"));
  const started: Started = [];
  const stop = async () => {
    // The front first: it stops sending to the back.
    for (const program of [...started].reverse()) await program.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    return { ...(await start(dir, started)), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function gunicorn(args: readonly string[], started: Started): Promise<{ url: string; versions: string[] }> {
  const program = new ChildProgram("gunicorn", "/usr/bin/python3", [
    ...["-m", "gunicorn", "-b", "127.0.0.1:0", "-e", `SLEEP_MS=${SLEEP_MS}`, "--chdir", APP_DIR],
    ...args,
    "app:application",
  ]);
  started.unshift(program);
  const listening = await program.waitForLine(/Listening at: http:\/\/127\.0\.0\.1:\d+/, { stream: "stderr", timeoutMs: 30_000 });
  const version = /Starting gunicorn (\S+)/.exec(program.stderr.map((line) => line.text).join("\n"))?.[1];
  return { url: `http://127.0.0.1:${/:(\d+) \(/.exec(listening)![1]}/`, versions: [`gunicorn ${version ?? "(version not printed)"}`] };
}

async function nginx(
  dir: string,
  upstream: { url: string; versions: string[] },
  httpLines: readonly string[],
  locationLines: readonly string[],
  started: Started,
): Promise<{ url: string; versions: string[] }> {
  const port = await freePort();
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    [
      "daemon off;",
      "worker_processes 1;",
      `pid ${join(dir, "nginx.pid")};`,
      "error_log stderr notice;",
      "events { worker_connections 4096; }",
      "http {",
      "  access_log off;",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`),
      ...httpLines.map((line) => `  ${line}`),
      `  server { listen 127.0.0.1:${port}; location / { ${locationLines.join(" ")} proxy_pass ${upstream.url}; } }`,
      "}",
    ].join("\n"),
  );
  const program = new ChildProgram("nginx", "/usr/sbin/nginx", ["-p", dir, "-c", conf, "-e", "stderr"]);
  started.push(program);
  await program.waitForLine(/start worker process \d+/, { stream: "stderr", timeoutMs: 20_000 });
  const version = /nginx\/(\S+)/.exec(spawnText("/usr/sbin/nginx", ["-v"]))?.[1];
  return { url: `http://127.0.0.1:${port}/`, versions: [`nginx ${version ?? "(version not printed)"}`, ...upstream.versions] };
}

/** A service's address and the programs behind it, as they said their versions. */
type Served = { url: string; versions: string[] };

async function haproxy(dir: string, upstream: Served, started: Started): Promise<Served> {
  const port = await freePort();
  const conf = join(dir, "haproxy.cfg");
  const backend = new URL(upstream.url);
  writeFileSync(
    conf,
    [
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
      `  server sleeper ${backend.host} maxconn 4`,
      "",
    ].join("\n"),
  );
  const program = new ChildProgram("haproxy", "/usr/sbin/haproxy", ["-db", "-f", conf]);
  started.push(program);
  await waitForPort(port, program);
  return { url: `http://127.0.0.1:${port}/`, versions: [haproxyVersion(), ...upstream.versions] };
}

async function apache(dir: string, upstream: Served, started: Started): Promise<Served> {
  const port = await freePort();
  const conf = join(dir, "apache2.conf");
  const modules = ["mpm_prefork", "proxy", "proxy_http", "authz_core"];
  writeFileSync(
    conf,
    [
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
      `ProxyPass / ${upstream.url}`,
      "",
    ].join("\n"),
  );
  const program = new ChildProgram("apache2", "/usr/sbin/apache2", ["-f", conf, "-DFOREGROUND"]);
  started.push(program);
  await waitForPort(port, program);
  return { url: `http://127.0.0.1:${port}/`, versions: [apacheVersion(), ...upstream.versions] };
}

function haproxyVersion(): string {
  return `haproxy ${/version (\S+)/i.exec(spawnText("/usr/sbin/haproxy", ["-v"]))?.[1] ?? "(unknown)"}`;
}

function apacheVersion(): string {
  return `apache2 ${/Apache\/(\S+)/.exec(spawnText("/usr/sbin/apache2", ["-v"]))?.[1] ?? "(unknown)"}`;
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
