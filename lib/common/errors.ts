/**
 * @module errors
 * The few error classes of the program. Each message says what is wrong and what to do;
 * `main.ts` prints it as one line and picks the exit code from the class.
 */

/** The command line is wrong (unknown option, bad value). Exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The environment is wrong at start-up (missing file, unreadable certificate, no cluster). Exit code 1. */
export class SetupError extends Error {
  override name = "SetupError";
}

/**
 * One cluster object cannot be handled (invalid host, unknown service port, template failure).
 * Never fatal: the object gets an Event and the others go on.
 */
export class ObjectError extends Error {
  override name = "ObjectError";
  constructor(readonly object: string, message: string) {
    super(`${object}: ${message}`);
  }
}

/** Exit code for an error thrown out of a command. */
export function exitCodeOf(err: unknown): number {
  return err instanceof UsageError ? 2 : 1;
}

/** An error's message on one line (runs of white space, newlines included, become one space). */
export function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
}
