/** What a command needs from the outside world, so commands can be tested in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<Buffer>;
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  },
};

/** Exit codes every command shares: 0 success, 1 a negative verdict (invalid, broken), 2 bad input or usage. */
export const EXIT = { ok: 0, negative: 1, usage: 2 } as const;

const BAD_INPUT: ReadonlySet<string> = new Set(['usage', 'config_invalid', 'input_invalid']);

/**
 * Whether an error code says the caller's input was wrong (exit 2): the arguments, a value, or a
 * strict-JSON refusal (every `json_*` code); `also` adds the codes a command family reads itself.
 */
export function isBadInput(code: string, also: readonly string[] = []): boolean {
  return BAD_INPUT.has(code) || code.startsWith('json_') || also.includes(code);
}
