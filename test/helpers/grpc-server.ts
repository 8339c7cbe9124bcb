import * as grpc from "@grpc/grpc-js";

/*
 * A real gRPC server on loopback with one unary method, for the tests that run grpc-js's own
 * retries against it (choose's snippets, check's gRPC format).
 */

const identity = (value: Buffer) => value;

/** One unary method, `/<service>/<method>`, whose messages are raw bytes. */
export function unaryDefinition(service: string, method: string): grpc.ServiceDefinition {
  return {
    [method]: {
      path: `/${service}/${method}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

export type Answer = (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => void;

/** Answers every call UNAVAILABLE, the status a retry policy retries. */
export const unavailable: Answer = (_call, callback) => callback({ code: grpc.status.UNAVAILABLE, details: "unavailable on purpose" });

/** A server on 127.0.0.1:0 whose one method records each arrival (performance.now()), then answers as `answer` says. */
export async function startUnaryServer(
  definition: grpc.ServiceDefinition,
  answer: Answer,
): Promise<{ port: number; arrivals: number[]; stop: () => Promise<void> }> {
  const server = new grpc.Server();
  const arrivals: number[] = [];
  const [method] = Object.keys(definition);
  server.addService(definition, {
    [method!]: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      arrivals.push(performance.now());
      answer(call, callback);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { port, arrivals, stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}
