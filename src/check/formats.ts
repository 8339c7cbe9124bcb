import { InputFileError, UsageError } from "../cli/usage-error.ts";
import { type ConfigFormat, ConfigFileError, type ConfigReading } from "./format.ts";
import { awsFormat } from "./formats/aws.ts";
import { cockatielFormat } from "./formats/cockatiel.ts";
import { pRetryFormat } from "./formats/p-retry.ts";
import { pollyFormat } from "./formats/polly.ts";
import { envoyFormat } from "./formats/envoy.ts";
import { grpcFormat } from "./formats/grpc.ts";
import { istioFormat } from "./formats/istio.ts";
import { resilience4jFormat } from "./formats/resilience4j.ts";

/** Every format check reads, one file each; the first that recognizes a file reads it, unless -format names one. */
export const CONFIG_FORMATS: readonly ConfigFormat[] = [
  grpcFormat,
  istioFormat,
  envoyFormat,
  awsFormat,
  resilience4jFormat,
  pollyFormat,
  cockatielFormat,
  pRetryFormat,
];

/** A configuration file is a few KB: one far larger is not one (and is refused before it is parsed). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The format named, or the first that recognizes the text; an InputFileError naming the file otherwise. */
export function formatOf(file: string, text: string, named: string | undefined, formats = CONFIG_FORMATS): ConfigFormat {
  if (named !== undefined) {
    const format = formats.find((candidate) => candidate.name === named);
    if (format === undefined) {
      throw new UsageError(`invalid value "${named}" for flag -format: no such format (${formats.map((known) => known.name).join(", ")})`);
    }
    return format;
  }
  const format = formats.find((candidate) => candidate.recognizes(text));
  if (format === undefined) {
    throw new InputFileError(
      `${file}: not a retry configuration check reads (${formats.map((known) => known.title).join("; ")}); -format names one`,
    );
  }
  return format;
}

/** The file's policies as `format` reads them; a wrong field is one InputFileError line naming the file and the format. */
export function readConfig(file: string, text: string, format: ConfigFormat): ConfigReading {
  try {
    const reading = format.read(text);
    if (reading.policies.length === 0) throw new ConfigFileError("no retry policy in it");
    return reading;
  } catch (error) {
    if (error instanceof ConfigFileError) throw new InputFileError(`${file}: ${format.title}: ${error.message}`);
    // A parser that recursed past the stack: the file is nested past what any reader here takes, whatever the shape check saw.
    if (error instanceof RangeError && /call stack/i.test(error.message))
      throw new InputFileError(`${file}: ${format.title}: nested too deeply to read`);
    throw error;
  }
}
