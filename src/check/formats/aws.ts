import { type FlagSettings, SIM_FLAG_SPECS, simValuesFor } from "../../recommend/settings.ts";
import { findPreset, presetSettings } from "../../strategies/presets.ts";
import {
  CHECK_FLAGS,
  type CheckFlag,
  type ConfigFormat,
  ConfigFileError,
  type ConfigReading,
  type FieldReading,
  type PolicyReading,
  type UnmodeledField,
  type Written,
} from "../format.ts";

/*
 * The AWS shared config file (~/.aws/config): each [default] or [profile NAME] section is one
 * policy. Only two of its settings say how the SDKs retry: retry_mode and max_attempts (AWS
 * SDKs and Tools Reference Guide, "Retry behavior"); everything else about the backoff and the
 * retry quota is fixed by the mode, so a mode reads as one of our presets. Environment variables
 * (AWS_RETRY_MODE, AWS_MAX_ATTEMPTS) and code override the file; they are outside it and not read.
 */

const RETRY_GUIDE =
  'AWS SDKs and Tools Reference Guide, "Retry behavior", https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html';
const FILE_GUIDE =
  'AWS SDKs and Tools Reference Guide, "Shared config and credentials files", https://docs.aws.amazon.com/sdkref/latest/guide/file-format.html';
const BOTO3_RETRIES = 'Boto3 documentation, "Retries", https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html';

const RETRY_MODES = ["legacy", "standard", "adaptive"] as const;
type RetryMode = (typeof RETRY_MODES)[number];

/** Standard and adaptive make 3 attempts by default (the guide); legacy's is per SDK: botocore's (AWS CLI, boto3) is 5. */
const DEFAULT_ATTEMPTS: Readonly<Record<RetryMode, number>> = { standard: 3, adaptive: 3, legacy: 5 };

/**
 * Since November 10, 2026 the SDKs default to standard mode (AWS Developer Tools Blog, "Updated
 * default retry behavior for AWS SDKs and tools"); before, most defaulted to legacy.
 */
const DEFAULT_MODE: RetryMode = "standard";

const FLAG_TABLE = [...SIM_FLAG_SPECS.values()];

/** Standard mode as the SDKs have it since November 2026: the aws-standard preset, less its attempt count (max_attempts says that). */
function standardSettings(): FlagSettings {
  const { "max-attempts": _attempts, ...settings } = presetSettings(findPreset("aws-standard")!, FLAG_TABLE);
  return settings;
}

/**
 * botocore's legacy mode (the AWS CLI and boto3): retry n waits random() x 2^(n-1) seconds
 * (botocore retryhandler.delay_exponential, base "rand", growth factor 2): full jitter on 1 s,
 * with no ceiling and no retry quota. Our full jitter needs a ceiling: an hour, which binds from
 * the 13th retry on (its ceiling is 2^12 s).
 */
const LEGACY_SETTINGS: FlagSettings = { strategy: "full-jitter", "min-delay": "1s", "max-delay": "1h" };

const modeSettings = (mode: RetryMode): FlagSettings => (mode === "legacy" ? LEGACY_SETTINGS : standardSettings());

const STANDARD_APPROXIMATION =
  "standard mode as the SDKs have it since November 10, 2026 (our aws-standard preset: U(0, min(50ms x 2^(n-1), 20s)), a 500-token " +
  "quota, 14 tokens a retry); SDK releases from before wait on 100 ms and take 5 tokens a retry (preset aws-standard-pre-2026); " +
  "throttling errors' own 1 s base and 5-token cost are not modelled (every failure here is a transient one)";

const LEGACY_APPROXIMATION =
  "legacy mode differs per SDK; this is botocore's (AWS CLI, boto3): U(0, 1s x 2^(n-1)) with no retry quota and no ceiling " +
  "(1h stands for none: it binds from the 13th retry)";

/** Keys of a profile that change retries or timeouts and that we do not model, and why. */
const UNMODELED_KEYS: Readonly<Record<string, string>> = {
  defaults_mode:
    'smart configuration defaults ("Smart configuration defaults" in the AWS guide) set connect and TLS timeouts we do not model; ' +
    "their retry mode is standard, which the simulation assumes when retry_mode is absent",
  metadata_service_timeout: "the instance metadata service's timeout applies to fetching credentials, not to the calls simulated",
  metadata_service_num_attempts: "the instance metadata service's attempts apply to fetching credentials, not to the calls simulated",
};

// ---------------------------------------------------------------------------------------------
// The file, line by line

interface KeyLine {
  readonly key: string;
  readonly value: string;
  readonly line: number;
  /** Where the value sits on its line, so that an edit replaces only it (an inline comment stays). */
  readonly valueStart: number;
  readonly valueEnd: number;
}

interface Profile {
  /** `default`, or NAME of `[profile NAME]`. */
  readonly name: string;
  /** The section's own header, as written. */
  readonly header: string;
  readonly headerLine: number;
  /** The last line of the section that holds a setting (its header when it has none). */
  lastSettingLine: number;
  readonly keys: Map<string, KeyLine>;
}

interface IniFile {
  readonly lines: string[];
  readonly eol: string;
  readonly profiles: Profile[];
}

const SECTION = /^\s*\[\s*([^\]]*?)\s*\]\s*(?:[#;].*)?$/;
// A value ends before an inline comment: whitespace and then # or ;.
const SETTING = /^([A-Za-z0-9_.-]+)(\s*=\s*)(.*?)(\s+[#;].*)?\s*$/;
const COMMENT = /^\s*(?:[#;].*)?$/;

/** `default`, `profile NAME` (and `profile default`) are profiles; sso-session, services and other sections are not. */
function profileName(section: string): string | undefined {
  if (section === "default") return "default";
  const match = /^profile\s+(\S.*)$/.exec(section);
  return match?.[1];
}

function parseIni(text: string): IniFile {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(/\r?\n/);
  const profiles: Profile[] = [];
  let current: Profile | undefined;
  let inSection = false;
  lines.forEach((line, index) => {
    const section = SECTION.exec(line);
    if (section !== null) {
      inSection = true;
      const name = profileName(section[1]!);
      current = name === undefined ? undefined : { name, header: section[1]!, headerLine: index, lastSettingLine: index, keys: new Map() };
      // The SDKs disagree on a profile given twice (botocore refuses the file, the JavaScript SDK merges it): neither is guessed.
      const twice = profiles.find((profile) => profile.name === name);
      if (twice !== undefined)
        throw new ConfigFileError(
          `line ${index + 1}: [${section[1]}] again (first at line ${twice.headerLine + 1}): give each profile once`,
        );
      if (current !== undefined) profiles.push(current);
      return;
    }
    if (COMMENT.test(line)) return;
    // Indented lines are a nested setting's sub-settings (s3 = ...), which belong to the setting above.
    if (/^\s/.test(line)) {
      if (current !== undefined) current.lastSettingLine = index;
      return;
    }
    const setting = SETTING.exec(line);
    if (setting === null || !inSection)
      throw new ConfigFileError(`line ${index + 1}: "${line.trim()}" is not a setting (key = value) or a [section]`);
    if (current === undefined) return;
    const valueStart = setting[1]!.length + setting[2]!.length;
    const key = setting[1]!.toLowerCase();
    const before = current.keys.get(key);
    if (before !== undefined)
      throw new ConfigFileError(`line ${index + 1}: ${key} again in [${current.header}] (first at line ${before.line + 1})`);
    current.keys.set(key, { key, value: setting[3]!, line: index, valueStart, valueEnd: valueStart + setting[3]!.length });
    current.lastSettingLine = index;
  });
  return { lines, eol, profiles };
}

// ---------------------------------------------------------------------------------------------
// Reading

const where = (profile: Profile, key: string) => `[${profile.header}] ${key}`;

function retryModeOf(profile: Profile): RetryMode | undefined {
  const entry = profile.keys.get("retry_mode");
  if (entry === undefined) return undefined;
  const mode = entry.value.toLowerCase();
  if (!(RETRY_MODES as readonly string[]).includes(mode))
    throw new ConfigFileError(`${where(profile, "retry_mode")}: "${entry.value}" is not a retry mode, one of ${RETRY_MODES.join(", ")}`);
  return mode as RetryMode;
}

function maxAttemptsOf(profile: Profile): number | undefined {
  const entry = profile.keys.get("max_attempts");
  if (entry === undefined) return undefined;
  if (!/^\d+$/.test(entry.value) || Number(entry.value) < 1)
    throw new ConfigFileError(
      `${where(profile, "max_attempts")}: "${entry.value}" is not a number of attempts, a whole number of 1 or more`,
    );
  return Number(entry.value);
}

function modeField(profile: Profile, mode: RetryMode, explicit: boolean): FieldReading {
  return {
    field: where(profile, "retry_mode"),
    value: explicit ? profile.keys.get("retry_mode")!.value : `default (${mode})`,
    settings: modeSettings(mode),
    source: mode === "legacy" ? `${BOTO3_RETRIES}; ${RETRY_GUIDE}` : RETRY_GUIDE,
    approximation:
      (explicit ? "" : "absent: standard, the SDKs' default since November 10, 2026; most SDK releases from before default to legacy; ") +
      (mode === "legacy" ? LEGACY_APPROXIMATION : STANDARD_APPROXIMATION),
  };
}

function attemptsField(profile: Profile, mode: RetryMode, attempts: number | undefined): FieldReading {
  const count = attempts ?? DEFAULT_ATTEMPTS[mode];
  return {
    field: where(profile, "max_attempts"),
    value: attempts === undefined ? `default (${count})` : profile.keys.get("max_attempts")!.value,
    settings: { "max-attempts": String(count) },
    source: mode === "legacy" && attempts === undefined ? BOTO3_RETRIES : RETRY_GUIDE,
  };
}

function unmodeledOf(profile: Profile, mode: RetryMode): UnmodeledField[] {
  const unmodeled: UnmodeledField[] = [];
  if (mode === "adaptive")
    unmodeled.push({
      field: where(profile, "retry_mode"),
      value: "adaptive",
      why:
        "adaptive adds a client-side rate limiter fed by throttling errors, which is not modelled: every failure here is a " +
        "transient one, on which adaptive retries as standard does",
    });
  for (const [key, why] of Object.entries(UNMODELED_KEYS)) {
    const entry = profile.keys.get(key);
    if (entry !== undefined) unmodeled.push({ field: where(profile, key), value: entry.value, why });
  }
  return unmodeled;
}

function readProfile(profile: Profile): PolicyReading {
  const explicitMode = retryModeOf(profile);
  const mode = explicitMode ?? DEFAULT_MODE;
  const fields = [modeField(profile, mode, explicitMode !== undefined), attemptsField(profile, mode, maxAttemptsOf(profile))];
  return {
    name: profile.name === "default" ? "[default]" : `[profile ${profile.name}]`,
    settings: Object.assign({}, ...fields.map((field) => field.settings)) as FlagSettings,
    fields,
    unmodeled: unmodeledOf(profile, mode),
  };
}

function read(text: string): ConfigReading {
  const file = parseIni(text);
  if (file.profiles.length === 0) throw new ConfigFileError("not an AWS shared config file: it has no [default] or [profile NAME] section");
  return { policies: file.profiles.map(readProfile) };
}

// ---------------------------------------------------------------------------------------------
// Writing

/** The flags two settings are compared by: every flag a format may set. */
const COMPARED_FLAGS: readonly string[] = CHECK_FLAGS;

/** Whether two settings mean the same to the simulator, each flag compared as parsed (absent: our default). */
export function sameMeaning(a: FlagSettings, b: FlagSettings, ignoring: readonly CheckFlag[] = []): boolean {
  const left = simValuesFor({}, a) as Record<string, unknown>;
  const right = simValuesFor({}, b) as Record<string, unknown>;
  return COMPARED_FLAGS.every((flag) => (ignoring as readonly string[]).includes(flag) || left[flag] === right[flag]);
}

/** The retry mode whose fixed settings `target` has, if any. */
function modeOfTarget(target: FlagSettings): "standard" | "legacy" | undefined {
  if (sameMeaning(target, standardSettings(), ["max-attempts"])) return "standard";
  if (sameMeaning(target, LEGACY_SETTINGS, ["max-attempts"])) return "legacy";
  return undefined;
}

/** The lines with `key` set to `value` in `profile`: in place when present, else as a new line after the section's last setting. */
function setKey(file: IniFile, profile: Profile, key: string, value: string): void {
  const entry = profile.keys.get(key);
  if (entry !== undefined) {
    const line = file.lines[entry.line]!;
    file.lines[entry.line] = line.slice(0, entry.valueStart) + value + line.slice(entry.valueEnd);
    return;
  }
  // Written as the section's first setting writes its "=", so that the new line looks like its neighbours.
  const first = [...profile.keys.values()][0];
  const equals = first === undefined ? " = " : SETTING.exec(file.lines[first.line]!)![2]!;
  file.lines.splice(profile.lastSettingLine + 1, 0, `${key}${equals}${value}`);
}

const inexpressible = (why: string): Written => ({ kind: "inexpressible", why });

function write(text: string, policyIndex: number, target: FlagSettings): Written {
  const file = parseIni(text);
  const profile = file.profiles[policyIndex];
  if (profile === undefined) throw new Error(`the file has no policy ${policyIndex}`);
  readProfile(profile); // a wrong value is the user's ConfigFileError here too
  const attempts = Number(target["max-attempts"] ?? "0");
  if (attempts < 1) return inexpressible("AWS SDKs need a number of attempts (max_attempts, 1 or more); the target has no limit");
  const wanted = modeOfTarget(target);
  if (wanted === undefined)
    return inexpressible(
      "the AWS config file chooses only retry_mode and max_attempts: its backoff and retry quota are standard mode's " +
        "(full jitter on 50ms up to 20s, a 500-token quota at 14 a retry) or legacy's (botocore: full jitter on 1s), and the target is neither",
    );
  const current = retryModeOf(profile);
  const effective = current ?? DEFAULT_MODE;
  // Adaptive is standard to the simulation: it stays, rather than turning into standard.
  const mode: RetryMode = wanted === "standard" && effective === "adaptive" ? "adaptive" : wanted;
  // Edits go in from the bottom of the section up, so that an inserted line moves no line yet to be edited.
  if (Number(profile.keys.get("max_attempts")?.value ?? DEFAULT_ATTEMPTS[mode]) !== attempts)
    setKey(file, profile, "max_attempts", String(attempts));
  if (mode !== effective) setKey(file, profile, "retry_mode", mode);
  return { kind: "written", text: file.lines.join(file.eol), notes: [] };
}

export const awsFormat: ConfigFormat = {
  name: "aws",
  title: "AWS shared config file (~/.aws/config)",
  source: `${FILE_GUIDE}; ${RETRY_GUIDE}`,
  recognizes: (text) => /^\s*\[\s*(default|profile\s+[^\]]+)\]\s*$/m.test(text) && !/^\s*[{<]/.test(text),
  read,
  write,
  knobs: ["max-attempts"],
};
